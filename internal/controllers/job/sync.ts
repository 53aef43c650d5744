// One pass of the Job controller over one Job: it counts the job's pods, decides
// whether the job is finished (completions, success policy, backoff limit, pod
// failure policy, failed indexes, deadline), creates or deletes pods to match
// parallelism, suspension and back-off, and records what it counted. Finished
// pods are counted through status.uncountedTerminatedPods: a pod's UID is written
// there first, then its tracking finalizer is removed, then it moves into the
// counters, so a pod is never counted twice or lost, whenever the controller stops.
import { asWritten, countReleased } from './counting.js';
import { REASON, conditionTrue, ensureCondition, findCondition, newCondition, timestamp } from './conditions.js';
import { countIndexes, firstFreeIndexes, formatIndexes, hasIndex, mergeIndexes, parseIndexes, withIndexes, type Intervals } from './indexes.js';
import {
  UNKNOWN_INDEX, activePodsForRemoval, completionIndex, finishedTime, hasBackoffLimitPerIndex, hasTrackingFinalizer, indexFailureCount,
  indexIgnoredFailureCount, isActive, isIndexed, isPodFailed, isReady, isSucceeded, isTerminating, onlyReplaceFailed, podFromTemplate, validIndex,
} from './pods.js';
import {
  countsAsFailure, failJobMessage, isIndexFailed, matchSuccessPolicy, nextBackoffRecord, nextIndexFailures, pastBackoffLimitOnFailure,
  remainingBackoff, remainingIndexBackoff, type BackoffRecord,
} from './policies.js';
import type { Condition, Job, Pod } from './types.js';

/** Pods created or deleted in one pass, and finished pods taken into uncountedTerminatedPods at once (as upstream). */
const MAX_PODS_PER_SYNC = 500;
const MAX_UNCOUNTED = 500;
const DEFAULT_BACKOFF_LIMIT = 6;

/** The API calls of a pass; each answers the HTTP status (0 when unreachable). */
export interface JobApi {
  createPod(pod: Pod): Promise<{ status: number; name?: string; message?: string; namespaceTerminating?: boolean }>;
  deletePod(pod: Pod): Promise<{ status: number; message?: string }>;
  removeFinalizer(pod: Pod): Promise<number>;
  /** Writes the job's status; answers the stored job, throws when refused (a conflict: the pass starts over). */
  updateStatus(job: Job): Promise<Job>;
}

export type Recorder = (job: Job, type: 'Normal' | 'Warning', reason: string, action: string, note: string, related?: Pod) => void;

/** Creations and deletions the controller made and has not seen yet, and finalizer removals in flight. */
export interface Expectations {
  satisfied(key: string): boolean;
  expectCreations(key: string, n: number): void;
  creationObserved(key: string): void;
  expectDeletions(key: string, n: number): void;
  deletionObserved(key: string): void;
  pendingFinalizerRemovals(key: string): Set<string>;
  expectFinalizerRemovals(key: string, uids: string[]): void;
  finalizerRemovalObserved(key: string, uid: string): void;
}

export interface SyncDeps {
  api: JobApi;
  record: Recorder;
  expectations: Expectations;
  backoff: Map<string, BackoffRecord>;
  now(): number;
  requeueAfter(key: string, ms: number): void;
}

const uidOf = (p: Pod) => p.metadata.uid ?? '';
const isSuspended = (job: Job) => job.spec.suspend === true;

export class JobSync {
  private readonly pods: Pod[];
  private readonly active: Pod[];
  private ready: number;
  private terminating: number;
  private readonly uncounted: { succeeded: Set<string>; failed: Set<string> };
  private readonly expectedRm: Set<string>;
  private succeeded = 0;
  private failed = 0;
  private prevSucceeded: Intervals = [];
  private succeededIdx: Intervals = [];
  private failedIdx?: Intervals;
  private delayed = new Map<number, Pod>();
  private newBackoff: BackoffRecord = { failuresAfterLastSuccess: 0 };
  private finished?: Condition;

