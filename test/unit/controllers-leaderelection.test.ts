// Leader election on a Lease, against an in-memory Lease that refuses writes of a
// stale resourceVersion as the API does: creation, renewal, takeover after the lease
// duration on the candidate's own clock, one winner among racing candidates, loss
// when renewals fail past the deadline, and release.
import { expect } from 'chai';
import type { ApiClient } from '../../internal/client/index.js';
import { LeaderElector, type LeaderElectionOptions } from '../../internal/controllers/leaderelection.js';

class FakeLeases {
  lease?: any;
  rv = 0;
  down = false;
  client(): ApiClient {
    const answer = (status: number, body?: unknown) => Promise.resolve({ status, body: structuredClone(body) });
    return {
      get: async () => (this.down ? answer(503) : this.lease ? answer(200, this.lease) : answer(404)),
      request: async (method: string, _path: string, body: any) => {
        if (this.down) return answer(503);
        if (method === 'POST') {
          if (this.lease) return answer(409);
          this.lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++this.rv) } };
          return answer(201, this.lease);
        }
        if (body.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) return answer(409);
        this.lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++this.rv) } };
        return answer(200, this.lease);
      },
    } as unknown as ApiClient;
  }
}

describe('controllers: leader election', () => {
  let leases: FakeLeases;
  let now: number;
  const elector = (identity: string, opts: Partial<LeaderElectionOptions> = {}) => new LeaderElector(leases.client(), {
    namespace: 'svc-system', name: 'svc-controller-manager', identity, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2000, clock: () => now, ...opts,
  });
  beforeEach(() => { leases = new FakeLeases(); now = Date.UTC(2025, 0, 1); });

  it('the first candidate creates the Lease; renewing keeps its acquire time and transitions', async () => {
    const a = elector('a');
    expect(await a.tryAcquireOrRenew()).to.equal(true);
    expect(leases.lease.spec).to.deep.equal({
      holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: '2025-01-01T00:00:00.000000Z', renewTime: '2025-01-01T00:00:00.000000Z', leaseTransitions: 0,
    });
    now += 2000;
    expect(await a.tryAcquireOrRenew()).to.equal(true);
    expect(leases.lease.spec).to.include({ acquireTime: '2025-01-01T00:00:00.000000Z', renewTime: '2025-01-01T00:00:02.000000Z', leaseTransitions: 0 });
  });

  it('another candidate waits while the holder renews, and takes over a lease duration after it last saw a change', async () => {
    const a = elector('a');
    const held: string[] = [];
    const b = elector('b', { onHeldBy: (h) => held.push(h) });
    await a.tryAcquireOrRenew();
    for (let i = 0; i < 10; i++) {
      now += 2000;
      await a.tryAcquireOrRenew();
      expect(await b.tryAcquireOrRenew()).to.equal(false);
    }
    expect(held).to.deep.equal(['a']);
    now += 14_999; // a stopped renewing
    expect(await b.tryAcquireOrRenew()).to.equal(false);
    now += 2;
    expect(await b.tryAcquireOrRenew()).to.equal(true);
    expect(leases.lease.spec).to.include({ holderIdentity: 'b', leaseTransitions: 1 });
    // The former holder now sees another holder with a live lease.
    expect(await a.tryAcquireOrRenew()).to.equal(false);
  });

  it('a candidate that first sees a lease waits its full duration, whatever its renewTime says', async () => {
    await elector('a').tryAcquireOrRenew();
    now += 60_000; // the holder is long dead, but b has only just looked
    const b = elector('b');
    expect(await b.tryAcquireOrRenew()).to.equal(false);
    now += 15_001;
    expect(await b.tryAcquireOrRenew()).to.equal(true);
  });

  it('of two candidates writing the same expired lease, one wins', async () => {
    await elector('a').tryAcquireOrRenew();
    const b = elector('b');
    const c = elector('c');
    await Promise.all([b.tryAcquireOrRenew(), c.tryAcquireOrRenew()]);
    now += 15_001;
    const won = await Promise.all([b.tryAcquireOrRenew(), c.tryAcquireOrRenew()]);
    expect(won.filter(Boolean)).to.have.length(1);
  });

  it('a leader that cannot renew within the renew deadline has lost; a released lease is taken at once', async () => {
    const a = new LeaderElector(leases.client(), { namespace: 's', name: 'l', identity: 'a', leaseDurationMs: 300, renewDeadlineMs: 200, retryPeriodMs: 40 });
    expect(await a.acquire()).to.equal(true);
    let lost = 0;
    a.keep(() => lost++);
    await new Promise((r) => setTimeout(r, 150));
    expect(lost).to.equal(0);
    leases.down = true;
    await new Promise((r) => setTimeout(r, 400));
    expect(lost).to.equal(1);
    expect(a.isLeader).to.equal(false);

    leases = new FakeLeases();
    const d = elector('d');
    expect(await d.acquire()).to.equal(true);
    expect(await d.release()).to.equal(true);
    expect(leases.lease.spec).to.deep.include({ leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(leases.lease.spec.holderIdentity).to.equal(undefined);
    expect(await elector('e').tryAcquireOrRenew()).to.equal(true);
  });
});
