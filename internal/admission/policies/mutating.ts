// MutatingAdmissionPolicy (behind its feature gate): each matching policy,
// binding and parameter applies its mutations in order to the object, an
// apply configuration merged as server-side apply merges, or a JSON patch.
// In the chain's second pass only the invocations reinvocation.ts marks run
// again.
import type { ApiObject } from '../../apimachinery/meta.js';
import { StatusError } from '../../apimachinery/status.js';
import { fromJson, stringifyValue } from '../../cel/index.js';
import { applyJsonPatch, mergeApplied, rootType, UNTYPED, type TypeNode } from '../../patch/index.js';
import { deepEqual } from '../../registry/values.js';
import type { StorageClient } from '../../storage/client.js';
import type { Authorize } from '../authz-client.js';
import type { NamespaceCache } from '../namespaces.js';
import { RequestReinvocation } from '../reinvocation.js';
import { AdmissionError, type AdmissionPlugin, type AdmissionRequest, type JsonObject, type Operation, type PluginAnswer, type Reinvocation } from '../types.js';
import { ConstructionError, rewriteConstructions } from './construction.js';
import { compileExpression, ExpressionError, policyBudget, run, type Compiled } from './expressions.js';
import type { CheckErrorType, MutatingPolicyMetrics } from './metrics.js';
import { ParamError, ParamSource } from './params.js';
import {
  applies, compileCore, composeVariables, isExempt, matchConditions, paramsFor, PolicySet, requestContext,
  type Binding, type Obj, type PolicyCore, type RequestContext,
} from './policy.js';

export const MUTATING_ADMISSION_POLICY = 'MutatingAdmissionPolicy';

export interface Mutation { readonly jsonPatch: boolean; readonly compiled: Compiled }

interface MutatingPolicy extends PolicyCore {
  readonly mutations: Mutation[];
  readonly reinvoke: boolean;
}

export function compileMutation(m: Obj): Mutation {
  const jsonPatch = m.patchType === 'JSONPatch';
  const expression = String((jsonPatch ? m.jsonPatch : m.applyConfiguration)?.expression ?? '');
  try {
    return { jsonPatch, compiled: { ...compileExpression(rewriteConstructions(expression)), expression } };
  } catch (err) {
    if (!(err instanceof ConstructionError)) throw err;
    return { jsonPatch, compiled: { expression, error: err.message } };
  }
}

export function compileMutatingPolicy(obj: ApiObject): MutatingPolicy {
  const spec = (obj.spec ?? {}) as Obj;
  return {
    ...compileCore(obj),
    mutations: (Array.isArray(spec.mutations) ? spec.mutations : []).map(compileMutation),
    reinvoke: spec.reinvocationPolicy === 'IfNeeded',
  };
}

/** An expression value as JSON. */
const toJson = (v: unknown): unknown => JSON.parse(stringifyValue(v));
const isMap = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The operations a JSONPatch expression built, as RFC 6902 operations. */
function patchOperations(value: unknown): Obj[] {
  if (!Array.isArray(value) || !value.every((op) => isMap(op) && typeof op.op === 'string' && typeof op.path === 'string')) {
    throw new ExpressionError('type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch');
  }
  return value.map(({ op, path, from, value: v }) => ({ op, path, ...(from ? { from } : {}), ...(v !== undefined ? { value: v } : {}) }));
}

/** Where an apply configuration sets a value the schema declares atomic (which it would replace whole). */
function atomicPaths(v: unknown, t: TypeNode, path = ''): string[] {
  if (t.kind === 'untyped' || t.kind === 'scalar') return [];
  const own = t.relation === 'atomic' && (isMap(v) || Array.isArray(v)) ? [path] : [];
  if (isMap(v) && t.kind === 'map') {
    return [...own, ...Object.entries(v).flatMap(([k, x]) => atomicPaths(x, t.field(k) ?? t.element(), `${path}.${k}`))];
  }
  if (Array.isArray(v) && t.kind === 'list') return [...own, ...v.flatMap((x, i) => atomicPaths(x, t.element(), `${path}[${i}]`))];
  return own;
}

function applyConfiguration(object: JsonObject, value: unknown): JsonObject {
  if (!isMap(value)) throw new ExpressionError('type mismatch: ApplyConfiguration.expression should evaluate to an Object');
  const apiVersion = String(object.apiVersion ?? '');
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const type = rootType({ group, version, kind: String(object.kind ?? '') }) ?? UNTYPED;
  const atomics = atomicPaths(value, type);
  if (atomics.length) throw new ExpressionError(`invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(', ')}`);
  return mergeApplied(object, { ...value, apiVersion: object.apiVersion, kind: object.kind }, type) as JsonObject;
}

/** A JSON patch; one whose `test` fails leaves the object as it was. */
function jsonPatch(object: JsonObject, value: unknown): JsonObject {
  try {
    return applyJsonPatch(object, patchOperations(value));
  } catch (err) {
    if (!(err instanceof StatusError)) throw err;
    const detail = err.details?.causes?.[0]?.message ?? err.message;
    if (/^testing value .* failed/.test(detail)) return object;
    throw new ExpressionError(`JSON Patch: ${detail}`);
  }
}

export function mutate(m: Mutation, object: JsonObject, activation: Readonly<Record<string, unknown>>, budget: ReturnType<typeof policyBudget>): JsonObject {
  const value = toJson(run(m.compiled, activation, budget));
  return m.jsonPatch ? jsonPatch(object, value) : applyConfiguration(object, value);
}