  constructor(private readonly deps: SyncDeps, private readonly key: string, private job: Job, pods: Pod[]) {
    this.job.status ??= {};
    this.job.status.uncountedTerminatedPods ??= {};
    this.pods = pods;
    this.active = pods.filter(isActive);
    this.ready = this.active.filter(isReady).length;
    this.terminating = pods.filter(isTerminating).length;
    const unc = this.job.status.uncountedTerminatedPods;
    this.uncounted = { succeeded: new Set(unc.succeeded ?? []), failed: new Set(unc.failed ?? []) };
    this.expectedRm = deps.expectations.pendingFinalizerRemovals(key);
  }

  private get spec() { return this.job.spec; }
  private get status() { return this.job.status!; }
  private now(): number { return this.deps.now(); }

  /** Pods that hold the finalizer, are not counted yet and (Indexed) have a valid index, and pass `filter`. */
  private uncountedPods(skip: Set<string>, filter: (p: Pod) => boolean): Pod[] {
    return this.pods.filter((p) => hasTrackingFinalizer(p) && !skip.has(uidOf(p)) && !this.expectedRm.has(uidOf(p))
      && (!isIndexed(this.job) || validIndex(this.job, completionIndex(p))) && filter(p));
  }

  private failureCondition(reason: string, message: string): Condition {
    return newCondition('FailureTarget', 'True', reason, message, this.now());
  }

  async run(): Promise<void> {
    const { deps, key, job } = this;
    const satisfied = deps.expectations.satisfied(key);
    let active = this.active.length;
    const newSucceeded = this.uncountedPods(this.uncounted.succeeded, isSucceeded);
    const newFailed = this.uncountedPods(this.uncounted.failed, (p) => isPodFailed(p, job));
    this.succeeded = (this.status.succeeded ?? 0) + newSucceeded.length + this.uncounted.succeeded.size;
    this.failed = (this.status.failed ?? 0) + newFailed.filter((p) => countsAsFailure(job, p)).length + this.uncounted.failed.size;
    if (!this.status.startTime && !isSuspended(job)) this.status.startTime = timestamp(this.now());
    this.newBackoff = nextBackoffRecord(deps.backoff.get(key) ?? { failuresAfterLastSuccess: 0 }, newSucceeded, newFailed);
    this.decideFinished();
    if (isIndexed(job)) this.decideIndexed();

    let suspendChanged = false;
    if (this.finished) {
      const { deleted, deletedReady } = await this.deleteActivePods();
      if (deleted !== active || !satisfied) this.finished = undefined;
      active -= deleted;
      this.terminating += deleted;
      this.ready -= deletedReady;
    } else {
      let managed = false;
      if (satisfied && !job.metadata.deletionTimestamp) {
        active = await this.manage();
        managed = true;
      }
      const completions = this.spec.completions;
      const complete = completions === undefined || completions === null ? this.succeeded > 0 && active === 0 : this.succeeded >= completions && active === 0;
      if (complete) this.finished = newCondition('SuccessCriteriaMet', 'True', REASON.completionsReached, 'Reached expected number of succeeded pods', this.now());
      else if (managed) suspendChanged = this.followSuspension();
    }
    const st = this.status;
    const needsUpdate = suspendChanged || active !== (st.active ?? 0) || this.ready !== st.ready || this.terminating !== st.terminating;
    st.active = active;
    st.ready = this.ready;
    st.terminating = this.terminating;
    await this.track(needsUpdate);
  }

  /** A finish the counters already decide: a success policy met earlier, a failure target, a FailJob rule, the backoff limit, the deadline. */
  private decideFinished(): void {
    const job = this.job;
    const met = findCondition(job, 'SuccessCriteriaMet');
    if (met?.status === 'True') { this.finished = met; return; }
    const target = findCondition(job, 'FailureTarget');
    if (target?.status === 'True') {
      this.finished = newCondition('Failed', 'True', target.reason ?? '', target.message ?? '', this.now());
      return;
    }
    const failJob = failJobMessage(job, this.pods);
    if (failJob) { this.finished = this.failureCondition(REASON.podFailurePolicy, failJob); return; }
    if (this.failed > (this.spec.backoffLimit ?? DEFAULT_BACKOFF_LIMIT) || pastBackoffLimitOnFailure(job, this.pods)) {
      this.finished = this.failureCondition(REASON.backoffLimitExceeded, 'Job has reached the specified backoff limit');
      return;
    }
    const deadline = this.spec.activeDeadlineSeconds;
    if (deadline === undefined || deadline === null || !this.status.startTime || isSuspended(job)) return;
    const left = deadline * 1000 - (this.now() - Date.parse(this.status.startTime));
    if (left <= 0) this.finished = this.failureCondition(REASON.deadlineExceeded, 'Job was active longer than specified deadline');
    else this.deps.requeueAfter(this.key, left);
  }

