// The controllers' work queue (a key queued once, never worked on twice at once,
// failures retried with back-off, delayed adds) and the TTL-after-finished controller's
// reading of when a Job finished and when it may go.
import { expect } from 'chai';
import { WorkQueue } from '../../internal/controllers/workqueue.js';
import { expiresAt, finishedAt } from '../../internal/controllers/ttlafterfinished.js';
import { waitFor } from '../lib/cluster.js';

describe('controllers: work queue', () => {
  it('a key added while waiting runs once; added while running, runs again after, never twice at once', async () => {
    const runs: string[] = [];
    let inFlight = 0;
    let most = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const q = new WorkQueue('t', async (key) => {
      inFlight++;
      most = Math.max(most, inFlight);
      runs.push(key);
      if (runs.length === 1) await gate;
      inFlight--;
    }, { workers: 4 });
    q.add('a');
    q.add('a'); // running: queued for once more
    q.add('a');
    q.add('b');
    release();
    expect(await waitFor(() => q.idle, 2000, 5)).to.equal(true);
    expect(runs.sort()).to.deep.equal(['a', 'a', 'b']);
    expect(most).to.equal(2); // a and b side by side, never a twice
  });

  it('a failure is retried with back-off; forget drops a pending delay', async () => {
    let tries = 0;
    const failures: string[] = [];
    const q = new WorkQueue('t', async () => { if (++tries < 3) throw new Error('not yet'); }, { retryMinMs: 5, report: (_k, e) => failures.push(e.message) });
    q.add('k');
    expect(await waitFor(() => tries === 3 && q.idle, 2000, 5)).to.equal(true);
    expect(failures).to.deep.equal(['not yet', 'not yet']);
    let ran = 0;
    const later = new WorkQueue('t', async () => { ran++; });
    later.addAfter('x', 30);
    later.addAfter('x', 5000); // a later time does not push back the sooner one
    expect(await waitFor(() => ran === 1, 2000, 5)).to.equal(true);
    later.addAfter('y', 20);
    later.forget('y');
    await new Promise((r) => setTimeout(r, 60));
    expect(ran).to.equal(1);
    later.stop();
  });
});

describe('controllers: TTL after finished, when a Job may go', () => {
  const job = (ttl: number | undefined, conditions: object[], deleting = false) => ({
    metadata: { name: 'j', namespace: 'n', ...(deleting ? { deletionTimestamp: '2025-01-01T00:00:09Z' } : {}) },
    spec: { ttlSecondsAfterFinished: ttl }, status: { conditions },
  });
  const done = (type: string, status = 'True') => ({ type, status, lastTransitionTime: '2025-01-01T00:00:10Z' });
  const t10 = Date.parse('2025-01-01T00:00:10Z');

  it('finished is a true Complete or Failed condition, at its transition time', () => {
    expect(finishedAt(job(0, [done('Complete')]))).to.equal(t10);
    expect(finishedAt(job(0, [done('Failed')]))).to.equal(t10);
    expect(finishedAt(job(0, [done('Complete', 'False'), done('Suspended')]))).to.equal(undefined);
    expect(finishedAt(job(0, [{ type: 'Complete', status: 'True' }]))).to.equal(undefined);
  });

  it('the TTL counts from the finish; no TTL, not finished or already deleting: never', () => {
    expect(expiresAt(job(0, [done('Complete')]))).to.equal(t10);
    expect(expiresAt(job(100, [done('Failed')]))).to.equal(t10 + 100_000);
    expect(expiresAt(job(undefined, [done('Complete')]))).to.equal(undefined);
    expect(expiresAt(job(5, []))).to.equal(undefined);
    expect(expiresAt(job(5, [done('Complete')], true))).to.equal(undefined);
  });
});
