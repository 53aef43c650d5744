// A Job's conditions as the controller writes them, and what they say about it.
import { JOB_CONTROLLER_MANAGER, isWellKnown } from '../../names/index.js';
import type { Condition, Job } from './types.js';

/** The reasons of the platform's Job conditions. */
export const REASON = {
  backoffLimitExceeded: 'BackoffLimitExceeded',
  deadlineExceeded: 'DeadlineExceeded',
  podFailurePolicy: 'PodFailurePolicy',
  maxFailedIndexesExceeded: 'MaxFailedIndexesExceeded',
  failedIndexes: 'FailedIndexes',
  successPolicy: 'SuccessPolicy',
  completionsReached: 'CompletionsReached',
} as const;

/** RFC 3339 at second precision, as the API's Time fields. */
export const timestamp = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

export function newCondition(type: string, status: string, reason: string, message: string, now: number): Condition {
  const at = timestamp(now);
  return { type, status, reason, message, lastProbeTime: at, lastTransitionTime: at };
}

export const findCondition = (job: Job, type: string): Condition | undefined => (job.status?.conditions ?? []).find((c) => c.type === type);
export const conditionTrue = (job: Job, type: string): boolean => findCondition(job, type)?.status === 'True';
export const isFinished = (job: Job): boolean => conditionTrue(job, 'Complete') || conditionTrue(job, 'Failed');

/** Sets a condition's status, reason and message (a new False condition is not added: from nothing to False says nothing).
 * Answers whether the list changed. */
export function ensureCondition(job: Job, type: string, status: string, reason: string, message: string, now: number): boolean {
  const list = job.status!.conditions ??= [];
  const i = list.findIndex((c) => c.type === type);
  if (i >= 0) {
    const c = list[i];
    if (c.status === status && c.reason === reason && c.message === message) return false;
    list[i] = newCondition(type, status, reason, message, now);
    return true;
  }
  if (status === 'False') return false;
  list.push(newCondition(type, status, reason, message, now));
  return true;
}

/** The controller a Job names in `managedBy` when it is not the built-in one. */
export function managedElsewhere(job: Job): string | undefined {
  const by = job.spec.managedBy;
  return by === undefined || by === null || isWellKnown(by, JOB_CONTROLLER_MANAGER) ? undefined : by;
}