  /** Completed and failed indexes, the finishes they decide, and which failed pods wait for their index's next pod. */
  private decideIndexed(): void {
    const job = this.job;
    const completions = this.spec.completions ?? 0;
    this.prevSucceeded = parseIndexes(this.status.completedIndexes, completions);
    const fresh = this.pods.filter((p) => isSucceeded(p) && hasTrackingFinalizer(p) && validIndex(job, completionIndex(p))).map(completionIndex);
    this.succeededIdx = withIndexes(this.prevSucceeded, fresh);
    this.succeeded = countIndexes(this.succeededIdx);
    if (hasBackoffLimitPerIndex(job)) {
      const failedNow = this.pods.filter((p) => hasTrackingFinalizer(p) && validIndex(job, completionIndex(p)) && isIndexFailed(job, p)).map(completionIndex);
      this.failedIdx = withIndexes(this.status.failedIndexes !== undefined ? parseIndexes(this.status.failedIndexes, completions) : [], failedNow);
      const failedCount = countIndexes(this.failedIdx);
      const max = this.spec.maxFailedIndexes;
      if (!this.finished && max !== undefined && max !== null && failedCount > max) {
        this.finished = this.failureCondition(REASON.maxFailedIndexesExceeded, 'Job has exceeded the specified maximal number of failed indexes');
      } else if (!this.finished && failedCount > 0 && failedCount + this.succeeded >= completions) {
        this.finished = this.failureCondition(REASON.failedIndexes, 'Job has failed indexes');
      }
      this.delayed = this.delayedDeletions();
    }
    if (!this.finished) {
      const message = matchSuccessPolicy(job, this.succeededIdx);
      if (message) this.finished = newCondition('SuccessCriteriaMet', 'True', REASON.successPolicy, message, this.now());
    }
  }

  /** Per index, the last failed pod whose finalizer stays until its replacement carries its failure count on. */
  private delayedDeletions(): Map<number, Pod> {
    const activeIdx = new Set(this.active.map(completionIndex));
    const out = new Map<number, Pod>();
    const absolute = (p: Pod) => indexFailureCount(p) + indexIgnoredFailureCount(p);
    for (const p of this.uncountedPods(new Set(), (q) => isPodFailed(q, this.job))) {
      const ix = completionIndex(p);
      if (hasIndex(this.succeededIdx, ix) || hasIndex(this.failedIdx, ix) || activeIdx.has(ix)) continue;
      const last = out.get(ix);
      if (!last || (absolute(last) <= absolute(p) && finishedTime(p) >= finishedTime(last))) out.set(ix, p);
    }
    return out;
  }

  /** The Suspended condition follows spec.suspend; suspending clears startTime, resuming sets it anew. */
  private followSuspension(): boolean {
    const { job } = this;
    if (isSuspended(job)) {
      if (!ensureCondition(job, 'Suspended', 'True', 'JobSuspended', 'Job suspended', this.now())) return false;
      delete this.status.startTime;
      this.deps.record(job, 'Normal', 'Suspended', 'Suspend', 'Job suspended');
      return true;
    }
    if (!ensureCondition(job, 'Suspended', 'False', 'JobResumed', 'Job resumed', this.now())) return false;
    this.status.startTime = timestamp(this.now());
    this.deps.record(job, 'Normal', 'Resumed', 'Resume', 'Job resumed');
    return true;
  }

