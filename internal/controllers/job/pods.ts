// What the Job controller reads from its pods (phase, index, readiness, when
// they finished), the pods it creates from the template, and which active pods
// go first when there are too many.
import {
  JOB_COMPLETION_INDEX, JOB_INDEX_FAILURE_COUNT, JOB_INDEX_IGNORED_FAILURE_COUNT, JOB_TRACKING_FINALIZER, isWellKnown, wellKnownValue,
} from '../../names/index.js';
import type { Job, Pod } from './types.js';

export const UNKNOWN_INDEX = -1;
/** The longest generateName prefix the server keeps whole (63 less its five random characters). */
const MAX_GENERATED_PREFIX = 58;
const INDEX_ENV = 'JOB_COMPLETION_INDEX';
const MAX_INT32 = 2 ** 31 - 1;

export const isIndexed = (job: Job): boolean => job.spec.completionMode === 'Indexed';
export const hasBackoffLimitPerIndex = (job: Job): boolean => job.spec.backoffLimitPerIndex !== undefined && job.spec.backoffLimitPerIndex !== null;
/** With `podReplacementPolicy: Failed`, a terminating pod is replaced only once it has failed. */
export const onlyReplaceFailed = (job: Job): boolean => job.spec.podReplacementPolicy === 'Failed' || job.spec.podFailurePolicy !== undefined;

