// Pod usage: the object count, and the compute resources of pods that still run
// (requests and limits of cpu, memory, ephemeral storage, hugepages, and extended
// resources as `requests.<name>`), the pod's scopes, and the old rule that a
// quota on cpu or memory needs every container to state it.
import { DOMAIN, UPSTREAM_LABEL_DOMAIN } from '../names/index.js';
import { add, addQuantities, count, parseList, type ResourceList } from './quantity.js';
import type { Evaluator, Obj, ScopeSelector } from './types.js';
import { objectCountName } from './objectcount.js';

const POD_COUNT = objectCountName('', 'pods');
const POD_RESOURCES = new Set([
  POD_COUNT, 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods',
]);
const HUGEPAGES = 'hugepages-';
const REQUESTS = 'requests.';
/** A quota on these makes every container state them (a rule kept for compatibility, not extended to other resources). */
const VALIDATED = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);
/** Resources a pod may set for itself as a whole (spec.resources). */
const POD_LEVEL = (name: string) => name === 'cpu' || name === 'memory' || name.startsWith(HUGEPAGES);

/** Resources of the platform: unprefixed, or prefixed with its domain. */
function isNative(name: string): boolean {
  if (!name.includes('/')) return true;
  const prefix = name.slice(0, name.indexOf('/'));
  return [DOMAIN, UPSTREAM_LABEL_DOMAIN].some((d) => prefix === d || prefix.endsWith(`.${d}`));
}
const isExtended = (name: string) => !isNative(name) && !name.startsWith(REQUESTS);
const isExtendedForQuota = (name: string) => !isNative(name) && name.startsWith(REQUESTS);

const listOf = (v: unknown): ResourceList => parseList(v);
const containers = (spec: Obj): Obj[] => (Array.isArray(spec.containers) ? spec.containers : []);
const initContainers = (spec: Obj): Obj[] => (Array.isArray(spec.initContainers) ? spec.initContainers : []);
const resourcesOf = (c: Obj, which: 'requests' | 'limits'): ResourceList => listOf(c.resources?.[which]);

function maxLists(a: ResourceList, b: ResourceList): ResourceList {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) if (!out[k] || v.nanos > out[k].nanos) out[k] = v;
  return out;
}

/** The pod's effective requests or limits: containers and sidecars together, at least any init container's
 * (with the sidecars started before it), pod-level values where set, plus the overhead. */
function podResources(pod: Obj, which: 'requests' | 'limits'): ResourceList {
  const spec = (pod.spec ?? {}) as Obj;
  let total: ResourceList = {};
  for (const c of containers(spec)) total = add(total, resourcesOf(c, which));
  let sidecars: ResourceList = {};
  let initPeak: ResourceList = {};
  for (const c of initContainers(spec)) {
    const own = resourcesOf(c, which);
    if (c.restartPolicy === 'Always') {
      total = add(total, own);
      sidecars = add(sidecars, own);
      initPeak = maxLists(initPeak, sidecars);
    } else {
      initPeak = maxLists(initPeak, add(own, sidecars));
    }
  }
  total = maxLists(total, initPeak);
  for (const [name, q] of Object.entries(listOf(spec.resources?.[which]))) if (POD_LEVEL(name)) total[name] = q;
  const overhead = listOf(spec.overhead);
  for (const [name, q] of Object.entries(overhead)) {
    // Overhead adds to a limit only where one is set.
    if (which === 'requests' || total[name]) total[name] = total[name] ? addQuantities(total[name], q) : q;
  }
  return total;
}

/** The quota names requests and limits fill. */
function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = { pods: count(1) };
  const request = (name: string, as: string[]) => { if (requests[name]) for (const n of as) out[n] = requests[name]; };
  const limit = (name: string) => { if (limits[name]) out[`limits.${name}`] = limits[name]; };
  for (const name of ['cpu', 'memory', 'ephemeral-storage']) {
    request(name, [name, `${REQUESTS}${name}`]);
    limit(name);
  }
  for (const [name, q] of Object.entries(requests)) {
    if (name.startsWith(HUGEPAGES)) { out[name] = q; out[`${REQUESTS}${name}`] = q; }
    if (isExtended(name)) out[`${REQUESTS}${name}`] = q;
  }
  return out;
}