  /** Creates or deletes pods so that the right number run; answers how many are active afterwards. */
  private async manage(): Promise<number> {
    const { job, deps, key } = this;
    let active = this.active.length;
    if (isSuspended(job)) return active - await this.deleteJobPods(activePodsForRemoval(job, this.active, active));
    const parallelism = this.spec.parallelism ?? 1;
    const completions = this.spec.completions;
    let want: number;
    if (completions === undefined || completions === null) want = this.succeeded > 0 ? active : parallelism;
    else want = Math.max(0, Math.min(completions - this.succeeded, parallelism));
    const remove = activePodsForRemoval(job, this.active, Math.max(0, active - want)).slice(0, MAX_PODS_PER_SYNC);
    // A pass either deletes or creates; deleting comes first.
    if (remove.length > 0) return active - await this.deleteJobPods(remove);
    let diff = want - (onlyReplaceFailed(job) ? this.terminating : 0) - active;
    if (diff <= 0) return active;
    if (!hasBackoffLimitPerIndex(job)) {
      const wait = remainingBackoff(this.now(), this.newBackoff.failuresAfterLastSuccess, this.newBackoff.lastFailureTime);
      if (wait > 0) { deps.requeueAfter(key, wait); return active; }
    }
    diff = Math.min(diff, MAX_PODS_PER_SYNC);
    let indexes: number[] = [];
    if (isIndexed(job)) {
      indexes = this.pendingIndexes(diff);
      if (hasBackoffLimitPerIndex(job)) {
        const waits = indexes.map((ix) => remainingIndexBackoff(this.now(), this.delayed.get(ix)));
        const now = indexes.filter((_, i) => waits[i] === 0);
        if (now.length === 0 && indexes.length > 0) { deps.requeueAfter(key, Math.min(...waits)); return active; }
        indexes = now;
      }
      diff = indexes.length;
    }
    return active + await this.createPods(diff, indexes);
  }

  /** The lowest indexes neither succeeded, failed, running nor (when only failed pods are replaced) terminating. */
  private pendingIndexes(count: number): number[] {
    const job = this.job;
    let taken = withIndexes(this.succeededIdx, this.active.map(completionIndex).filter((ix) => ix !== UNKNOWN_INDEX));
    if (onlyReplaceFailed(job)) taken = withIndexes(taken, this.pods.filter(isTerminating).map(completionIndex).filter((ix) => ix !== UNKNOWN_INDEX));
    if (this.failedIdx) taken = mergeIndexes(taken, this.failedIdx);
    return firstFreeIndexes(taken, count, this.spec.completions ?? 0);
  }

  /** Creates `count` pods (the given indexes for an Indexed Job) in batches of 1, 2, 4, ...; a batch with a failure
   * stops the rest, which the next pass tries again. Answers how many were created. */
  private async createPods(count: number, indexes: number[]): Promise<number> {
    const { job, deps, key } = this;
    deps.expectations.expectCreations(key, count);
    let created = 0;
    let failure: string | undefined;
    for (let batch = Math.min(1, count), done = 0; done < count; batch = Math.min(2 * batch, count - done)) {
      const slice = Array.from({ length: batch }, (_, i) => (isIndexed(job) ? indexes[done + i] : UNKNOWN_INDEX));
      const results = await Promise.all(slice.map((ix) => this.createPod(ix)));
      done += batch;
      created += results.filter((r) => r === undefined).length;
      failure ??= results.find((r) => r !== undefined && r !== '');
      if (results.some((r) => r !== undefined)) {
        for (let i = done; i < count; i++) deps.expectations.creationObserved(key);
        break;
      }
    }
    if (failure) throw new Error(`creating pods: ${failure}`);
    return created;
  }

  /** Creates one pod; answers undefined when created, '' when the namespace is going away, else the error. */
  private async createPod(ix: number): Promise<string | undefined> {
    const { job, deps, key } = this;
    const failures = hasBackoffLimitPerIndex(job) && ix !== UNKNOWN_INDEX ? nextIndexFailures(job, this.delayed.get(ix)) : undefined;
    const res = await deps.api.createPod(podFromTemplate(job, ix, failures));
    if (res.status === 201 || res.status === 200) {
      deps.record(job, 'Normal', 'SuccessfulCreate', 'Create', `Created pod: ${res.name}`);
      return undefined;
    }
    deps.expectations.creationObserved(key);
    if (res.namespaceTerminating) return '';
    deps.record(job, 'Warning', 'FailedCreate', 'Create', `Error creating: ${res.message ?? res.status}`);
    return res.message ?? `status ${res.status}`;
  }

