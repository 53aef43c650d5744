// Services run as several processes: the gateway given two authn addresses
// (--authn-address=a,b) keeps authenticating when the one it calls is killed,
// calls it again once it is back, and answers 503 at once while none serves.
// Requests with a bearer token no authenticator knows are refused by authn (401)
// and never kept by the gateway's cache: each one is a call to authn.
import { expect } from 'chai';
import { Cluster, waitFor } from '../lib/cluster.js';
import { MetricsScraper } from '../../internal/metrics/index.js';

describe('replicas: two authn processes behind one gateway', function () {
  this.timeout(120_000);
  let c: Cluster;
  let token = 0;
  /** One request that authn must answer: 401 while one serves. */
  const probe = async () => (await c.request('GET', '/api/v1/namespaces', { anonymous: true, headers: { Authorization: `Bearer unknown-${++token}` } })).status;
  /** The Authenticate calls the first authn process counted, asked of it directly (only the gateway calls it). */
  const authenticateCalls = async () => {
    const scraper = new MetricsScraper([c.addresses.authn]);
    const text = await scraper.scrape().finally(() => scraper.close());
    return [...text.matchAll(/^svc_authn_authenticate_requests_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  };

  before(async () => {
    c = await new Cluster({ replicas: { authn: 1 }, withoutControllerManager: true }).start();
  });

  after(async () => {
    await c?.stop();
  });

  it('keeps authenticating when the authn it calls is killed, and calls it again once it is back', async () => {
    expect(await probe()).to.equal(401);
    expect(await authenticateCalls()).to.be.above(0);
    // Four clients in a steady loop across the kill, until 2 s after it.
    const statuses: Array<{ at: number; status: number; ms: number }> = [];
    let killedAt = 0;
    const client = async () => {
      while (!killedAt || Date.now() < killedAt + 2000) {
        const started = Date.now();
        statuses.push({ at: started, status: await probe().catch(() => 0), ms: Date.now() - started });
      }
    };
    const clients = Array.from({ length: 4 }, client);
    await waitFor(() => statuses.length >= 20, 10_000, 10);
    await c.kill('authn');
    killedAt = Date.now();
    await Promise.all(clients);
    const after = statuses.filter((s) => s.at >= killedAt);
    expect(after.length).to.be.above(10);
    // Authenticate is free of side effects: a call in flight at the kill is repeated on the other process.
    expect(statuses.filter((s) => s.status !== 401)).to.deep.equal([]);
    const slowest = Math.max(...statuses.filter((s) => s.at >= killedAt - 1000).map((s) => s.ms));
    expect(slowest, 'the slowest request around the kill (ms)').to.be.below(2000);

    await c.startService('authn');
    // Once its health says SERVING the gateway calls it again: the restarted process counts Authenticate calls.
    expect(await waitFor(async () => (await probe()) === 401 && (await authenticateCalls()) > 0, 10_000)).to.equal(true);
    // And it serves alone when the other one goes.
    await c.killReplica('authn-2');
    for (let i = 0; i < 10; i++) expect(await probe()).to.equal(401);
  });

  it('answers 503 at once while no authn serves, and authenticates again when one is back', async () => {
    await c.kill('authn');
    await c.killReplica('authn-2');
    // The first request may still find a connection closing; then every one is refused at once.
    expect(await waitFor(async () => (await probe()) === 503, 5000, 50)).to.equal(true);
    const started = Date.now();
    for (let i = 0; i < 5; i++) expect(await probe()).to.equal(503);
    expect(Date.now() - started, 'five refusals (ms)').to.be.below(1000);
    await c.startReplica('authn-2');
    expect(await waitFor(async () => (await probe()) === 401, 10_000, 50)).to.equal(true);
  });
});
