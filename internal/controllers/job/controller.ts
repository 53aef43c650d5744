// The Job controller: follows Jobs and Pods with informers (which list again
// after a lost watch or a 410), and passes each Job that changed, or whose pods
// changed, through one sync at a time per Job, a few Jobs at once. Each sync
// claims the Job's pods first: orphans its selector matches are adopted, its pods
// that no longer match are released. Pods that still hold the tracking finalizer
// after their Job is gone or finished are released. Events record what it did.
import type { ApiObject } from '../../apimachinery/meta.js';
import type { ApiClient } from '../../client/index.js';
import { Informer } from '../../client/informer.js';
import { JOB_TRACKING_FINALIZER } from '../../names/index.js';
import { selectorMatches } from '../../registry/values.js';
import { referenceTo, type EventRecorder } from '../events.js';
import { ControllerRefManager, controllerRefOf } from '../refmanager.js';
import { WorkQueue } from '../workqueue.js';
import { resourceServed } from '../served.js';
import { isFinished, managedElsewhere } from './conditions.js';
import { PodExpectations } from './expectations.js';
import { hasTrackingFinalizer } from './pods.js';
import type { BackoffRecord } from './policies.js';
import { JobSync, type JobApi, type SyncDeps } from './sync.js';
import type { Job, Pod } from './types.js';

const JOBS = '/apis/batch/v1/jobs';
const PODS = '/api/v1/pods';
const JOB_TYPE = { apiVersion: 'batch/v1', kind: 'Job' };
const POD_TYPE = { apiVersion: 'v1', kind: 'Pod' };
/** Upstream's --concurrent-job-syncs default. */
const WORKERS = 5;
/** Pod changes within this window make one sync of their Job. */
const BATCH_MS = 250;
/** Retries of a failed sync wait this long, doubling up to the cap. */
const RETRY_MS = 500;
const MAX_RETRY_MS = 60_000;

export interface JobControllerOptions {
  workers?: number;
  recorder?: EventRecorder;
  clock?: () => number;
}

