import { expect } from 'chai';
import { PublisherElection } from '../../internal/storage/etcd/election.js';
import type { EtcdStore } from '../../internal/storage/etcd/store.js';
import { testBackend } from '../lib/backends.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!check() && performance.now() < deadline) await sleep(10);
  return check();
}

describe('storage publisher election (etcd)', function () {
  this.timeout(30_000);
  const backend = testBackend('etcd3');

  it('a publisher paused past two thirds of its lease stops before it publishes again, and frees the key at once', async () => {
    const store = await backend.open() as EtcdStore;
    const told: string[] = [];
    const elect = (identity: string) => new PublisherElection(store.client, store.keys.publisherKey, {
      ttlSeconds: 3, identity, elected: () => told.push(`${identity} elected`), deposed: () => told.push(`${identity} deposed`), log: () => undefined,
    });
    const first = elect('a');
    let second: PublisherElection | undefined;
    try {
      expect(await until(() => first.isLeader, 5000), 'elected').to.equal(true);
      expect(first.mayPublish()).to.equal(true);
      // Paused (a frozen process, a starved event loop): no renewal runs for 2.1 s of a 3 s lease.
      const resumeAt = performance.now() + 2100;
      while (performance.now() < resumeAt) { /* paused */ }
      expect(first.mayPublish(), 'may publish once resumed').to.equal(false);
      expect(told).to.deep.equal(['a elected', 'a deposed']);
      // Its lease is revoked rather than left to run out: a campaigner takes the key well within the 3 s TTL.
      second = elect('b');
      const freed = performance.now();
      expect(await until(() => first.isLeader || second!.isLeader, 1500), 'a publisher again').to.equal(true);
      expect(performance.now() - freed).to.be.lessThan(1500);
    } finally {
      await first.stop();
      await second?.stop();
      await store.close();
    }
  });
});
