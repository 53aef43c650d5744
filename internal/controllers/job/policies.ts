// The Job's policies as pure decisions: which pod failure policy rule a failed
// pod matches, whether a success policy is met, and the exponential back-off
// before failed pods are replaced.
import { countIndexes, hasIndex, parseIndexes, type Intervals } from './indexes.js';
import { finishedTime, indexFailureCount, indexIgnoredFailureCount, isPodFailed } from './pods.js';
import type { ContainerStatus, ExitCodes, Job, Pod, PodStatus } from './types.js';

/** The platform's back-off: 10 s after the first failure, doubling, at most 6 minutes. */
export const DEFAULT_BACKOFF_MS = 10_000;
export const MAX_BACKOFF_MS = 6 * 60_000;

export interface FailureMatch {
  /** The matching rule's action; undefined when no rule matched (the failure counts). */
  action?: string;
  /** Whether the failure counts against the backoff limit. */
  countFailed: boolean;
  /** Set when a FailJob rule matched: the Job's failure message. */
  failJobMessage?: string;
}

function matchingContainer(statuses: ContainerStatus[] | undefined, req: ExitCodes): ContainerStatus | undefined {
  return (statuses ?? []).find((s) => {
    if (req.containerName !== undefined && req.containerName !== null && req.containerName !== s.name) return false;
    const code = s.state?.terminated?.exitCode;
    if (code === undefined || code === 0) return false;
    if (req.operator === 'In') return req.values.includes(code);
    if (req.operator === 'NotIn') return !req.values.includes(code);
    return false;
  });
}

function exitCodeMatch(status: PodStatus | undefined, req: ExitCodes): ContainerStatus | undefined {
  return matchingContainer(status?.containerStatuses, req) ?? matchingContainer(status?.initContainerStatuses, req);
}

function conditionMatch(status: PodStatus | undefined, patterns: { type: string; status?: string }[]): string | undefined {
  for (const c of status?.conditions ?? []) {
    if (patterns.some((p) => p.type === c.type && (p.status ?? 'True') === c.status)) return c.type;
  }
  return undefined;
}

const KNOWN_ACTIONS = new Set(['FailJob', 'FailIndex', 'Ignore', 'Count']);

/** The first rule the failed pod matches decides; rules with an action this controller does not know are skipped. */
export function matchPodFailurePolicy(job: Job, pod: Pod): FailureMatch {
  const rules = job.spec.podFailurePolicy?.rules ?? [];
  const where = `${pod.metadata.namespace}/${pod.metadata.name}`;
  for (const [i, rule] of rules.entries()) {
    if (!KNOWN_ACTIONS.has(rule.action)) continue;
    let what: string | undefined;
    if (rule.onExitCodes) {
      const c = exitCodeMatch(pod.status, rule.onExitCodes);
      if (c) what = `Container ${c.name} for pod ${where} failed with exit code ${c.state!.terminated!.exitCode}`;
    } else if (rule.onPodConditions) {
      const type = conditionMatch(pod.status, rule.onPodConditions);
      if (type) what = `Pod ${where} has condition ${type}`;
    }
    if (what === undefined) continue;
    if (rule.action === 'Ignore') return { action: 'Ignore', countFailed: false };
    if (rule.action === 'FailJob') return { action: 'FailJob', countFailed: true, failJobMessage: `${what} matching FailJob rule at index ${i}` };
    return { action: rule.action, countFailed: true };
  }
  return { countFailed: true };
}

/** Whether the failure counts against the backoff limit (it always does without a policy). */
export const countsAsFailure = (job: Job, pod: Pod): boolean => !job.spec.podFailurePolicy || matchPodFailurePolicy(job, pod).countFailed;

/** The message of the first success policy rule the succeeded indexes meet. */
export function matchSuccessPolicy(job: Job, succeeded: Intervals): string | undefined {
  const rules = job.spec.successPolicy?.rules;
  const completions = job.spec.completions ?? 0;
  if (!rules || countIndexes(succeeded) === 0) return undefined;
  for (const [i, rule] of rules.entries()) {
    const count = rule.succeededCount ?? undefined;
    if (rule.succeededIndexes !== undefined && rule.succeededIndexes !== null) {
      const required = parseIndexes(rule.succeededIndexes, completions);
      if (required.length === 0) continue;
      let met = 0;
      for (const [first, last] of required) for (let ix = first; ix <= last; ix++) if (hasIndex(succeeded, ix)) met++;
      if (count !== undefined ? met >= count : met === countIndexes(required)) return `Matched rules at index ${i}`;
    } else if (count !== undefined && countIndexes(succeeded) >= count) return `Matched rules at index ${i}`;
  }
  return undefined;
}