const keyOf = (o: ApiObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const rvOf = (o: ApiObject | undefined) => BigInt(/^\d+$/.test(o?.metadata?.resourceVersion ?? '') ? o!.metadata!.resourceVersion! : '0');

/** The Job a pod's controller reference names, as `namespace/name` and uid. */
function controllerJob(p: ApiObject): { key: string; uid: string } | undefined {
  const ref = (p.metadata?.ownerReferences as { apiVersion?: string; kind?: string; name?: string; uid?: string; controller?: boolean }[] | undefined)
    ?.find((r) => r.controller === true);
  if (!ref || ref.kind !== 'Job' || ref.apiVersion !== 'batch/v1') return undefined;
  return { key: `${p.metadata?.namespace ?? ''}/${ref.name ?? ''}`, uid: ref.uid ?? '' };
}

/** What the controller keeps of a pod: never the containers of its spec. */
function slimPod(p: ApiObject): ApiObject {
  const spec = (p.spec ?? {}) as { nodeName?: string; initContainers?: { name: string; restartPolicy?: string }[] };
  const initContainers = spec.initContainers?.map((c) => ({ name: c.name, restartPolicy: c.restartPolicy }));
  const { managedFields: _, ...metadata } = p.metadata ?? {};
  return { metadata, spec: { nodeName: spec.nodeName, initContainers }, status: p.status };
}

export class JobController {
  private readonly jobs: Informer;
  private readonly pods: Informer;
  /** Pod keys by the uid of the Job that controls them. */
  private readonly podsByJob = new Map<string, Set<string>>();
  /** Keys of the pods no controller owns, by namespace: a Job whose selector matches one adopts it. */
  private readonly unowned = new Map<string, Set<string>>();
  private readonly expectations: PodExpectations;
  private readonly backoff = new Map<string, BackoffRecord>();
  /** The job each status write answered, newer than the informer's until its event arrives. */
  private readonly written = new Map<string, Job>();
  /** Made once both informers have listed; every job is synced then, so no earlier event is lost. */
  private queue?: WorkQueue;
  private readonly orphans = new Set<string>();
  private releasing = false;
  private stopped = false;
  private readonly workers: number;
  private readonly clock: () => number;

  constructor(private readonly client: ApiClient, private readonly opts: JobControllerOptions = {}) {
    this.workers = opts.workers ?? WORKERS;
    this.clock = opts.clock ?? Date.now;
    this.expectations = new PodExpectations(this.clock);
    this.jobs = new Informer(client, JOBS, { upsert: (j, old) => this.jobChanged(j as Job, old as Job | undefined), deleted: (j) => this.jobDeleted(j as Job) });
    this.pods = new Informer(client, PODS, { upsert: (p, old) => this.podChanged(p as Pod, old as Pod | undefined), deleted: (p) => this.podDeleted(p as Pod) }, { transform: slimPod });
  }

  /** Starts once both informers have listed; with batch/v1 not served (--runtime-config) it stays idle, as upstream. */
  async start(): Promise<void> {
    if (!(await resourceServed(this.client, '/apis/batch/v1', 'jobs', () => this.stopped))) {
      console.log('job controller: batch/v1 jobs are not served; not started');
      return;
    }
    await Promise.all([this.jobs.start(), this.pods.start()]);
    if (this.stopped) return;
    this.queue = new WorkQueue('job controller', (key) => this.sync(key), {
      workers: this.workers, retryMinMs: RETRY_MS, retryMaxMs: MAX_RETRY_MS,
      // A conflict only means the job changed meanwhile: its event brings it back.
      report: (key, err) => { if (!/: 409 /.test(err.message)) console.error(`job controller: ${key}: ${err.message}`); },
    });
    for (const key of this.jobs.store.keys()) this.queue.add(key);
    for (const [key, p] of this.pods.store) if (hasTrackingFinalizer(p as Pod)) this.orphans.add(key);
    void this.releaseOrphans();
  }

  stop(): void {
    this.stopped = true;
    this.queue?.stop();
    this.opts.recorder?.stop();
    this.jobs.stop();
    this.pods.stop();
  }

  // ---- events ----

  private jobChanged(job: Job, old?: Job): void {
    const key = keyOf(job);
    if (!old || old.metadata.generation !== job.metadata.generation) this.enqueue(key);
    else this.enqueueAfter(key, BATCH_MS);
    // Pods a finished job still holds are released (normally the last sync did it).
    if (isFinished(job)) this.releasePodsOf(job);
  }

  private jobDeleted(job: Job): void {
    this.enqueue(keyOf(job));
    this.releasePodsOf(job);
  }

  private releasePodsOf(job: Job): void {
    for (const podKey of this.podsByJob.get(job.metadata.uid ?? '') ?? []) {
      if (hasTrackingFinalizer(this.pods.store.get(podKey) as Pod)) this.orphans.add(podKey);
    }
    void this.releaseOrphans();
  }

  private podChanged(pod: Pod, old?: Pod): void {
    const owner = controllerJob(pod);
    const before = old && controllerJob(old);
    if (before && before.uid !== owner?.uid) {
      // The job it left counts one pod fewer.
      this.unindex(old!, before.uid);
      if (this.jobs.store.get(before.key)?.metadata?.uid === before.uid) this.enqueueAfter(before.key, BATCH_MS);
    }
    this.trackUnowned(pod, old);
    if (!owner) return;
    const podKey = keyOf(pod);
    const set = this.podsByJob.get(owner.uid) ?? new Set();
    set.add(podKey);
    this.podsByJob.set(owner.uid, set);
    if (!old) this.expectations.creationObserved(owner.key);
    if (pod.metadata.deletionTimestamp) this.expectations.deletionObserved(owner.key);
    if (!hasTrackingFinalizer(pod)) this.expectations.finalizerRemovalObserved(owner.key, pod.metadata.uid ?? '');
    this.podEvent(pod, owner);
  }

  private podDeleted(pod: Pod): void {
    this.unowned.get(pod.metadata.namespace ?? '')?.delete(keyOf(pod));
    const owner = controllerJob(pod);
    if (!owner) return;
    this.unindex(pod, owner.uid);
    this.expectations.deletionObserved(owner.key);
    this.expectations.finalizerRemovalObserved(owner.key, pod.metadata.uid ?? '');
    this.podEvent(pod, owner);
  }

  /** A pod of a live, unfinished job of its own brings its job to sync; one that outlived its job is released. */
  private podEvent(pod: Pod, owner: { key: string; uid: string }): void {
    const job = this.jobs.store.get(owner.key) as Job | undefined;
    if (job?.metadata.uid === owner.uid && !isFinished(job)) {
      this.enqueueAfter(owner.key, BATCH_MS);
      return;
    }
    if (hasTrackingFinalizer(pod) && this.pods.store.has(keyOf(pod))) {
      this.orphans.add(keyOf(pod));
      void this.releaseOrphans();
    }
  }

  /** Indexes a pod no controller owns; when it is new or its labels or owner changed, the Jobs that may adopt it sync. */
  private trackUnowned(pod: Pod, old?: Pod): void {
    const namespace = pod.metadata.namespace ?? '';
    const set = this.unowned.get(namespace) ?? new Set();
    if (controllerRefOf(pod)) {
      set.delete(keyOf(pod));
      if (set.size === 0) this.unowned.delete(namespace);
      return;
    }
    set.add(keyOf(pod));
    this.unowned.set(namespace, set);
    const changed = !old || controllerRefOf(old) || JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(pod.metadata.labels ?? {});
    if (!changed) return;
    for (const [key, job] of this.jobs.store) {
      if (job.metadata?.namespace === namespace && selectorMatches((job as Job).spec.selector, pod.metadata.labels ?? {})) this.enqueueAfter(key, BATCH_MS);
    }
  }

  private unindex(pod: Pod, uid: string): void {
    const set = this.podsByJob.get(uid);
    set?.delete(keyOf(pod));
    if (set?.size === 0) this.podsByJob.delete(uid);
  }

  private enqueue(key: string): void {
    this.queue?.add(key);
  }

  private enqueueAfter(key: string, ms: number): void {
    this.queue?.addAfter(key, ms);
  }

  // ---- one sync ----

  /** The newest state of a job: the informer's, or what the last status write answered when that is newer. */
  private current(key: string): Job | undefined {
    const stored = this.jobs.store.get(key) as Job | undefined;
    const written = this.written.get(key);
    if (!stored) return undefined;
    if (written?.metadata.uid === stored.metadata.uid && rvOf(written) > rvOf(stored)) return written;
    this.written.delete(key);
    return stored;
  }

  private async sync(key: string): Promise<void> {
    const shared = this.current(key);
    if (!shared) {
      this.queue?.forget(key);
      this.expectations.forget(key);
      this.backoff.delete(key);
      this.written.delete(key);
      return;
    }
    if (managedElsewhere(shared)) return;
    if (isFinished(shared)) { this.backoff.delete(key); return; }
    const mode = shared.spec.completionMode;
    if (mode !== undefined && mode !== 'NonIndexed' && mode !== 'Indexed') {
      this.record(shared, 'Warning', 'UnknownCompletionMode', 'Sync', 'Skipped Job sync because completion mode is unknown');
      return;
    }
    const pods = await this.claimPods(shared);
    await new JobSync(this.deps(), key, structuredClone(shared), pods).run();
  }

  /** The job's pods once claimed: its own that its selector still matches, and the orphans it adopts (counted with the
   * tracking finalizer the adoption adds, as upstream). Its pods that no longer match are released. */
  private async claimPods(job: Job): Promise<Pod[]> {
    const keys = new Set([...this.podsByJob.get(job.metadata.uid ?? '') ?? [], ...this.unowned.get(job.metadata.namespace ?? '') ?? []]);
    const candidates = [...keys].map((k) => this.pods.store.get(k) as Pod).filter(Boolean);
    const refs = new ControllerRefManager<Pod>({
      owner: job, ownerType: JOB_TYPE, finalizers: [JOB_TRACKING_FINALIZER.own],
      matches: (pod) => selectorMatches(job.spec.selector, pod.metadata.labels ?? {}),
      canAdopt: () => this.recheckJob(job),
      patch: (pod, patch) => this.patchPod(pod, patch),
    });
    const { claimed, adopted, errors } = await refs.claim(candidates);
    if (errors.length) throw new Error(`claiming pods: ${errors.join('; ')}`);
    return claimed.map((p) => (adopted.includes(p) && !hasTrackingFinalizer(p)
      ? { ...p, metadata: { ...p.metadata, finalizers: [...p.metadata.finalizers ?? [], JOB_TRACKING_FINALIZER.own] } } : p));
  }

  /** Before adopting: the job read afresh is still the same object and not being deleted. */
  private async recheckJob(job: Job): Promise<void> {
    const { namespace, name, uid } = job.metadata;
    const res = await this.client.get(`/apis/batch/v1/namespaces/${namespace}/jobs/${name}`);
    if (res.status !== 200) throw new Error(`can't recheck the job: ${res.status} ${(res.body as { message?: string })?.message ?? ''}`);
    const fresh = res.body as Job;
    if (fresh.metadata.uid !== uid) throw new Error(`original Job ${namespace}/${name} is gone: got uid ${fresh.metadata.uid}, wanted ${uid}`);
    if (fresh.metadata.deletionTimestamp) throw new Error(`${namespace}/${name} has just been deleted at ${fresh.metadata.deletionTimestamp}`);
  }

  private deps(): SyncDeps {
    return {
      api: this.api(), record: (...args) => this.record(...args), expectations: this.expectations, backoff: this.backoff,
      now: this.clock, requeueAfter: (key, ms) => this.enqueueAfter(key, Math.max(ms, BATCH_MS)),
    };
  }

  private record(job: Job, type: 'Normal' | 'Warning', reason: string, action: string, note: string, related?: Pod): void {
    this.opts.recorder?.event(referenceTo(job, JOB_TYPE), type, reason, action, note, related ? referenceTo(related, POD_TYPE) : undefined);
  }

  private api(): JobApi {
    const client = this.client;
    const podPath = (p: Pod) => `/api/v1/namespaces/${p.metadata.namespace}/pods`;
    return {
      createPod: async (pod) => {
        const res = await client.request('POST', podPath(pod), pod).catch((err: Error) => ({ status: 0, body: { message: err.message } }));
        const causes: { reason?: string }[] = res.body?.details?.causes ?? [];
        return {
          status: res.status, name: res.body?.metadata?.name, message: res.body?.message,
          namespaceTerminating: causes.some((c) => c.reason === 'NamespaceTerminating'),
        };
      },
      deletePod: async (pod) => {
        const body = { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: pod.metadata.uid } };
        const res = await client.request('DELETE', `${podPath(pod)}/${pod.metadata.name}`, body).catch((err: Error) => ({ status: 0, body: { message: err.message } }));
        return { status: res.status, message: res.body?.message };
      },
      removeFinalizer: async (pod) => {
        const patch = { metadata: { '$deleteFromPrimitiveList/finalizers': [JOB_TRACKING_FINALIZER.own, JOB_TRACKING_FINALIZER.upstream] } };
        return (await this.patchPod(pod, patch)).status;
      },
      updateStatus: async (job) => {
        const { namespace, name } = job.metadata;
        const res = await client.request('PUT', `/apis/batch/v1/namespaces/${namespace}/jobs/${name}/status`, job);
        if (res.status !== 200) throw new Error(`updating the status: ${res.status} ${res.body?.message ?? ''}`);
        this.written.set(keyOf(res.body), res.body as Job);
        return res.body as Job;
      },
    };
  }

  /** A strategic merge patch of a pod; status 0 when the server was not reached. */
  private async patchPod(pod: Pod, patch: unknown): Promise<{ status: number; message?: string }> {
    const path = `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`;
    const res = await this.client.request('PATCH', path, patch, 'application/strategic-merge-patch+json')
      .catch((err: Error) => ({ status: 0, body: { message: err.message } }));
    return { status: res.status, message: res.body?.message };
  }

  // ---- pods that outlived their job ----

  /** Removes the tracking finalizer from pods whose job is gone, finished, or not theirs. */
  private async releaseOrphans(): Promise<void> {
    if (this.releasing || !this.queue) return;
    this.releasing = true;
    try {
      while (this.orphans.size > 0 && !this.stopped) {
        const [podKey] = this.orphans;
        this.orphans.delete(podKey);
        const pod = this.pods.store.get(podKey) as Pod | undefined;
        if (!pod || !hasTrackingFinalizer(pod) || !this.isOrphan(pod)) continue;
        const status = await this.api().removeFinalizer(pod);
        if (status !== 200 && status !== 404) setTimeout(() => { this.orphans.add(podKey); void this.releaseOrphans(); }, RETRY_MS).unref();
      }
    } finally {
      this.releasing = false;
    }
  }

  private isOrphan(pod: Pod): boolean {
    const ref = (pod.metadata.ownerReferences as { controller?: boolean }[] | undefined)?.find((r) => r.controller === true);
    const owner = controllerJob(pod);
    if (ref && !owner) return false; // controlled by something else: not ours to touch
    if (!owner) return true;
    const job = this.jobs.store.get(owner.key) as Job | undefined;
    if (!job || job.metadata.uid !== owner.uid) return true;
    return !managedElsewhere(job) && isFinished(job);
  }
}
