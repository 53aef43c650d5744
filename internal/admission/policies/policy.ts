// What validating and mutating admission policies share: policies and bindings
// kept in memory from storage's change stream and compiled once per generation,
// the match of a request by a policy and its bindings, the binding's parameters,
// match conditions and variables.
import type { ApiObject } from '../../apimachinery/meta.js';
import { fromJson, type CostBudget } from '../../cel/index.js';
import { group } from '../../names/index.js';
import type { StorageClient } from '../../storage/client.js';
import { collectionPrefix } from '../../storage/keys.js';
import { decodeObject, Reflector } from '../../storage/reflector.js';
import type { NamespaceCache } from '../namespaces.js';
import type { AdmissionRequest } from '../types.js';
import { RequestAuthorizer } from './authorizer.js';
import type { Authorize } from '../authz-client.js';
import { compileExpression, ExpressionError, run, runBool, type Compiled } from './expressions.js';
import { ResourceMatcher, type NamespaceLabels } from './matching.js';
import { ParamError, type ParamSource } from './params.js';

export type Obj = Record<string, any>;
export const ADMISSIONREGISTRATION = group('admissionregistration');

/** Policies and webhooks never apply to the kinds that configure them (so a bad one can always be fixed). */
const EXEMPT = new Set(['mutatingwebhookconfigurations', 'validatingwebhookconfigurations', 'validatingadmissionpolicies',
  'validatingadmissionpolicybindings', 'mutatingadmissionpolicies', 'mutatingadmissionpolicybindings']);
export const isExempt = (r: AdmissionRequest): boolean => r.resource.group === ADMISSIONREGISTRATION && EXEMPT.has(r.resource.resource);

export interface Named extends Compiled { readonly name: string }

/** The parts of a policy every kind of policy has, compiled. */
export interface PolicyCore {
  readonly name: string;
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly paramKind?: Obj;
  readonly match: ResourceMatcher;
  readonly matchConditions: Named[];
  readonly variables: Named[];
}

export function compileCore(policy: ApiObject): PolicyCore {
  const spec = (policy.spec ?? {}) as Obj;
  const named = (list: unknown, field: string): Named[] => (Array.isArray(list) ? list : [])
    .map((c: Obj) => ({ name: String(c.name ?? ''), ...compileExpression(String(c[field] ?? '')) }));
  return {
    name: policy.metadata?.name ?? '',
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    paramKind: spec.paramKind ?? undefined,
    match: new ResourceMatcher(spec.matchConstraints, false),
    matchConditions: named(spec.matchConditions, 'expression'),
    variables: named(spec.variables, 'expression'),
  };
}

export interface Binding {
  readonly name: string;
  readonly policyName: string;
  readonly paramRef?: Obj;
  readonly match?: ResourceMatcher;
  readonly spec: Obj;
}

function bindingOf(obj: ApiObject): Binding {
  const spec = (obj.spec ?? {}) as Obj;
  return {
    name: obj.metadata?.name ?? '', policyName: String(spec.policyName ?? ''), paramRef: spec.paramRef ?? undefined,
    match: spec.matchResources ? new ResourceMatcher(spec.matchResources, true) : undefined, spec,
  };
}

const generationKey = (o: ApiObject): string => `${o.metadata?.uid}/${o.metadata?.generation ?? o.metadata?.resourceVersion}`;

/** Policies of one kind and their bindings, from memory; each policy compiled once per generation. */
export class PolicySet<P extends PolicyCore> {
  private readonly policies: Reflector<{ key: string; compiled: () => P }>;
  private readonly bindings: Reflector<Binding>;

  /** params: the policies' parameter kinds are followed from the moment a policy names them. */
  constructor(storage: StorageClient, resources: { policies: string; bindings: string }, compilePolicy: (o: ApiObject) => P, params: ParamSource) {
    const cache = new Map<string, P>();
    this.policies = new Reflector(storage, collectionPrefix(ADMISSIONREGISTRATION, resources.policies), {
      deleted: (_key, p) => cache.delete(p.key),
    }, (kv) => {
      const obj = decodeObject(kv);
      params.prepare((obj.spec as Obj | undefined)?.paramKind ?? undefined);
      const key = generationKey(obj);
      return { key, compiled: () => { let p = cache.get(key); if (!p) cache.set(key, p = compilePolicy(obj)); return p; } };
    });
    this.bindings = new Reflector(storage, collectionPrefix(ADMISSIONREGISTRATION, resources.bindings), {}, (kv) => bindingOf(decodeObject(kv)));
  }

  start(): this {
    this.policies.start();
    this.bindings.start();
    return this;
  }

  stop(): void {
    this.policies.stop();
    this.bindings.stop();
  }

