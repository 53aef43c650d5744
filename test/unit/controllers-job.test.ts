import { expect } from 'chai';
import { countIndexes, firstFreeIndexes, formatIndexes, parseIndexes, withIndexes } from '../../internal/controllers/job/indexes.js';
import { activePodsForRemoval, isPodFailed, podFromTemplate, podNamePrefix } from '../../internal/controllers/job/pods.js';
import {
  isIndexFailed, matchPodFailurePolicy, matchSuccessPolicy, nextBackoffRecord, nextIndexFailures, remainingBackoff,
} from '../../internal/controllers/job/policies.js';
import { PodExpectations } from '../../internal/controllers/job/expectations.js';
import { JobSync, type JobApi } from '../../internal/controllers/job/sync.js';
import { countReleased } from '../../internal/controllers/job/counting.js';
import type { Condition, Job, Pod } from '../../internal/controllers/job/types.js';

const TRACKING = 'batch.svc.io/job-tracking';
const INDEX = 'batch.svc.io/job-completion-index';

const job = (spec: Partial<Job['spec']> = {}, status: Job['status'] = {}): Job => ({
  apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'ns', uid: 'job-uid', resourceVersion: '1' },
  spec: { parallelism: 1, completions: 1, backoffLimit: 6, template: { metadata: { labels: { 'job-name': 'j' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'main' }] } }, ...spec },
  status,
});

let podCount = 0;
function pod(phase: string, opts: { index?: number; exitCode?: number; container?: string; conditions?: Condition[]; finalizer?: boolean; finishedAt?: string } = {}): Pod {
  podCount++;
  const terminated = opts.exitCode !== undefined ? { exitCode: opts.exitCode, finishedAt: opts.finishedAt ?? '2024-01-01T00:00:00Z' } : undefined;
  return {
    metadata: {
      name: `p${podCount}`, namespace: 'ns', uid: `uid-${podCount}`, creationTimestamp: '2024-01-01T00:00:00Z',
      annotations: opts.index !== undefined ? { [INDEX]: String(opts.index) } : {}, finalizers: opts.finalizer === false ? [] : [TRACKING],
    },
    status: { phase, conditions: opts.conditions ?? [], containerStatuses: [{ name: opts.container ?? 'main', state: terminated ? { terminated } : {} }] },
  };
}

describe('Job controller: index sets', () => {
  it('parses, merges and formats ranges as the status writes them (two neighbours with a comma)', () => {
    const set = parseIndexes('0-2,5,7-8', 10);
    expect(set).to.deep.equal([[0, 2], [5, 5], [7, 8]]);
    expect(formatIndexes(set)).to.equal('0-2,5,7,8');
    expect(formatIndexes(withIndexes(set, [3, 4, 6]))).to.equal('0-8');
    expect(countIndexes(set)).to.equal(6);
  });

  it('reads leniently: indexes beyond completions are dropped, bad fragments skipped', () => {
    expect(parseIndexes('1,x,3-9', 5)).to.deep.equal([[1, 1], [3, 4]]);
    expect(parseIndexes('', 5)).to.deep.equal([]);
  });

  it('finds the lowest free indexes', () => {
    expect(firstFreeIndexes([[0, 1], [3, 3]], 3, 6)).to.deep.equal([2, 4, 5]);
    expect(firstFreeIndexes([[0, 4]], 2, 5)).to.deep.equal([]);
  });
});

