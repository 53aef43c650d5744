// The Job controller over HTTPS, the test playing the node agent: it sets the
// pods' status (Running, Ready, Succeeded, Failed with exit codes and conditions)
// through the status subresource, as a node agent would.
import { expect } from 'chai';
import { Cluster, waitFor } from '../lib/cluster.js';
import { kubectl, kubectlPath } from '../lib/kubectl.js';

const NS = 'jobs';
const JOBS = `/apis/batch/v1/namespaces/${NS}/jobs`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const TRACKING = 'batch.svc.io/job-tracking';
const INDEX = 'batch.svc.io/job-completion-index';
/** A finish long ago: the back-off before a replacement (10 s after the first failure) has run out. */
const LONG_AGO = new Date(Date.now() - 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

describe('Job controller: pods from the template, completions, indexes, policies, suspension, restarts', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => {
    c = await new Cluster().start();
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).to.equal(201);
  });
  after(async () => { await c?.stop(); });

  const job = (name: string, spec: Record<string, unknown> = {}) => ({
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } }, ...spec },
  });
  async function create(name: string, spec: Record<string, unknown> = {}): Promise<any> {
    const res = await c.request('POST', JOBS, { body: job(name, spec) });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  }
  const get = async (name: string) => (await c.request('GET', `${JOBS}/${name}`)).body;
  async function until(name: string, check: (j: any) => boolean, ms = 15_000): Promise<any> {
    let last: any;
    const ok = await waitFor(async () => check(last = await get(name)), ms);
    expect(ok, `job ${name}: ${JSON.stringify(last?.status)}`).to.equal(true);
    return last;
  }
  const pods = async (name: string): Promise<any[]> =>
    (await c.request('GET', `${PODS}?labelSelector=${encodeURIComponent(`job-name=${name}`)}`)).body.items;
  const active = async (name: string) => (await pods(name)).filter((p) => !p.metadata.deletionTimestamp && !['Succeeded', 'Failed'].includes(p.status?.phase));
  async function activeCount(name: string, n: number): Promise<any[]> {
    let last: any[] = [];
    expect(await waitFor(async () => (last = await active(name)).length === n, 15_000), `${name}: ${last.length} active pods, not ${n}`).to.equal(true);
    return last;
  }
  const cond = (j: any, type: string) => j.status?.conditions?.find((x: any) => x.type === type);
  const isTrue = (j: any, type: string) => cond(j, type)?.status === 'True';

  /** The node agent's part: a pod's phase and what its container ended with. */
  async function setPod(pod: any, phase: string, opts: { exitCode?: number; conditions?: unknown[] } = {}): Promise<void> {
    const terminated = { exitCode: opts.exitCode ?? (phase === 'Succeeded' ? 0 : 1), startedAt: LONG_AGO, finishedAt: LONG_AGO };
    const status = {
      phase, conditions: opts.conditions ?? [],
      containerStatuses: [{ name: 'main', image: 'busybox', imageID: '', ready: false, restartCount: 0, state: phase === 'Running' ? { running: { startedAt: LONG_AGO } } : { terminated } }],
    };
    const res = await c.request('PATCH', `${PODS}/${pod.metadata.name}/status`, { body: { status }, headers: MERGE });
    expect(res.status, res.text).to.equal(200);
  }
  const ready = [{ type: 'Ready', status: 'True', lastTransitionTime: LONG_AGO }];

  it('creates pods from the template with the generated labels, parallelism at a time, and completes after `completions` successes', async () => {
    const j = await create('par', { completions: 3, parallelism: 2 });
    const [first, second] = await activeCount('par', 2);
    const uid = j.metadata.uid;
    for (const key of ['controller-uid', 'batch.svc.io/controller-uid', 'batch.kubernetes.io/controller-uid']) expect(first.metadata.labels[key]).to.equal(uid);
    for (const key of ['job-name', 'batch.svc.io/job-name', 'batch.kubernetes.io/job-name']) expect(first.metadata.labels[key]).to.equal('par');
    expect(first.metadata.name).to.match(/^par-[a-z0-9]{5}$/);
    expect(first.metadata.finalizers).to.include(TRACKING);
    expect(first.metadata.ownerReferences).to.deep.equal([{ apiVersion: 'batch/v1', kind: 'Job', name: 'par', uid, controller: true, blockOwnerDeletion: true }]);
    await setPod(first, 'Running', { conditions: ready });
    const running = await until('par', (x) => x.status?.ready === 1 && x.status?.active === 2 && Boolean(x.status?.startTime));
    expect(running.status.terminating).to.equal(0);
    await setPod(first, 'Succeeded');
    await setPod(second, 'Succeeded');
    const [third] = await activeCount('par', 1);
    const counted = await until('par', (x) => x.status?.succeeded === 2);
    expect(counted.status.uncountedTerminatedPods ?? {}).to.deep.equal({});
    await setPod(third, 'Succeeded');
    const done = await until('par', (x) => isTrue(x, 'Complete'));
    expect(done.status).to.include({ succeeded: 3, ready: 0, terminating: 0 });
    expect(done.status).to.not.have.any.keys('active', 'failed');
    expect(cond(done, 'SuccessCriteriaMet')).to.include({ status: 'True', reason: 'CompletionsReached' });
    expect(cond(done, 'Complete')).to.include({ reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' });
    expect(done.status.completionTime).to.be.a('string');
    expect(cond(done, 'Failed')).to.equal(undefined);
    expect((await pods('par')).every((p) => !p.metadata.finalizers?.includes(TRACKING))).to.equal(true);
    const events = (await c.request('GET', `/apis/events.svc.io/v1/namespaces/${NS}/events`)).body.items.filter((e: any) => e.regarding?.name === 'par');
    expect(events.map((e: any) => e.reason)).to.include.members(['SuccessfulCreate', 'Completed']);
    expect(events.find((e: any) => e.reason === 'Completed')).to.include({ reportingController: 'job-controller', type: 'Normal' });
  });

  it('Indexed: one pod per index with its annotation, label, hostname and name; completedIndexes as ranges', async () => {
    await create('idx', { completions: 4, parallelism: 4, completionMode: 'Indexed' });
    const list = await activeCount('idx', 4);
    const byIndex = new Map(list.map((p) => [Number(p.metadata.annotations[INDEX]), p]));
    expect([...byIndex.keys()].sort()).to.deep.equal([0, 1, 2, 3]);
    for (const [ix, p] of byIndex) {
      expect(p.metadata.labels[INDEX]).to.equal(String(ix));
      expect(p.spec.hostname).to.equal(`idx-${ix}`);
      expect(p.metadata.name).to.match(new RegExp(`^idx-${ix}-[a-z0-9]{5}$`));
      expect(p.spec.containers[0].env).to.deep.include({ name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: `metadata.labels['${INDEX}']` } } });
    }
    await setPod(byIndex.get(0), 'Succeeded');
    await setPod(byIndex.get(2), 'Succeeded');
    await setPod(byIndex.get(3), 'Succeeded');
    await until('idx', (x) => x.status?.completedIndexes === '0,2,3' && x.status?.succeeded === 3);
    await setPod(byIndex.get(1), 'Succeeded');
    const done = await until('idx', (x) => isTrue(x, 'Complete'));
    expect(done.status.completedIndexes).to.equal('0-3');
  });

  it('backoffLimit: failed pods are replaced until the limit is passed, then FailureTarget and Failed', async () => {
    await create('backoff', { backoffLimit: 1 });
    const [p1] = await activeCount('backoff', 1);
    await setPod(p1, 'Failed');
    const [p2] = await activeCount('backoff', 1);
    expect(p2.metadata.name).to.not.equal(p1.metadata.name);
    await until('backoff', (x) => x.status?.failed === 1);
    await setPod(p2, 'Failed');
    const failed = await until('backoff', (x) => isTrue(x, 'Failed'));
    expect(cond(failed, 'Failed')).to.include({ reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' });
    expect(isTrue(failed, 'FailureTarget')).to.equal(true);
    expect(failed.status).to.include({ failed: 2, ready: 0 });
    expect(failed.status.active).to.equal(undefined);
    expect(failed.status.completionTime).to.equal(undefined);
    expect(cond(failed, 'Complete')).to.equal(undefined);
  });

  it('podFailurePolicy: a pod condition matching Ignore is not counted; an exit code matching FailJob fails the job at once', async () => {
    await create('pfp', {
      backoffLimit: 0,
      podFailurePolicy: {
        rules: [
          { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
          { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] },
        ],
      },
    });
    const [p1] = await activeCount('pfp', 1);
    await setPod(p1, 'Failed', { conditions: [{ type: 'DisruptionTarget', status: 'True' }] });
    const [p2] = await activeCount('pfp', 1);
    expect(p2.metadata.name).to.not.equal(p1.metadata.name);
    expect((await get('pfp')).status.failed ?? 0).to.equal(0);
    await setPod(p2, 'Failed', { exitCode: 42 });
    const failed = await until('pfp', (x) => isTrue(x, 'Failed'));
    expect(cond(failed, 'Failed')).to.include({
      reason: 'PodFailurePolicy', message: `Container main for pod ${NS}/${p2.metadata.name} failed with exit code 42 matching FailJob rule at index 0`,
    });
    expect(failed.status.failed).to.equal(1);
  });

  it('backoffLimitPerIndex: an index that fails is given up (failedIndexes) while the others run; the job fails at the end', async () => {
    await create('perindex', { completions: 3, parallelism: 3, completionMode: 'Indexed', backoffLimitPerIndex: 0 });
    const list = await activeCount('perindex', 3);
    const at = (ix: number) => list.find((p) => p.metadata.annotations[INDEX] === String(ix));
    expect(at(0).metadata.annotations['batch.svc.io/job-index-failure-count']).to.equal('0');
    await setPod(at(1), 'Failed');
    const partial = await until('perindex', (x) => x.status?.failedIndexes === '1');
    expect(isTrue(partial, 'Failed')).to.equal(false);
    await activeCount('perindex', 2);
    await setPod(at(0), 'Succeeded');
    await setPod(at(2), 'Succeeded');
    const failed = await until('perindex', (x) => isTrue(x, 'Failed'));
    expect(cond(failed, 'Failed')).to.include({ reason: 'FailedIndexes' });
    expect(failed.status).to.include({ completedIndexes: '0,2', failedIndexes: '1', failed: 1, succeeded: 2 });
  });

  it('successPolicy: once the rule is met the remaining pods are deleted, then Complete', async () => {
    await create('succ', { completions: 3, parallelism: 3, completionMode: 'Indexed', successPolicy: { rules: [{ succeededIndexes: '0', succeededCount: 1 }] } });
    const list = await activeCount('succ', 3);
    await setPod(list.find((p) => p.metadata.annotations[INDEX] === '0'), 'Succeeded');
    const done = await until('succ', (x) => isTrue(x, 'Complete'));
    expect(cond(done, 'SuccessCriteriaMet')).to.include({ status: 'True', reason: 'SuccessPolicy', message: 'Matched rules at index 0' });
    expect(done.status).to.include({ completedIndexes: '0', succeeded: 1, terminating: 0 });
    expect(await active('succ')).to.deep.equal([]);
  });

  it('activeDeadlineSeconds: a job active longer fails with DeadlineExceeded and its pods are deleted', async () => {
    await create('deadline', { activeDeadlineSeconds: 1, parallelism: 2, completions: 2 });
    await activeCount('deadline', 2);
    const failed = await until('deadline', (x) => isTrue(x, 'Failed'));
    expect(cond(failed, 'Failed')).to.include({ reason: 'DeadlineExceeded', message: 'Job was active longer than specified deadline' });
    expect(failed.status.active).to.equal(undefined);
    expect(await active('deadline')).to.deep.equal([]);
  });

  it('suspend: no pods and no startTime while suspended; resuming starts pods and startTime; suspending again deletes them', async () => {
    await create('susp', { suspend: true, parallelism: 2, completions: 2 });
    const suspended = await until('susp', (x) => isTrue(x, 'Suspended'));
    expect(suspended.status.startTime).to.equal(undefined);
    expect(await pods('susp')).to.deep.equal([]);
    const resume = await c.request('PATCH', `${JOBS}/susp`, { body: { spec: { suspend: false } }, headers: MERGE });
    expect(resume.status).to.equal(200);
    await activeCount('susp', 2);
    const resumed = await until('susp', (x) => cond(x, 'Suspended')?.status === 'False' && Boolean(x.status?.startTime));
    expect(cond(resumed, 'Suspended')).to.include({ reason: 'JobResumed' });
    expect((await c.request('PATCH', `${JOBS}/susp`, { body: { spec: { suspend: true } }, headers: MERGE })).status).to.equal(200);
    const again = await until('susp', (x) => isTrue(x, 'Suspended') && !x.status?.active);
    expect(again.status.startTime).to.equal(undefined);
    expect(again.status.failed ?? 0).to.equal(0);
    expect(await waitFor(async () => (await pods('susp')).length === 0, 10_000)).to.equal(true);
  });

  it('podReplacementPolicy: Failed waits for a deleted pod to fail (counted as terminating); TerminatingOrFailed replaces it at once', async () => {
    await create('repl-failed', { podReplacementPolicy: 'Failed', backoffLimit: 3 });
    await create('repl-any', { backoffLimit: 3 });
    const [held] = await activeCount('repl-failed', 1);
    const [gone] = await activeCount('repl-any', 1);
    for (const p of [held, gone]) {
      // Not ready since long ago: the back-off after this failure has run out by the time it is deleted.
      await setPod(p, 'Running', { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: LONG_AGO }] });
      expect((await c.request('DELETE', `${PODS}/${p.metadata.name}`)).status).to.equal(200);
    }
    const [replacement] = await activeCount('repl-any', 1);
    expect(replacement.metadata.name).to.not.equal(gone.metadata.name);
    await until('repl-any', (x) => x.status?.failed === 1);
    const waiting = await until('repl-failed', (x) => x.status?.terminating === 1);
    expect(waiting.status.active ?? 0).to.equal(0);
    expect(await active('repl-failed')).to.deep.equal([]);
    await setPod(held, 'Failed');
    const [next] = await activeCount('repl-failed', 1);
    expect(next.metadata.name).to.not.equal(held.metadata.name);
    await until('repl-failed', (x) => x.status?.failed === 1 && x.status?.terminating === 0);
  });

  it('managedBy another controller: the job is left alone', async () => {
    await create('external', { managedBy: 'example.com/other' });
    await create('internal');
    await activeCount('internal', 1);
    expect(await pods('external')).to.deep.equal([]);
    expect((await get('external')).status ?? {}).to.deep.equal({});
  });

  it('a controller-manager restart mid-job counts each pod once: uncounted pods with and without their finalizer', async () => {
    await create('restart', { completions: 4, parallelism: 4 });
    const list = await activeCount('restart', 4);
    await c.kill('controller-manager', 'SIGTERM'); // it lets go of its Lease: the next one leads at once
    // As if the controller had written two UIDs into uncountedTerminatedPods and stopped after releasing only one.
    for (const p of list.slice(0, 2)) await setPod(p, 'Succeeded');
    const released = await c.request('PATCH', `${PODS}/${list[0].metadata.name}`, { body: { metadata: { finalizers: null } }, headers: MERGE });
    expect(released.status).to.equal(200);
    const uncounted = { uncountedTerminatedPods: { succeeded: [list[0].metadata.uid, list[1].metadata.uid] } };
    expect((await c.request('PATCH', `${JOBS}/restart/status`, { body: { status: uncounted }, headers: MERGE })).status).to.equal(200);
    await setPod(list[2], 'Succeeded');
    await c.startService('controller-manager');
    await until('restart', (x) => x.status?.succeeded === 3 && (x.status?.uncountedTerminatedPods?.succeeded ?? []).length === 0);
    await setPod(list[3], 'Succeeded');
    const done = await until('restart', (x) => isTrue(x, 'Complete'));
    expect(done.status.succeeded).to.equal(4);
    expect(await pods('restart')).to.have.length(4);
  });

  it('kubectl 1.33: create job, and wait --for=condition=complete while the pod succeeds', async function () {
    if (!kubectlPath()) this.skip();
    const created = await kubectl(c.kubeconfig, ['create', 'job', 'cli', '--image=busybox', '-n', NS]);
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stdout).to.contain('job.batch/cli created');
    const waiting = kubectl(c.kubeconfig, ['wait', '--for=condition=complete', 'job/cli', '-n', NS, '--timeout=30s']);
    const [pod] = await activeCount('cli', 1);
    await setPod(pod, 'Succeeded');
    const waited = await waiting;
    expect(waited.code, waited.stderr).to.equal(0);
    expect(waited.stdout).to.contain('job.batch/cli condition met');
  });
});