  /** Every policy with its bindings, in name order (the order they are evaluated). */
  *bound(): Generator<{ policy: P; bindings: Binding[] }> {
    const byPolicy = new Map<string, Binding[]>();
    for (const b of this.bindings.items.values()) byPolicy.set(b.policyName, [...byPolicy.get(b.policyName) ?? [], b]);
    const policies = [...this.policies.items.values()].map((p) => p.compiled()).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const policy of policies) {
      const bindings = byPolicy.get(policy.name);
      if (bindings) yield { policy, bindings: bindings.sort((a, b) => (a.name < b.name ? -1 : 1)) };
    }
  }
}

/** The request as expressions see it (`request`). */
export function requestValue(r: AdmissionRequest): Obj {
  const extra = Object.fromEntries(Object.entries(r.user.extra ?? {}).map(([k, v]) => [k, v.values ?? []]));
  return {
    uid: r.uid, kind: r.kind, resource: r.resource, subResource: r.subresource,
    requestKind: r.kind, requestResource: r.resource, requestSubResource: r.subresource,
    name: r.name, namespace: r.namespace, operation: r.operation,
    userInfo: { username: r.user.username, uid: r.user.uid, groups: r.user.groups, extra },
    dryRun: r.dryRun, options: r.options ?? null,
  };
}

const isNamespace = (r: AdmissionRequest): boolean => r.resource.group === '' && r.resource.resource === 'namespaces';

/** What every policy evaluated for one request shares. */
export interface RequestContext {
  readonly request: AdmissionRequest;
  readonly authorizer: RequestAuthorizer;
  readonly namespaceLabels: NamespaceLabels;
  /** object, oldObject, request, namespaceObject and authorizer, converted once. */
  readonly activation: Readonly<Record<string, unknown>>;
}

export async function requestContext(request: AdmissionRequest, namespaces: NamespaceCache, authorize?: Authorize): Promise<RequestContext> {
  const namespaced = request.namespace !== '' && !isNamespace(request);
  const namespace = namespaced ? (await namespaces.get(request.namespace))?.namespace : undefined;
  const authorizer = new RequestAuthorizer(request.user, authorize);
  const namespaceLabels: NamespaceLabels = async (r) => {
    if (isNamespace(r)) return ((r.object ?? r.oldObject)?.metadata as Obj | undefined)?.labels ?? {};
    return namespaced ? namespace?.metadata?.labels ?? {} : undefined;
  };
  return {
    request, authorizer, namespaceLabels,
    activation: {
      object: fromJson(request.object ?? null), oldObject: fromJson(request.oldObject ?? null), request: requestValue(request),
      namespaceObject: fromJson(namespace ?? null), authorizer: authorizer.binding,
    },
  };
}

/** Whether a policy and binding apply to the request. */
export async function applies(policy: PolicyCore, binding: Binding, ctx: RequestContext): Promise<boolean> {
  return await policy.match.matches(ctx.request, ctx.namespaceLabels)
    && (!binding.match || await binding.match.matches(ctx.request, ctx.namespaceLabels));
}

/** The parameters each evaluation runs with: [null] without paramKind, none when missing and allowed. */
export async function paramsFor(policy: PolicyCore, binding: Binding, request: AdmissionRequest, source: ParamSource): Promise<Array<ApiObject | null>> {
  // A binding without paramRef evaluates its policy without params, even when the policy has a paramKind.
  if (!policy.paramKind || !binding.paramRef) return [null];
  const params = await source.find(policy.paramKind, binding.paramRef, request.namespace);
  if (params.length > 0) return params;
  if (binding.paramRef.parameterNotFoundAction === 'Allow') return [];
  throw new ParamError('no params found for policy binding with `Deny` parameterNotFoundAction');
}

/** Match conditions: any false skips the policy; else an error fails it; else it applies. */
export function matchConditions(policy: PolicyCore, activation: Readonly<Record<string, unknown>>, budget: CostBudget): boolean {
  let failure: string | undefined;
  for (const c of policy.matchConditions) {
    try {
      if (!runBool(c, activation, budget)) return false;
    } catch (err) {
      if (!(err instanceof ExpressionError)) throw err;
      failure ??= `failed to evaluate match condition '${c.name}': ${err.message}`;
    }
  }
  if (failure) throw new ExpressionError(failure);
  return true;
}

/** The `variables` map, in declaration order (each may use the ones before); a failing one is left out. */
export function composeVariables(policy: PolicyCore, activation: Record<string, unknown>, budget: CostBudget): Map<string, unknown> {
  const variables = new Map<string, unknown>();
  activation.variables = variables;
  for (const v of policy.variables) {
    try {
      variables.set(v.name, run(v, activation, budget));
    } catch (err) {
      if (!(err instanceof ExpressionError)) throw err;
    }
  }
  return variables;
}