describe('Job controller: pod failure policy', () => {
  const rules = [
    { action: 'Bogus', onExitCodes: { operator: 'In', values: [1] } },
    { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] },
    { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
    { action: 'Count', onExitCodes: { operator: 'NotIn', values: [1, 2] } },
  ];
  const j = job({ podFailurePolicy: { rules } });

  it('the first matching rule decides; unknown actions are skipped', () => {
    expect(matchPodFailurePolicy(j, pod('Failed', { exitCode: 1, conditions: [{ type: 'DisruptionTarget', status: 'True' }] }))).to.deep.equal({ action: 'Ignore', countFailed: false });
    const failJob = matchPodFailurePolicy(j, pod('Failed', { exitCode: 42 }));
    expect(failJob.action).to.equal('FailJob');
    expect(failJob.failJobMessage).to.match(/^Container main for pod ns\/p\d+ failed with exit code 42 matching FailJob rule at index 2$/);
    expect(matchPodFailurePolicy(j, pod('Failed', { exitCode: 7 }))).to.deep.equal({ action: 'Count', countFailed: true });
  });

  it('exit code 0 and other containers do not match; no match counts the failure', () => {
    expect(matchPodFailurePolicy(j, pod('Failed', { exitCode: 42, container: 'side' }))).to.deep.equal({ action: 'Count', countFailed: true });
    expect(matchPodFailurePolicy(j, pod('Failed', { exitCode: 0 }))).to.deep.equal({ countFailed: true });
    expect(matchPodFailurePolicy(j, pod('Failed', { exitCode: 2 }))).to.deep.equal({ countFailed: true });
  });

  it('an index fails on a FailIndex rule, or once its counted failures reach backoffLimitPerIndex', () => {
    const failIndex = job({ completionMode: 'Indexed', completions: 2, backoffLimitPerIndex: 2, podFailurePolicy: { rules: [{ action: 'FailIndex', onExitCodes: { operator: 'In', values: [9] } }] } });
    expect(isIndexFailed(failIndex, pod('Failed', { index: 0, exitCode: 9 }))).to.equal(true);
    const second = pod('Failed', { index: 0, exitCode: 1 });
    expect(isIndexFailed(failIndex, second)).to.equal(false);
    second.metadata.annotations!['batch.svc.io/job-index-failure-count'] = '2';
    expect(isIndexFailed(failIndex, second)).to.equal(true);
  });

  it('a pod deleted before it ended is failed, unless only failed pods are replaced', () => {
    const deleted = pod('Running');
    deleted.metadata.deletionTimestamp = '2024-01-01T00:00:00Z';
    expect(isPodFailed(deleted, job())).to.equal(true);
    expect(isPodFailed(deleted, job({ podReplacementPolicy: 'Failed' }))).to.equal(false);
  });
});

describe('Job controller: success policy and back-off', () => {
  const j = job({ completionMode: 'Indexed', completions: 5, successPolicy: { rules: [{ succeededIndexes: '0-2', succeededCount: 2 }, { succeededCount: 4 }] } });

  it('a rule is met by its count of the listed indexes, or by the count alone', () => {
    expect(matchSuccessPolicy(j, [[0, 0]])).to.equal(undefined);
    expect(matchSuccessPolicy(j, [[0, 0], [2, 2]])).to.equal('Matched rules at index 0');
    expect(matchSuccessPolicy(j, [[3, 4], [0, 0]].sort() as [number, number][])).to.equal(undefined);
    expect(matchSuccessPolicy(j, [[0, 0], [3, 4], [1, 1]].sort() as [number, number][])).to.equal('Matched rules at index 0');
    expect(matchSuccessPolicy(job({ completionMode: 'Indexed', completions: 5, successPolicy: { rules: [{ succeededCount: 2 }] } }), [[3, 4]])).to.equal('Matched rules at index 0');
  });

  it('waits 10 s after a failure, doubling per consecutive failure, at most 6 minutes', () => {
    expect(remainingBackoff(1_000, 1, 0)).to.equal(9_000);
    expect(remainingBackoff(0, 3, 0)).to.equal(40_000);
    expect(remainingBackoff(0, 20, 0)).to.equal(360_000);
    expect(remainingBackoff(20_000, 1, 0)).to.equal(0);
    expect(remainingBackoff(0, 0, undefined)).to.equal(0);
  });

  it('a success resets the failures counted before it', () => {
    const failedEarly = pod('Failed', { exitCode: 1, finishedAt: '2024-01-01T00:00:00Z' });
    const succeeded = pod('Succeeded', { exitCode: 0, finishedAt: '2024-01-01T00:01:00Z' });
    const failedLate = pod('Failed', { exitCode: 1, finishedAt: '2024-01-01T00:02:00Z' });
    expect(nextBackoffRecord({ failuresAfterLastSuccess: 3 }, [succeeded], [failedEarly, failedLate]))
      .to.deep.equal({ failuresAfterLastSuccess: 1, lastFailureTime: Date.parse('2024-01-01T00:02:00Z') });
    expect(nextBackoffRecord({ failuresAfterLastSuccess: 1, lastFailureTime: 5 }, [], [failedEarly]).failuresAfterLastSuccess).to.equal(2);
  });

  it('a replacement carries its index failure count on; ignored failures count apart', () => {
    const failed = pod('Failed', { index: 0, exitCode: 3 });
    failed.metadata.annotations!['batch.svc.io/job-index-failure-count'] = '2';
    expect(nextIndexFailures(job({ backoffLimitPerIndex: 3 }), failed)).to.deep.equal({ failed: 3, ignored: 0 });
    const ignoring = job({ backoffLimitPerIndex: 3, podFailurePolicy: { rules: [{ action: 'Ignore', onExitCodes: { operator: 'In', values: [3] } }] } });
    expect(nextIndexFailures(ignoring, failed)).to.deep.equal({ failed: 2, ignored: 1 });
  });
});

