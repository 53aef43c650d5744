import { expect } from 'chai';
import { waitForRevision } from '../../gateway/freshness.js';
import type { RevisionFeed } from '../../gateway/hub.js';
import type { StorageClient } from '../../internal/storage/client.js';
import { StatusError } from '../../internal/apimachinery/status.js';

/** Storage at a fixed revision that counts how often it is asked. */
function storageAt(revision: number) {
  const asked: number[] = [];
  const started = Date.now();
  const storage = { currentRevision: async () => { asked.push(Date.now() - started); return { revision, compactRevision: 0 }; } };
  return { storage: storage as unknown as StorageClient, asked };
}

/** A change stream that reaches `revision` after `afterMs` (never when undefined). */
function feedReaching(revision: number, afterMs?: number): RevisionFeed {
  let current = 0;
  const reachedAt = afterMs === undefined ? undefined : Date.now() + afterMs;
  if (afterMs !== undefined) setTimeout(() => { current = revision; }, afterMs);
  return {
    get currentRevision() { return current; },
    reached: (wanted, timeoutMs) => new Promise((resolve) => {
      const wait = reachedAt === undefined || wanted > revision ? timeoutMs : Math.min(timeoutMs, Math.max(0, reachedAt - Date.now()));
      setTimeout(() => resolve(wait < timeoutMs), wait);
    }),
  };
}

describe('gateway: reads waiting for a resourceVersion', function () {
  this.timeout(10_000);

  it('asks storage nothing when the change stream has shown the revision already', async () => {
    const { storage, asked } = storageAt(10);
    const revisions = feedReaching(10, 0);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await waitForRevision({ storage, revisions }, 10);
    expect(asked).to.deep.equal([]);
  });

  it('answers when the change stream brings the revision, having asked storage once', async () => {
    const { storage, asked } = storageAt(10);
    const started = Date.now();
    await waitForRevision({ storage, revisions: feedReaching(11, 300) }, 11);
    expect(Date.now() - started).to.be.within(250, 900);
    expect(asked).to.have.length(1);
  });

  it('gives up with 504 after 3 s, having asked storage at most once a second', async () => {
    const { storage, asked } = storageAt(10);
    const err = await waitForRevision({ storage, revisions: feedReaching(11) }, 11).then(() => undefined, (e) => e);
    expect(err).to.be.instanceOf(StatusError);
    expect((err as StatusError).code).to.equal(504);
    expect((err as StatusError).message).to.equal('Too large resource version: 11, current: 10');
    expect(asked.length).to.be.within(3, 4);
    for (let i = 1; i < asked.length; i++) expect(asked[i] - asked[i - 1]).to.be.at.least(900);
  });
});
