// The TTL-after-finished controller: a finished Job (condition Complete or Failed
// true) with spec.ttlSecondsAfterFinished is deleted, with background propagation,
// that many seconds after it finished (0: at once). The Job is read afresh before
// the delete (its TTL may have changed), and the delete names the uid and
// resourceVersion read, so a Job changed meanwhile is looked at again instead.
import type { ApiObject } from '../apimachinery/meta.js';
import type { ApiClient } from '../client/index.js';
import { Informer } from '../client/informer.js';
import { resourceServed } from './served.js';
import { WorkQueue } from './workqueue.js';

const JOBS = '/apis/batch/v1/jobs';
const jobPath = (key: string) => { const [ns, name] = key.split('/'); return `/apis/batch/v1/namespaces/${ns}/jobs/${name}`; };
const keyOf = (job: ApiObject) => `${job.metadata?.namespace}/${job.metadata?.name}`;

interface Condition { type?: string; status?: string; lastTransitionTime?: string }

/** When a Job finished (ms since the epoch): the transition time of its true Complete or Failed condition. */
export function finishedAt(job: ApiObject): number | undefined {
  const conditions = ((job.status as { conditions?: Condition[] } | undefined)?.conditions ?? []);
  const done = conditions.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  if (!done) return undefined;
  const at = Date.parse(done.lastTransitionTime ?? '');
  return Number.isNaN(at) ? undefined : at;
}

/** When a finished Job with a TTL may be deleted; undefined when it is not to be. */
export function expiresAt(job: ApiObject): number | undefined {
  const ttl = (job.spec as { ttlSecondsAfterFinished?: unknown } | undefined)?.ttlSecondsAfterFinished;
  if (typeof ttl !== 'number' || job.metadata?.deletionTimestamp) return undefined;
  const finished = finishedAt(job);
  return finished === undefined ? undefined : finished + ttl * 1000;
}

/** All the controller keeps of a Job. */
const slim = (job: ApiObject): ApiObject => ({
  metadata: { name: job.metadata?.name, namespace: job.metadata?.namespace, uid: job.metadata?.uid, deletionTimestamp: job.metadata?.deletionTimestamp },
  spec: { ttlSecondsAfterFinished: (job.spec as Record<string, unknown> | undefined)?.ttlSecondsAfterFinished },
  status: { conditions: (job.status as Record<string, unknown> | undefined)?.conditions },
});

export class TtlAfterFinishedController {
  private readonly informer: Informer;
  private readonly queue: WorkQueue;
  private stopped = false;

  constructor(private readonly client: ApiClient, private readonly clock: () => number = Date.now, workers = 5) {
    this.queue = new WorkQueue('ttl-after-finished', (key) => this.process(key), { workers });
    this.informer = new Informer(client, JOBS, {
      upsert: (job) => { if (expiresAt(job) !== undefined) this.queue.add(keyOf(job)); },
      deleted: (job) => this.queue.forget(keyOf(job)),
    }, { transform: slim });
  }

  /** With batch/v1 not served (--runtime-config) it stays idle. */
  async start(): Promise<void> {
    if (!(await resourceServed(this.client, '/apis/batch/v1', 'jobs', () => this.stopped))) {
      console.log('ttl-after-finished: batch/v1 jobs are not served; not started');
      return;
    }
    await this.informer.start();
  }

  stop(): void {
    this.stopped = true;
    this.informer.stop();
    this.queue.stop();
  }

  private async process(key: string): Promise<void> {
    const cached = this.informer.store.get(key);
    if (!cached || !this.due(key, cached)) return;
    const res = await this.client.get(jobPath(key));
    if (res.status === 404) return;
    if (res.status !== 200) throw new Error(`get: ${res.status}`);
    const fresh = res.body as ApiObject;
    if (!this.due(key, fresh)) return;
    const { uid, resourceVersion } = fresh.metadata!;
    const del = await this.client.request('DELETE', jobPath(key),
      { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', preconditions: { uid, resourceVersion } });
    if (del.status === 409) throw new Error('changed before its delete; looked at again');
    if (del.status >= 300 && del.status !== 404) throw new Error(`delete: ${del.status} ${del.body?.message ?? ''}`);
  }

  /** Whether the Job's time is up; one not yet due comes back when it is. */
  private due(key: string, job: ApiObject): boolean {
    const at = expiresAt(job);
    if (at === undefined) return false;
    const wait = at - this.clock();
    if (wait > 0) this.queue.addAfter(key, wait);
    return wait <= 0;
  }
}
