// Whether a webhook is called for a request, as the platform decides: its
// rules (operations, groups, versions, resources with sub-resources, scope)
// against the request, or with matchPolicy Equivalent against another version
// of the same resource; then its namespace and object selectors. The answer
// names the version the webhook is called with.
import { group } from '../../names/index.js';
import type { KindDef, Registry } from '../../registry/index.js';
import { selectorMatches } from '../../registry/values.js';
import type { AdmissionRequest, JsonObject } from '../types.js';
import type { Hook, Rule } from './hooks.js';

/** The version a webhook sees the request in. */
export interface Invocation {
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  /** Converts an object of the request's version to this version and back; absent when they are the same. */
  convert?: { to(obj: JsonObject): Promise<JsonObject>; back(obj: JsonObject): Promise<JsonObject> };
}

interface Target { group: string; version: string; resource: string; subresource: string; namespace: string; operation: string }

const anyOr = (list: string[], value: string) => list.includes('*') || list.includes(value);

function resourceMatches(rule: Rule, resource: string, subresource: string): boolean {
  return rule.resources.some((entry) => {
    const slash = entry.indexOf('/');
    const [res, sub] = slash < 0 ? [entry, ''] : [entry.slice(0, slash), entry.slice(slash + 1)];
    return (res === '*' || res === resource) && (sub === '*' || sub === subresource);
  });
}

function scopeMatches(rule: Rule, t: Target): boolean {
  if (rule.scope === 'Cluster') return t.namespace === '';
  if (rule.scope === 'Namespaced') return t.namespace !== '';
  return true;
}

function ruleMatches(rule: Rule, t: Target): boolean {
  return anyOr(rule.operations, t.operation) && anyOr(rule.apiGroups, t.group) && anyOr(rule.apiVersions, t.version)
    && resourceMatches(rule, t.resource, t.subresource) && scopeMatches(rule, t);
}

const storageKey = (def: KindDef) => `${def.storageGroup ?? def.group}/${def.resource}`;

/** The resources served in several versions (or groups) over one storage, e.g. autoscaling/v1 and v2. */
export class EquivalentResources {
  private byStorage?: Map<string, KindDef[]>;

  /** The registry's kinds: built-in ones, and custom ones as CustomResourceDefinitions come and go. */
  constructor(private readonly registry: Registry) {
    registry.onChange(() => { this.byStorage = undefined; });
  }

  private index(): Map<string, KindDef[]> {
    if (this.byStorage) return this.byStorage;
    const byStorage = new Map<string, KindDef[]>();
    for (const def of this.registry.all()) {
      const list = byStorage.get(storageKey(def)) ?? [];
      list.push(def);
      byStorage.set(storageKey(def), list);
    }
    return (this.byStorage = byStorage);
  }

  /** The other kinds over the storage of the requested one; none for kinds the registry does not know. */
  of(group: string, version: string, resource: string): { from: KindDef; others: KindDef[] } | undefined {
    const from = this.registry.lookup(group, version, resource);
    if (!from) return undefined;
    return { from, others: (this.index().get(storageKey(from)) ?? []).filter((d) => d !== from) };
  }
}

const apiVersionOf = (def: KindDef) => (def.group ? `${def.group}/${def.version}` : def.version);

/** Converts as the server does between versions: through the storage version, or by the kind's conversion webhook. */
function converter(from: KindDef, to: KindDef): Invocation['convert'] {
  const via = (a: KindDef, b: KindDef) => async (obj: JsonObject): Promise<JsonObject> => {
    const copy = structuredClone(obj) as never;
    const webhook = a.convert ?? b.convert;
    if (webhook) return (await webhook([copy], apiVersionOf(b)))[0] as JsonObject;
    const stored = a.toStorage ? a.toStorage(copy) : copy;
    return (b.fromStorage ? b.fromStorage(stored) : stored) as JsonObject;
  };
  return { to: via(from, to), back: via(to, from) };
}

/** The invocation of a webhook whose rules match the request, directly or through an equivalent version. */
export function matchRules(hook: Hook, req: AdmissionRequest, equivalents: EquivalentResources): Invocation | undefined {
  if (isExempt(req)) return undefined;
  const target: Target = { ...req.resource, subresource: req.subresource, namespace: req.namespace, operation: req.operation };
  if (hook.rules.some((r) => ruleMatches(r, target))) return { kind: req.kind, resource: req.resource };
  // Other versions share the object and its status, not other sub-resources (whose kinds differ).
  if (hook.matchPolicy !== 'Equivalent' || (req.subresource !== '' && req.subresource !== 'status')) return undefined;
  const equivalent = equivalents.of(req.resource.group, req.resource.version, req.resource.resource);
  for (const def of equivalent?.others ?? []) {
    const other = { ...target, group: def.group, version: def.version, resource: def.resource };
    if (!hook.rules.some((r) => ruleMatches(r, other))) continue;
    return {
      kind: { group: def.group, version: def.version, kind: def.kind },
      resource: { group: def.group, version: def.version, resource: def.resource },
      convert: converter(equivalent!.from, def),
    };
  }
  return undefined;
}

const labelsOf = (obj: JsonObject | undefined) => (obj?.metadata as { labels?: Record<string, string> } | undefined)?.labels;

/** The object selector against the object's or the old object's labels. */
export function objectSelected(hook: Hook, req: AdmissionRequest): boolean {
  if (!hook.objectSelector) return true;
  return [req.object, req.oldObject].some((o) => o !== undefined && selectorMatches(hook.objectSelector, labelsOf(o) ?? {}));
}

/** The namespace selector against the labels of the request's namespace (of a Namespace, its own). */
export function namespaceSelected(hook: Hook, labels: Record<string, string> | undefined): boolean {
  return !hook.namespaceSelector || selectorMatches(hook.namespaceSelector, labels ?? {});
}

const ADMISSION_REGISTRATION = group('admissionregistration');
/** The admission configuration kinds, which no webhook sees: a broken webhook could never be fixed or removed. */
const EXEMPT = new Set(['mutatingwebhookconfigurations', 'validatingwebhookconfigurations', 'validatingadmissionpolicies',
  'validatingadmissionpolicybindings', 'mutatingadmissionpolicies', 'mutatingadmissionpolicybindings']);

export const isExempt = (req: AdmissionRequest): boolean => req.resource.group === ADMISSION_REGISTRATION && EXEMPT.has(req.resource.resource);

/** Whether the request is about a Namespace itself, whose own labels its namespace selector reads. */
export const isNamespaceRequest = (req: AdmissionRequest): boolean => req.resource.group === '' && req.resource.resource === 'namespaces';
