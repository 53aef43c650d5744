// PodSecurity on a namespace whose enforce level is raised: warnings naming the
// existing Pods that would violate it. Bounded as the platform bounds it: at
// most 3000 pods, within one second; one pod per controller is judged before
// the others, and pods with the same violation are counted, not each named.
import { collectionPrefix } from '../../storage/keys.js';
import type { StorageClient } from '../../storage/client.js';
import type { Json } from '../../podsecurity/check.js';
import type { Evaluator } from '../../podsecurity/evaluator.js';
import { levelVersionString, type LevelVersion } from '../../podsecurity/policy.js';

/** Upstream's limits: how many pods are judged, and for how long. */
export const NAMESPACE_POD_CHECK = { maxPods: 3_000, timeoutMs: 1_000 };

/** Up to `limit` pods of a namespace, and how many it has. */
export type PodLister = (namespace: string, limit: number, timeoutMs: number) => Promise<{ pods: Json[]; total: number }>;

/** Lists from storage (its watch cache will do), giving up after the timeout. */
export function storagePodLister(storage: Pick<StorageClient, 'list'>): PodLister {
  return async (namespace, limit, timeoutMs) => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('timed out listing pods')), timeoutMs); });
    try {
      const page = await Promise.race([storage.list(collectionPrefix('', 'pods', namespace), { limit, allowCached: true }), deadline]);
      const pods = page.items.map((kv) => JSON.parse(kv.value.toString('utf8')) as Json);
      return { pods, total: pods.length + Number(page.remaining ?? 0) };
    } finally {
      clearTimeout(timer);
    }
  };
}

const controllerUid = (pod: Json): string | undefined =>
  (Array.isArray(pod.metadata?.ownerReferences) ? pod.metadata.ownerReferences : []).find((o: Json) => o?.controller === true)?.uid;

/** Pods without a controller and the first pod of each controller, then the other replicas; exempt runtime classes left out. */
function prioritize(pods: Json[], exemptRuntimeClasses: string[]): Json[] {
  const first: Json[] = [];
  const replicas: Json[] = [];
  const seen = new Set<string>();
  for (const pod of pods) {
    const runtimeClass = pod.spec?.runtimeClassName;
    if (runtimeClass && exemptRuntimeClasses.includes(runtimeClass)) continue;
    const uid = controllerUid(pod);
    if (uid !== undefined && seen.has(uid)) replicas.push(pod);
    else first.push(pod);
    if (uid !== undefined) seen.add(uid);
  }
  return [...first, ...replicas];
}

/** `a`, `a (and 1 other pod)`, `a (and 2 other pods)`: the pod first by name, and how many more share the violation. */
function podsPhrase(name: string, count: number): string {
  if (count === 1) return name;
  return `${name} (and ${count - 1} other ${count === 2 ? 'pod' : 'pods'})`;
}

export async function namespacePodWarnings(list: PodLister, evaluator: Evaluator, namespace: string, enforce: LevelVersion,
  exemptRuntimeClasses: string[], limits = NAMESPACE_POD_CHECK): Promise<string[]> {
  const started = Date.now();
  let listed: { pods: Json[]; total: number };
  try {
    listed = await list(namespace, limits.maxPods, limits.timeoutMs);
  } catch {
    return ['failed to list pods while checking new PodSecurity enforce level'];
  }
  const pods = prioritize(listed.pods, exemptRuntimeClasses);
  const total = Math.max(listed.total - (listed.pods.length - pods.length), pods.length);
  const byViolation = new Map<string, { name: string; count: number }>();
  let checked = 0;
  for (const pod of pods.slice(0, limits.maxPods)) {
    checked++;
    const result = evaluator.evaluate(enforce, pod.metadata ?? {}, pod.spec ?? {});
    if (!result.allowed) {
      const reason = result.reason();
      const name = String(pod.metadata?.name ?? '');
      const seen = byViolation.get(reason);
      byViolation.set(reason, seen ? { name: name < seen.name ? name : seen.name, count: seen.count + 1 } : { name, count: 1 });
    }
    if (Date.now() - started > limits.timeoutMs) break;
  }
  const warnings: string[] = [];
  if (checked < total) warnings.push(`new PodSecurity enforce level only checked against the first ${checked} of ${total} existing pods`);
  if (byViolation.size) {
    warnings.push(`existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(enforce))}`);
  }
  const podWarnings = [...byViolation].map(([reason, { name, count }]) => `${podsPhrase(name, count)}: ${reason}`).sort();
  return [...warnings, ...podWarnings];
}