/** Whether a pod still counts for compute quota: not finished, and not stuck past its deletion grace period. */
export function podCounts(pod: Obj, now: number): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const deletion = pod.metadata?.deletionTimestamp;
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  return !(deletion && typeof grace === 'number' && now > Date.parse(deletion) + grace * 1000);
}

export function podUsage(pod: Obj, now: number): ResourceList {
  const result: ResourceList = { [POD_COUNT]: count(1) };
  if (!podCounts(pod, now)) return result;
  return { ...result, ...computeUsage(podResources(pod, 'requests'), podResources(pod, 'limits')) };
}

const nonZero = (list: ResourceList, name: string): boolean => (list[name]?.nanos ?? 0n) !== 0n;

/** BestEffort: no container and no pod-level value asks for or limits cpu or memory. */
function isBestEffort(pod: Obj): boolean {
  const spec = (pod.spec ?? {}) as Obj;
  const holders = [...containers(spec), ...initContainers(spec), { resources: spec.resources }];
  return !holders.some((c) => ['cpu', 'memory'].some((n) => nonZero(resourcesOf(c, 'requests'), n) || nonZero(resourcesOf(c, 'limits'), n)));
}

const isTerminating = (pod: Obj): boolean => typeof pod.spec?.activeDeadlineSeconds === 'number' && pod.spec.activeDeadlineSeconds >= 0;

function crossNamespaceTerm(term: Obj | undefined): boolean {
  return Boolean(term && ((Array.isArray(term.namespaces) && term.namespaces.length > 0) || term.namespaceSelector));
}

function usesCrossNamespaceAffinity(pod: Obj): boolean {
  const affinity = pod.spec?.affinity as Obj | undefined;
  return [affinity?.podAffinity, affinity?.podAntiAffinity].some((a: Obj | undefined) =>
    (a?.requiredDuringSchedulingIgnoredDuringExecution ?? []).some((t: Obj) => crossNamespaceTerm(t))
    || (a?.preferredDuringSchedulingIgnoredDuringExecution ?? []).some((w: Obj) => crossNamespaceTerm(w.podAffinityTerm)));
}

/** A PriorityClass requirement, read as a label selector on the one label `PriorityClass=<class>`. */
function matchesPriorityClass(pod: Obj, s: ScopeSelector): boolean {
  const name = typeof pod.spec?.priorityClassName === 'string' ? pod.spec.priorityClassName : '';
  const values = s.values ?? [];
  switch (s.operator) {
    case 'In': return name !== '' && values.includes(name);
    case 'NotIn': return name === '' || !values.includes(name);
    case 'Exists': return name !== '';
    case 'DoesNotExist': return name === '';
    default: return false;
  }
}

export const podEvaluator: Evaluator = {
  group: '',
  resource: 'pods',
  // Pods are charged when created and when resized in place.
  handles: (operation, subresource) => (subresource === '' && operation === 'CREATE') || (subresource === 'resize' && operation === 'UPDATE'),
  matchingResources: (names) => names.filter((n) => POD_RESOURCES.has(n) || n.startsWith(HUGEPAGES) || n.startsWith(`${REQUESTS}${HUGEPAGES}`) || isExtendedForQuota(n)),
  matchesScope(s, pod) {
    switch (s.scopeName) {
      case 'Terminating': return isTerminating(pod);
      case 'NotTerminating': return !isTerminating(pod);
      case 'BestEffort': return isBestEffort(pod);
      case 'NotBestEffort': return !isBestEffort(pod);
      case 'PriorityClass': return matchesPriorityClass(pod, s);
      case 'CrossNamespacePodAffinity': return usesCrossNamespaceAffinity(pod);
      default: return false;
    }
  },
  constraints(required, pod) {
    const needed = required.filter((n) => VALIDATED.has(n));
    if (needed.length === 0) return undefined;
    const missing = new Map<string, Set<string>>();
    const spec = (pod.spec ?? {}) as Obj;
    for (const c of [...containers(spec), ...initContainers(spec)]) {
      const stated = computeUsage(resourcesOf(c, 'requests'), resourcesOf(c, 'limits'));
      for (const n of needed) if (!stated[n]) missing.set(n, (missing.get(n) ?? new Set()).add(String(c.name)));
    }
    if (missing.size === 0) return undefined;
    const parts = [...missing.keys()].sort().map((n) => `${n} for: ${[...missing.get(n)!].sort().join(',')}`);
    return `must specify ${parts.join('; ')}`;
  },
  usage: podUsage,
};