  /** Deletes pods the job no longer wants, their finalizer first (they are not counted). Answers how many went. */
  private async deleteJobPods(pods: Pod[]): Promise<number> {
    const { deps, key, job } = this;
    deps.expectations.expectDeletions(key, pods.length);
    let removed = 0;
    let error: string | undefined;
    await Promise.all(pods.map(async (p) => {
      const fin = hasTrackingFinalizer(p) ? await deps.api.removeFinalizer(p) : 200;
      const res = fin === 200 ? await deps.api.deletePod(p) : { status: fin, message: `removing the tracking finalizer: ${fin}` };
      if (res.status !== 200 && res.status !== 202) {
        deps.expectations.deletionObserved(key);
        if (res.status !== 404) {
          error ??= res.message;
          deps.record(job, 'Warning', 'FailedDelete', 'Delete', `Error deleting: ${res.message ?? res.status}`, p);
          return;
        }
      } else deps.record(job, 'Normal', 'SuccessfulDelete', 'Delete', `Deleted pod: ${p.metadata.name}`, p);
      removed++;
      if (isReady(p)) this.ready--;
    }));
    if (error) throw new Error(`deleting pods: ${error}`);
    return removed;
  }

  /** Deletes the active pods of a finishing job, keeping their finalizers: they are counted as failed. */
  private async deleteActivePods(): Promise<{ deleted: number; deletedReady: number }> {
    let deleted = 0;
    let deletedReady = 0;
    await Promise.all(this.active.map(async (p) => {
      const res = await this.deps.api.deletePod(p);
      if (res.status !== 200 && res.status !== 202 && res.status !== 404) return;
      deleted++;
      if (isReady(p)) deletedReady++;
    }));
    return { deleted, deletedReady };
  }

  private canRemoveFinalizer(p: Pod, failed: boolean): boolean {
    if (this.job.metadata.deletionTimestamp || this.finished || isSucceeded(p)) return true;
    if (!failed) return false;
    return !(hasBackoffLimitPerIndex(this.job) && this.delayed.get(completionIndex(p)) === p);
  }

  /** Takes finished pods into uncountedTerminatedPods, removes their finalizers, counts them, and writes the
   * finished condition once nothing is left uncounted or terminating. */
  private async track(needsFlush: boolean): Promise<void> {
    const { job } = this;
    const st = this.status;
    const indexed = isIndexed(job);
    const pods = indexed ? [...this.pods].sort((a, b) => completionIndex(a) - completionIndex(b)) : this.pods;
    const withFinalizer = new Set(pods.filter((p) => hasTrackingFinalizer(p) && !this.expectedRm.has(uidOf(p))).map(uidOf));
    if (countReleased(job, withFinalizer)) needsFlush = true;
    const unc = st.uncountedTerminatedPods!;
    unc.succeeded ??= [];
    unc.failed ??= [];
    const toRelease: Pod[] = [];
    const newIndexes: number[] = [];
    let reachedMax = false;
    for (const p of pods) {
      const uid = uidOf(p);
      if (!hasTrackingFinalizer(p) || this.expectedRm.has(uid)) continue;
      const failed = isPodFailed(p, job);
      if (!this.canRemoveFinalizer(p, failed)) continue;
      toRelease.push(p);
      if (isSucceeded(p) && !this.uncounted.failed.has(uid)) {
        const ix = completionIndex(p);
        if (indexed && validIndex(job, ix) && !hasIndex(this.prevSucceeded, ix)) { newIndexes.push(ix); needsFlush = true; }
        if (!indexed && !this.uncounted.succeeded.has(uid)) { unc.succeeded.push(uid); needsFlush = true; }
      } else if (failed || (this.finished && this.finished.type !== 'SuccessCriteriaMet')) {
        // Once the job is finishing, every pod not terminated is a failure.
        const indexOk = !indexed || validIndex(job, completionIndex(p));
        if (!this.uncounted.failed.has(uid) && indexOk && countsAsFailure(job, p)) { unc.failed.push(uid); needsFlush = true; }
      }
      if (newIndexes.length + unc.succeeded.length + unc.failed.length >= MAX_UNCOUNTED) { reachedMax = true; break; }
    }
    if (indexed) needsFlush = this.writeIndexes(newIndexes) || needsFlush;
    if (this.finished?.type === 'FailureTarget') {
      (st.conditions ??= []).push(this.finished);
      needsFlush = true;
      this.finished = newCondition('Failed', 'True', this.finished.reason!, this.finished.message!, this.now());
    } else if (this.finished?.type === 'SuccessCriteriaMet') {
      if (!conditionTrue(job, 'SuccessCriteriaMet')) { (st.conditions ??= []).push(this.finished); needsFlush = true; }
      this.finished = newCondition('Complete', 'True', this.finished.reason!, this.finished.message!, this.now());
    }
    needsFlush = await this.flush(toRelease, withFinalizer, needsFlush);
    const done = !reachedMax && this.enactFinished();
    if (!needsFlush && !done) return;
    this.job = await this.deps.api.updateStatus(asWritten(this.job));
    if (done) this.recordFinished();
  }