/** Consecutive failures since the last success, and when the last of them happened. */
export interface BackoffRecord { failuresAfterLastSuccess: number; lastFailureTime?: number }

/** The record after newly finished pods. */
export function nextBackoffRecord(prev: BackoffRecord, newSucceeded: Pod[], newFailed: Pod[]): BackoffRecord {
  const failedTimes = newFailed.map(finishedTime).sort((a, b) => a - b);
  if (newSucceeded.length === 0) {
    if (failedTimes.length === 0) return prev;
    return { failuresAfterLastSuccess: prev.failuresAfterLastSuccess + failedTimes.length, lastFailureTime: failedTimes[failedTimes.length - 1] };
  }
  const lastSuccess = Math.max(...newSucceeded.map(finishedTime));
  const after = failedTimes.filter((t) => t > lastSuccess);
  return after.length ? { failuresAfterLastSuccess: after.length, lastFailureTime: after[after.length - 1] } : { failuresAfterLastSuccess: 0 };
}

/** How long replacements still wait after `failures` consecutive failures, the last at `lastFailure`. */
export function remainingBackoff(now: number, failures: number, lastFailure: number | undefined, baseMs = DEFAULT_BACKOFF_MS, maxMs = MAX_BACKOFF_MS): number {
  if (failures === 0 || lastFailure === undefined) return 0;
  let wait = baseMs;
  for (let i = 1; i < failures && wait < maxMs; i++) wait = Math.min(wait * 2, maxMs);
  return Math.max(0, wait - (now - lastFailure));
}

/** The wait before an index whose last pod failed gets a new one (per-index back-off). */
export function remainingIndexBackoff(now: number, lastFailed: Pod | undefined): number {
  if (!lastFailed) return 0;
  return remainingBackoff(now, indexFailureCount(lastFailed) + indexIgnoredFailureCount(lastFailed) + 1, finishedTime(lastFailed));
}

/** The failure counts of the pod that replaces `replaced` in its index. */
export function nextIndexFailures(job: Job, replaced: Pod | undefined): { failed: number; ignored: number } {
  if (!replaced) return { failed: 0, ignored: 0 };
  const counted = countsAsFailure(job, replaced);
  return { failed: indexFailureCount(replaced) + (counted ? 1 : 0), ignored: indexIgnoredFailureCount(replaced) + (counted ? 0 : 1) };
}

/** With restartPolicy OnFailure, the container restarts of running pods count against the backoff limit. */
export function pastBackoffLimitOnFailure(job: Job, pods: Pod[]): boolean {
  if (job.spec.template.spec?.restartPolicy !== 'OnFailure') return false;
  let restarts = 0;
  for (const p of pods) {
    if (p.status?.phase !== 'Running' && p.status?.phase !== 'Pending') continue;
    for (const s of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])]) restarts += s.restartCount ?? 0;
  }
  const limit = job.spec.backoffLimit ?? 6;
  return limit === 0 ? restarts > 0 : restarts >= limit;
}

/** The message of the first FailJob rule a failed pod matches. */
export function failJobMessage(job: Job, pods: Pod[]): string | undefined {
  if (!job.spec.podFailurePolicy) return undefined;
  for (const p of pods) {
    if (!isPodFailed(p, job)) continue;
    const m = matchPodFailurePolicy(job, p).failJobMessage;
    if (m) return m;
  }
  return undefined;
}

/** Whether a failed pod uses up its index: a FailIndex rule, or counted failures reaching backoffLimitPerIndex. */
export function isIndexFailed(job: Job, p: Pod): boolean {
  if (!isPodFailed(p, job)) return false;
  let counted = true;
  if (job.spec.podFailurePolicy) {
    const m = matchPodFailurePolicy(job, p);
    if (m.action === 'FailIndex') return true;
    counted = m.countFailed;
  }
  return counted && indexFailureCount(p) >= (job.spec.backoffLimitPerIndex ?? 0);
}