const phase = (p: Pod) => p.status?.phase;
export const isSucceeded = (p: Pod): boolean => phase(p) === 'Succeeded';
export const isTerminal = (p: Pod): boolean => phase(p) === 'Succeeded' || phase(p) === 'Failed';
/** Pending or running, not being deleted. */
export const isActive = (p: Pod): boolean => !isTerminal(p) && !p.metadata.deletionTimestamp;
export const isTerminating = (p: Pod): boolean => !isTerminal(p) && Boolean(p.metadata.deletionTimestamp);
export const isReady = (p: Pod): boolean => (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
export const hasTrackingFinalizer = (p: Pod): boolean => (p.metadata.finalizers ?? []).some((f) => isWellKnown(f, JOB_TRACKING_FINALIZER));

/** Failed, or (unless only failed pods are replaced) deleted before it succeeded: a deleted pod may never reach Failed. */
export function isPodFailed(p: Pod, job: Job): boolean {
  if (phase(p) === 'Failed') return true;
  if (onlyReplaceFailed(job)) return false;
  return Boolean(p.metadata.deletionTimestamp) && phase(p) !== 'Succeeded';
}

function nonNegativeInt(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  return n <= MAX_INT32 ? n : undefined;
}

export const completionIndex = (p: Pod): number => nonNegativeInt(wellKnownValue(p.metadata.annotations, JOB_COMPLETION_INDEX)) ?? UNKNOWN_INDEX;
export const indexFailureCount = (p: Pod): number => nonNegativeInt(wellKnownValue(p.metadata.annotations, JOB_INDEX_FAILURE_COUNT)) ?? 0;
export const indexIgnoredFailureCount = (p: Pod): number => nonNegativeInt(wellKnownValue(p.metadata.annotations, JOB_INDEX_IGNORED_FAILURE_COUNT)) ?? 0;
/** An index that names one of the job's completions. */
export const validIndex = (job: Job, ix: number): boolean => ix !== UNKNOWN_INDEX && ix < (job.spec.completions ?? 0);

const ms = (t: string | undefined) => (t ? Date.parse(t) : NaN);

/** When the pod finished: its containers' last finish, else when Ready turned False, else its deletion
 * less the grace period, else its creation (as the platform estimates it). */
export function finishedTime(p: Pod): number {
  const sidecars = new Set((p.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => c.name));
  const statuses = [...(p.status?.containerStatuses ?? []), ...(p.status?.initContainerStatuses ?? []).filter((s) => sidecars.has(s.name))];
  const finishes = statuses.map((s) => ms(s.state?.terminated?.finishedAt));
  if (statuses.length > 0 && finishes.every((t) => !Number.isNaN(t))) return Math.max(...finishes);
  const notReady = (p.status?.conditions ?? []).find((c) => c.type === 'Ready' && c.status === 'False');
  if (!Number.isNaN(ms(notReady?.lastTransitionTime))) return ms(notReady!.lastTransitionTime);
  if (p.metadata.deletionTimestamp) return ms(p.metadata.deletionTimestamp) - (p.metadata.deletionGracePeriodSeconds ?? 0) * 1000;
  return ms(p.metadata.creationTimestamp);
}

const PHASE_ORDER: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
const readySince = (p: Pod) => ms((p.status?.conditions ?? []).find((c) => c.type === 'Ready')?.lastTransitionTime);
const restarts = (p: Pod) => Math.max(0, ...(p.status?.containerStatuses ?? []).map((s) => s.restartCount ?? 0));

/** The order in which active pods are deleted: unscheduled, pending, not ready, ready the shortest, restarted most, newest first. */
export function removalOrder(a: Pod, b: Pod): number {
  const na = a.spec?.nodeName ?? '';
  const nb = b.spec?.nodeName ?? '';
  if (na !== nb && (na === '' || nb === '')) return na === '' ? -1 : 1;
  const pa = PHASE_ORDER[phase(a) ?? 'Pending'] ?? 0;
  const pb = PHASE_ORDER[phase(b) ?? 'Pending'] ?? 0;
  if (pa !== pb) return pa - pb;
  if (isReady(a) !== isReady(b)) return isReady(a) ? 1 : -1;
  if (isReady(a) && readySince(a) !== readySince(b)) return readySince(b) - readySince(a);
  if (restarts(a) !== restarts(b)) return restarts(b) - restarts(a);
  return ms(b.metadata.creationTimestamp) - ms(a.metadata.creationTimestamp);
}

/** Active pods to delete: at least `atLeast`, and for an Indexed Job every pod without a valid index and every
 * duplicate of an index (the most advanced of each index stays). */
export function activePodsForRemoval(job: Job, active: Pod[], atLeast: number): Pod[] {
  const rm: Pod[] = [];
  let left = active;
  if (isIndexed(job)) {
    left = [];
    const byIndex = new Map<number, Pod[]>();
    for (const p of active) {
      const ix = completionIndex(p);
      if (!validIndex(job, ix)) rm.push(p);
      else byIndex.set(ix, [...(byIndex.get(ix) ?? []), p]);
    }
    for (const same of byIndex.values()) {
      same.sort(removalOrder);
      rm.push(...same.slice(0, -1));
      left.push(same[same.length - 1]);
    }
  }
  if (rm.length < atLeast) rm.push(...[...left].sort(removalOrder).slice(0, atLeast - rm.length));
  return rm;
}

/** The generateName of a pod: `<job>-`, or `<job>-<index>-` for an Indexed Job, cut to what the server keeps. */
export function podNamePrefix(jobName: string, index: number): string {
  if (index === UNKNOWN_INDEX) return `${jobName}-`.slice(0, MAX_GENERATED_PREFIX);
  const suffix = `-${index}-`;
  const prefix = `${jobName}${suffix}`;
  return prefix.length > MAX_GENERATED_PREFIX ? `${prefix.slice(0, MAX_GENERATED_PREFIX - suffix.length)}${suffix}` : prefix;
}

/** The env var that hands a container its index, from the pod's index label. */
function withIndexEnv(container: Record<string, any>): Record<string, any> {
  const env: Record<string, any>[] = container.env ?? [];
  if (env.some((e) => e.name === INDEX_ENV)) return container;
  const fieldRef = { fieldPath: `metadata.labels['${JOB_COMPLETION_INDEX.own}']` };
  return { ...container, env: [...env, { name: INDEX_ENV, valueFrom: { fieldRef } }] };
}

/** Per-index failure counts the replacement of `replaced` carries on. */
export interface IndexFailures { failed: number; ignored: number }

/** A new pod of the job: the template, owned by the job, held by the tracking finalizer; an Indexed Job's pod
 * also gets its index (annotation, label, env var, hostname) and, with a per-index limit, the failure counts. */
export function podFromTemplate(job: Job, index: number, failures?: IndexFailures): Pod {
  const tpl = structuredClone(job.spec.template);
  const meta = tpl.metadata ?? {};
  const spec = tpl.spec ?? {};
  const finalizers = [...(meta.finalizers ?? [])];
  if (!finalizers.some((f) => isWellKnown(f, JOB_TRACKING_FINALIZER))) finalizers.push(JOB_TRACKING_FINALIZER.own);
  const labels = { ...meta.labels };
  const annotations = { ...meta.annotations };
  if (index !== UNKNOWN_INDEX) {
    annotations[JOB_COMPLETION_INDEX.own] = String(index);
    labels[JOB_COMPLETION_INDEX.own] = String(index);
    spec.hostname = `${job.metadata.name}-${index}`;
    spec.containers = (spec.containers ?? []).map(withIndexEnv);
    if (spec.initContainers) spec.initContainers = spec.initContainers.map(withIndexEnv);
    if (failures) {
      annotations[JOB_INDEX_FAILURE_COUNT.own] = String(failures.failed);
      if (failures.ignored > 0) annotations[JOB_INDEX_IGNORED_FAILURE_COUNT.own] = String(failures.ignored);
    }
  }
  const owner = { apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name, uid: job.metadata.uid, controller: true, blockOwnerDeletion: true };
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: {
      generateName: podNamePrefix(job.metadata.name!, index), namespace: job.metadata.namespace,
      labels, annotations, finalizers, ownerReferences: [owner],
    },
    spec,
  };
}