  private writeIndexes(newIndexes: number[]): boolean {
    const st = this.status;
    let changed = false;
    this.succeededIdx = withIndexes(this.succeededIdx, newIndexes);
    const completed = formatIndexes(this.succeededIdx);
    if (completed !== (st.completedIndexes ?? '')) changed = true;
    st.succeeded = countIndexes(this.succeededIdx);
    if (completed) st.completedIndexes = completed;
    else delete st.completedIndexes;
    const failed = this.failedIdx ? formatIndexes(this.failedIdx) : undefined;
    if (failed !== st.failedIndexes) { st.failedIndexes = failed; changed = true; }
    return changed;
  }

  /** Writes the new uncounted UIDs, removes the finalizers, and counts the pods released; answers whether the
   * counters changed since the last write. */
  private async flush(toRelease: Pod[], withFinalizer: Set<string>, needsFlush: boolean): Promise<boolean> {
    const { deps, key } = this;
    if (needsFlush) {
      this.job = await deps.api.updateStatus(asWritten(this.job));
      deps.backoff.set(key, this.newBackoff);
      needsFlush = false;
    }
    let error: string | undefined;
    if (toRelease.length > 0) {
      deps.expectations.expectFinalizerRemovals(key, toRelease.map(uidOf));
      await Promise.all(toRelease.map(async (p) => {
        const status = await deps.api.removeFinalizer(p);
        if (status === 200 || status === 404) withFinalizer.delete(uidOf(p));
        if (status !== 200) deps.expectations.finalizerRemovalObserved(key, uidOf(p));
        if (status !== 200 && status !== 404) error ??= `removing the tracking finalizer of ${p.metadata.name}: ${status}`;
      }));
    }
    if (countReleased(this.job, withFinalizer)) needsFlush = true;
    if (error) {
      if (needsFlush) this.job = await deps.api.updateStatus(asWritten(this.job));
      throw new Error(error);
    }
    return needsFlush;
  }

  /** Sets the finished condition (and completionTime) once no pod is uncounted or terminating. */
  private enactFinished(): boolean {
    const f = this.finished;
    if (!f) return false;
    const unc = this.status.uncountedTerminatedPods ?? {};
    if ((unc.succeeded?.length ?? 0) + (unc.failed?.length ?? 0) > 0 || this.terminating > 0) return false;
    ensureCondition(this.job, f.type, f.status, f.reason ?? '', f.message ?? '', this.now());
    if (f.type === 'Complete') this.status.completionTime = f.lastTransitionTime;
    return true;
  }

  private recordFinished(): void {
    const { job, deps } = this;
    const f = this.finished!;
    if (f.type !== 'Complete') {
      deps.record(job, 'Warning', f.reason ?? 'Failed', 'Fail', f.message ?? '');
      return;
    }
    const completions = this.spec.completions;
    if (completions !== undefined && completions !== null && (this.status.succeeded ?? 0) > completions) {
      deps.record(job, 'Warning', 'TooManySucceededPods', 'Complete', 'Too many succeeded pods running after completion count reached');
    }
    deps.record(job, 'Normal', 'Completed', 'Complete', 'Job completed');
  }
}
