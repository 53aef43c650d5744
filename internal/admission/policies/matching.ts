// Which requests a policy (matchConstraints) or binding (matchResources) is
// about: resource rules less the excluded ones, a namespace selector and an
// object selector, with matchPolicy Equivalent catching the same resource
// through another version. Built once per policy or binding generation.
import { formatLabelSelector, parseLabelSelector, type Matcher } from '../../apimachinery/selectors.js';
import { resourceTable } from '../../registry/resources.js';
import type { AdmissionRequest, JsonObject } from '../types.js';

type Obj = Record<string, any>;
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

interface Rule {
  operations: string[];
  groups: string[];
  versions: string[];
  resources: string[];
  scope: string;
  names: string[];
}

const ruleOf = (r: Obj): Rule => ({
  operations: strings(r.operations), groups: strings(r.apiGroups), versions: strings(r.apiVersions),
  resources: strings(r.resources), scope: typeof r.scope === 'string' ? r.scope : '*', names: strings(r.resourceNames),
});

/** What a rule is checked against: the request, or the request seen through an equivalent version. */
interface Target { group: string; version: string; resource: string; subresource: string; namespace: string; name: string; operation: string }

function resourceMatches(patterns: string[], resource: string, subresource: string): boolean {
  const full = subresource ? `${resource}/${subresource}` : resource;
  return patterns.some((p) => {
    if (p === '*/*' || p === full) return true;
    const [r, s] = p.split('/');
    if (s === undefined) return r === '*' && !subresource;
    return (r === '*' && s === subresource) || (r === resource && s === '*');
  });
}

function scopeMatches(scope: string, t: Target): boolean {
  if (scope === '*') return true;
  // A Namespace is cluster-scoped, though its requests carry its name as their namespace.
  const namespaced = t.namespace !== '' && !(t.group === '' && t.resource === 'namespaces');
  return scope === 'Namespaced' ? namespaced : !namespaced;
}

function ruleMatches(r: Rule, t: Target): boolean {
  const any = (list: string[], v: string) => list.includes('*') || list.includes(v);
  return any(r.operations, t.operation) && any(r.groups, t.group) && any(r.versions, t.version)
    && resourceMatches(r.resources, t.resource, t.subresource) && scopeMatches(r.scope, t)
    && (r.names.length === 0 || r.names.includes(t.name));
}

let versionsByResource: Map<string, string[]> | undefined;

/** The versions a built-in resource is known in, for matchPolicy Equivalent. */
function versionsOf(group: string, resource: string): string[] {
  if (!versionsByResource) {
    versionsByResource = new Map();
    for (const e of resourceTable()) {
      const key = `${e.group}/${e.resource}`;
      versionsByResource.set(key, [...versionsByResource.get(key) ?? [], e.version]);
    }
  }
  return versionsByResource.get(`${group}/${resource}`) ?? [];
}

const selectorOf = (v: unknown): Matcher | undefined => parseLabelSelector(formatLabelSelector(v));
const labelsOf = (o: JsonObject | undefined): Record<string, string> | undefined => (o?.metadata as Obj | undefined)?.labels;

/** Labels of the namespace a request is in; undefined for cluster-scoped requests. */
export type NamespaceLabels = (request: AdmissionRequest) => Promise<Record<string, string> | undefined | null>;

export class ResourceMatcher {
  private readonly rules: Rule[];
  private readonly excluded: Rule[];
  private readonly namespaceSelector?: Matcher;
  private readonly objectSelector?: Matcher;
  private readonly equivalent: boolean;

  /** `matchResources` of a policy or binding; `anyResource` matches every request when no rules are given (bindings). */
  constructor(spec: Obj | undefined, anyResource: boolean) {
    const m = spec ?? {};
    this.rules = Array.isArray(m.resourceRules) ? m.resourceRules.map(ruleOf) : [];
    if (this.rules.length === 0 && anyResource) this.rules = [ruleOf({ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*', '*/*'] })];
    this.excluded = Array.isArray(m.excludeResourceRules) ? m.excludeResourceRules.map(ruleOf) : [];
    this.namespaceSelector = selectorOf(m.namespaceSelector);
    this.objectSelector = selectorOf(m.objectSelector);
    this.equivalent = m.matchPolicy !== 'Exact';
  }

  /** The version the request matched through (its own, or an equivalent one), undefined when it does not match. */
  async matches(request: AdmissionRequest, namespaceLabels: NamespaceLabels): Promise<boolean> {
    if (!this.matchesResource(request)) return false;
    if (this.objectSelector && !this.objectSelector(labelsOf(request.object) ?? {}) && !this.objectSelector(labelsOf(request.oldObject) ?? {})) return false;
    if (!this.namespaceSelector) return true;
    const labels = await namespaceLabels(request);
    return labels === undefined || this.namespaceSelector(labels ?? {});
  }

  private matchesResource(request: AdmissionRequest): boolean {
    const { group, version, resource } = request.resource;
    const base = { group, version, resource, subresource: request.subresource, namespace: request.namespace, name: request.name, operation: request.operation };
    const targets: Target[] = [base];
    if (this.equivalent) for (const v of versionsOf(group, resource)) if (v !== version) targets.push({ ...base, version: v });
    if (this.excluded.some((r) => ruleMatches(r, base))) return false;
    return targets.some((t) => this.rules.some((r) => ruleMatches(r, t)));
  }
}