describe('Job controller: pods', () => {
  it('names: `<job>-` and `<job>-<index>-`, cut so that the index stays', () => {
    expect(podNamePrefix('pi', -1)).to.equal('pi-');
    expect(podNamePrefix('pi', 3)).to.equal('pi-3-');
    const long = podNamePrefix('x'.repeat(70), 12);
    expect(long).to.have.length(58);
    expect(long.endsWith('-12-')).to.equal(true);
  });

  it('a pod from the template is owned by the job, held by the finalizer, and (Indexed) knows its index', () => {
    const p = podFromTemplate(job({ completionMode: 'Indexed', completions: 3 }), 2, { failed: 1, ignored: 0 });
    expect(p.metadata.finalizers).to.deep.equal([TRACKING]);
    expect(p.metadata.annotations).to.deep.equal({ [INDEX]: '2', 'batch.svc.io/job-index-failure-count': '1' });
    expect(p.metadata.labels).to.deep.equal({ 'job-name': 'j', [INDEX]: '2' });
    expect((p.spec as any).hostname).to.equal('j-2');
    expect(p.metadata.ownerReferences).to.deep.equal([{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'job-uid', controller: true, blockOwnerDeletion: true }]);
  });

  it('removal: pods without a valid index and duplicates of an index first, then pending before running', () => {
    const j = job({ completionMode: 'Indexed', completions: 2 });
    const running0 = pod('Running', { index: 0 });
    const pending0 = pod('Pending', { index: 0 });
    const noIndex = pod('Running');
    const beyond = pod('Running', { index: 5 });
    const one = pod('Running', { index: 1 });
    expect(activePodsForRemoval(j, [running0, pending0, noIndex, beyond, one], 0).map((p) => p.metadata.name).sort())
      .to.deep.equal([pending0, noIndex, beyond].map((p) => p.metadata.name).sort());
    expect(activePodsForRemoval(job({ completions: 3 }), [running0, pending0], 1)).to.deep.equal([pending0]);
  });
});

/** An API that answers as the server would, keeping what was written. */
function fakeApi(stored: Job) {
  const calls: string[] = [];
  const api: JobApi = {
    createPod: async () => { calls.push('create'); return { status: 201, name: `new-${calls.length}` }; },
    deletePod: async (p) => { calls.push(`delete ${p.metadata.name}`); return { status: 200 }; },
    removeFinalizer: async (p) => { calls.push(`release ${p.metadata.name}`); return 200; },
    updateStatus: async (j) => {
      calls.push(`status ${JSON.stringify({ succeeded: j.status?.succeeded ?? 0, failed: j.status?.failed ?? 0, uncounted: j.status?.uncountedTerminatedPods })}`);
      stored.status = structuredClone(j.status);
      return structuredClone(j);
    },
  };
  return { api, calls };
}

function run(j: Job, pods: Pod[], api: JobApi): Promise<void> {
  const deps = { api, record: () => undefined, expectations: new PodExpectations(), backoff: new Map(), now: Date.now, requeueAfter: () => undefined };
  return new JobSync(deps, 'ns/j', structuredClone(j), pods).run();
}