/** One policy, binding and parameter to apply. */
interface Invocation { policy: MutatingPolicy; binding: Binding; param: ApiObject | null }

/** An invocation's name in a request's reinvocation state: its policy, binding and parameter. */
const invocationKey = ({ policy, binding, param }: Invocation): string =>
  JSON.stringify([policy.name, binding.name, param?.metadata?.namespace ?? '', param?.metadata?.name ?? '']);

/** A failure of one invocation; the policy's failurePolicy decides whether it refuses. */
interface Failure { invocation: Invocation; message: string; reason: string }

export class MutatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = MUTATING_ADMISSION_POLICY;
  readonly phase = 'mutating' as const;
  private readonly policies: PolicySet<MutatingPolicy>;
  private readonly params: ParamSource;

  constructor(storage: StorageClient, private readonly namespaces: NamespaceCache, private readonly authorize?: Authorize,
    private readonly metrics?: MutatingPolicyMetrics) {
    this.params = new ParamSource(storage);
    this.policies = new PolicySet(storage, { policies: 'mutatingadmissionpolicies', bindings: 'mutatingadmissionpolicybindings' },
      compileMutatingPolicy, this.params).start();
  }

  handles(operation: Operation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  async admit(request: AdmissionRequest, reinvocation: Reinvocation = new RequestReinvocation()): Promise<PluginAnswer | void> {
    if (isExempt(request) || !request.object) return;
    let ctx: RequestContext | undefined;
    const invocations: Invocation[] = [];
    const failures: Failure[] = [];
    for (const { policy, bindings } of this.policies.bound()) {
      for (const binding of bindings) {
        ctx ??= await requestContext(request, this.namespaces, this.authorize);
        if (!await applies(policy, binding, ctx)) continue;
        try {
          for (const param of await paramsFor(policy, binding, request, this.params)) invocations.push({ policy, binding, param });
        } catch (err) {
          if (!(err instanceof ParamError)) throw err;
          failures.push({ invocation: { policy, binding, param: null }, message: `failed to configure binding: ${err.message}`, reason: '' });
        }
      }
    }
    if (!ctx) return;
    const tracker = reinvocation.tracker(this.name);
    let object = request.object;
    let changed = false;
    for (const inv of invocations) {
      const key = invocationKey(inv);
      if (!tracker.shouldRun(key)) continue;
      const { result, matched } = await this.invoke(inv, object, ctx, failures);
      // Policies whose match conditions left the object out did not run (nor run again).
      if (!matched) continue;
      const mutated = !deepEqual(result, object);
      tracker.ran(key, mutated, inv.policy.reinvoke);
      changed ||= mutated;
      object = result;
    }
    const refusal = failures.filter((f) => f.invocation.policy.failurePolicy === 'Fail');
    if (refusal.length) throw refusalOf(refusal);
    return changed ? { object } : undefined;
  }

  /**
   * Applies one invocation's mutations in order; a mutation that fails is recorded and skipped.
   * matched: its match conditions held (an error evaluating them is recorded and counts as not matched).
   */
  private async invoke(invocation: Invocation, object: JsonObject, ctx: RequestContext, failures: Failure[]): Promise<{ result: JsonObject; matched: boolean }> {
    const { policy, param } = invocation;
    // Evaluated again while the authorizer learns answers: only the last round's failures count.
    const { result, matched, errors, checks } = await ctx.authorizer.settle(() => {
      const errors: string[] = [];
      const checks: Array<[CheckErrorType, number]> = [];
      const fail = (err: unknown) => {
        if (!(err instanceof ExpressionError)) throw err;
        errors.push(err.message);
        return err.errorType;
      };
      const budget = policyBudget();
      const activation: Record<string, unknown> = { ...ctx.activation, object: fromJson(object), params: fromJson(param) };
      try {
        if (!matchConditions(policy, activation, budget)) return { result: object, matched: false, errors, checks };
      } catch (err) {
        fail(err);
        return { result: object, matched: false, errors, checks };
      }
      composeVariables(policy, activation, budget);
      let current = object;
      for (const m of policy.mutations) {
        const started = performance.now();
        let errorType: CheckErrorType = 'no_error';
        try {
          current = mutate(m, current, activation, budget);
          activation.object = fromJson(current);
        } catch (err) {
          errorType = fail(err);
        }
        checks.push([errorType, (performance.now() - started) / 1000]);
      }
      return { result: current, matched: true, errors, checks };
    });
    // As the platform counts: every mutation evaluated, by its outcome.
    for (const [errorType, seconds] of checks) this.metrics?.observe(policy.name, invocation.binding.name, errorType, seconds);
    failures.push(...errors.map((message) => ({ invocation, message, reason: 'Invalid' })));
    return { result, matched };
  }

  stop(): void {
    this.policies.stop();
    this.params.stop();
  }
}

/** The plugin while its feature gate is off: registered, never called. */
export const inertMutatingAdmissionPolicy: AdmissionPlugin = {
  name: MUTATING_ADMISSION_POLICY, phase: 'mutating', handles: () => false, admit: async () => undefined,
};

/** A refusal as the platform words policy errors: Forbidden's code, the first error's message and reason, every error a cause. */
function refusalOf(failures: Failure[]): AdmissionError {
  const messages = failures.map(({ invocation: { policy, binding }, message }) => `policy '${policy.name}' with binding '${binding.name}' denied request: ${message}`);
  return new AdmissionError(403, failures[0].reason || 'Forbidden', messages[0], messages.map((message) => ({ type: '', message, field: '' })));
}