describe('Job controller: counting through uncountedTerminatedPods', () => {
  it('a finished pod is written as uncounted first, then released, then counted', async () => {
    const j = job({ completions: 2, parallelism: 2 }, { startTime: '2024-01-01T00:00:00Z', active: 1, ready: 0, terminating: 0 });
    const done = pod('Succeeded', { exitCode: 0 });
    const { api, calls } = fakeApi(j);
    await run(j, [done, pod('Running')], api);
    expect(calls).to.deep.equal([
      `status {"succeeded":0,"failed":0,"uncounted":{"succeeded":["${done.metadata.uid}"]}}`,
      `release ${done.metadata.name}`,
      'status {"succeeded":1,"failed":0,"uncounted":{}}',
    ]);
  });

  it('after a restart: an uncounted pod already released is counted once; one still held is released, then counted', async () => {
    const released = pod('Succeeded', { exitCode: 0, finalizer: false });
    const held = pod('Succeeded', { exitCode: 0 });
    const j = job({ completions: 3, parallelism: 3 }, {
      startTime: '2024-01-01T00:00:00Z', active: 1, ready: 0, terminating: 0, succeeded: 0,
      uncountedTerminatedPods: { succeeded: [released.metadata.uid!, held.metadata.uid!] },
    });
    const { api, calls } = fakeApi(j);
    await run(j, [released, held, pod('Running')], api);
    expect(calls).to.deep.equal([
      `status {"succeeded":1,"failed":0,"uncounted":{"succeeded":["${held.metadata.uid}"]}}`,
      `release ${held.metadata.name}`,
      'status {"succeeded":2,"failed":0,"uncounted":{}}',
    ]);
  });

  it('more failed indexes than maxFailedIndexes fail the job', async () => {
    const spec = { completionMode: 'Indexed', completions: 4, parallelism: 4, backoffLimitPerIndex: 0, maxFailedIndexes: 1 };
    const j = job(spec, { startTime: '2024-01-01T00:00:00Z', active: 2, ready: 0, terminating: 0, failedIndexes: '0' });
    const { api } = fakeApi(j);
    await run(j, [pod('Failed', { index: 1, exitCode: 1 }), pod('Running', { index: 2 }), pod('Running', { index: 3 })], api);
    expect(j.status?.failedIndexes).to.equal('0,1');
    expect(j.status?.conditions?.map((c) => `${c.type}:${c.reason}`)).to.deep.equal(['FailureTarget:MaxFailedIndexesExceeded']);
  });

  it('counting moves only UIDs whose pods no longer hold the finalizer', () => {
    const j = job({}, { succeeded: 1, failed: 0, uncountedTerminatedPods: { succeeded: ['a', 'b'], failed: ['c'] } });
    expect(countReleased(j, new Set(['b']))).to.equal(true);
    expect(j.status).to.deep.include({ succeeded: 2, failed: 1, uncountedTerminatedPods: { succeeded: ['b'], failed: [] } });
    expect(countReleased(j, new Set(['b']))).to.equal(false);
  });

  it('a job past its backoff limit deletes its running pods, counts them failed, and writes FailureTarget before Failed', async () => {
    const running = pod('Running');
    const j = job({ backoffLimit: 0, parallelism: 2, completions: 2 }, { startTime: '2024-01-01T00:00:00Z', active: 1, failed: 1, ready: 0, terminating: 0 });
    const { api, calls } = fakeApi(j);
    await run(j, [running], api);
    expect(calls[0]).to.equal(`delete ${running.metadata.name}`);
    expect(j.status?.conditions?.map((c) => c.type)).to.deep.equal(['FailureTarget']);
    expect(j.status).to.include({ failed: 2, terminating: 1 });
    // The pod gone, the next pass turns the target into Failed.
    await run(j, [], fakeApi(j).api);
    expect(j.status?.conditions?.map((c) => `${c.type}=${c.status}:${c.reason}`)).to.deep.equal(['FailureTarget=True:BackoffLimitExceeded', 'Failed=True:BackoffLimitExceeded']);
    expect(j.status?.completionTime).to.equal(undefined);
  });
});
