// Services run as several processes, on one cluster: two authn, two gateways and
// a NATS cluster of three nodes. The gateway given two authn addresses
// (--authn-address=a,b) keeps authenticating when the one it calls is killed,
// calls it again once it is back, and answers 503 at once while none serves
// (requests with a bearer token no authenticator knows are refused by authn, 401,
// and never kept by the gateway's cache: each one is a call to authn). A write
// through one gateway is seen through the other, which serves on when the first
// is killed. Killing the NATS node a gateway is connected to ends its watches with
// an error or leaves them whole, never silent, and writes go on.
import { expect } from 'chai';
import { Cluster, waitFor } from '../lib/cluster.js';
import { MetricsScraper } from '../../internal/metrics/index.js';

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';
const configMap = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { k: name } });

describe('replicas: authn, gateways and NATS run as several processes', function () {
  this.timeout(120_000);
  let c: Cluster;
  let token = 0;
  /** One request that authn must answer: 401 while one serves. */
  const probe = async (port = c.port) =>
    (await c.request('GET', '/api/v1/namespaces', { port, anonymous: true, headers: { Authorization: `Bearer unknown-${++token}` } })).status;
  /** The Authenticate calls the first authn process counted, asked of it directly (only the gateway calls it). */
  const authenticateCalls = async () => {
    const scraper = new MetricsScraper([c.addresses.authn]);
    const text = await scraper.scrape().finally(() => scraper.close());
    return [...text.matchAll(/^svc_authn_authenticate_requests_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  };

  before(async () => {
    c = await new Cluster({ replicas: { authn: 1, gateway: 1 }, natsNodes: 3, withoutControllerManager: true }).start();
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
    const clients = Array.from({ length: 4 }, () => client());
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
    // Each gateway asks a replica that was down for its health again every half second, on a connection retried
    // at most every second.
    for (const port of [c.port, c.replicas.get('gateway-2')!.port]) expect(await waitFor(async () => (await probe(port)) === 401, 5000, 50)).to.equal(true);
  });

  it('shows a write through one gateway to a watch and a consistent read through the other, which serves on when the first is killed', async () => {
    const other = c.replicas.get('gateway-2')!.port;
    const listed = await c.request('GET', CONFIGMAPS, { port: other });
    expect(listed.status, listed.text).to.equal(200);
    const watching = c.watch(`${CONFIGMAPS}?watch=1&resourceVersion=${listed.body.metadata.resourceVersion}`, {
      port: other, until: (events) => events.some((e) => e.object?.metadata?.name === 'through-one'),
    });
    const created = await c.request('POST', CONFIGMAPS, { body: configMap('through-one') });
    expect(created.status).to.equal(201);
    const read = await c.request('GET', `${CONFIGMAPS}/through-one`, { port: other });
    expect([read.status, read.body.metadata?.resourceVersion], read.text).to.deep.equal([200, created.body.metadata.resourceVersion]);
    const watched = await watching;
    expect(watched.events.map((e) => [e.type, e.object.metadata.name, e.object.metadata.resourceVersion]))
      .to.deep.equal([['ADDED', 'through-one', created.body.metadata.resourceVersion]]);

    await c.kill('gateway');
    for (let i = 0; i < 5; i++) {
      const written = await c.request('POST', CONFIGMAPS, { port: other, body: configMap(`through-two-${i}`) });
      expect(written.status, written.text).to.equal(201);
      const got = await c.request('GET', `${CONFIGMAPS}/through-two-${i}`, { port: other });
      expect(got.status, got.text).to.equal(200);
    }
    // Back on its port, the first sees what was written through the second.
    await c.startService('gateway');
    const seen = await c.request('GET', `${CONFIGMAPS}/through-two-4`);
    expect(seen.status, seen.text).to.equal(200);
  });

  it('keeps watches whole or ends them, never silent, when the NATS node a gateway is connected to is killed; writes go on', async () => {
    const nats = c.natsCluster!;
    const node = await nats.nodeOf(`svc-gateway-${c.procs.get('gateway')!.pid}`);
    expect(node).to.be.a('number');
    const selector = 'labelSelector=fault%3Dnats';
    const rv = (await c.request('GET', `${CONFIGMAPS}?${selector}`)).body.metadata.resourceVersion;
    const names = Array.from({ length: 20 }, (_, i) => `nats-fault-${i}`);
    // One watch through each gateway, from before the first write.
    const watches = [c.port, c.replicas.get('gateway-2')!.port].map((port) => c.watch(`${CONFIGMAPS}?watch=1&${selector}&resourceVersion=${rv}`, {
      port, timeoutMs: 20_000, until: (events) => events.filter((e) => e.type === 'ADDED').length === names.length,
    }));
    const statuses: number[] = [];
    for (const [i, name] of names.entries()) {
      if (i === 5) await nats.kill(node!);
      statuses.push((await c.request('POST', CONFIGMAPS, { body: configMap(name, { fault: 'nats' }) })).status);
    }
    expect(statuses).to.deep.equal(names.map(() => 201));
    for (const watched of await Promise.all(watches)) {
      const added = watched.events.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata.name);
      // In order, without gap or duplicate, up to where the watch was ended (with an ERROR event or not).
      expect(added).to.deep.equal(names.slice(0, added.length));
      const whole = added.length === names.length;
      expect(whole || watched.ended, `a watch neither whole nor ended: ${JSON.stringify(watched.events.map((e) => e.type))}`).to.equal(true);
      const others = watched.events.filter((e) => e.type !== 'ADDED');
      expect(others.every((e) => e.type === 'ERROR') && others.length <= 1, JSON.stringify(others)).to.equal(true);
    }
    // New watches through the gateway that lost its node see new writes.
    const now = (await c.request('GET', `${CONFIGMAPS}?${selector}`)).body.metadata.resourceVersion;
    const fresh = c.watch(`${CONFIGMAPS}?watch=1&${selector}&resourceVersion=${now}`, { until: (events) => events.length > 0 });
    expect((await c.request('POST', CONFIGMAPS, { body: configMap('nats-fault-after', { fault: 'nats' }) })).status).to.equal(201);
    expect((await fresh).events.map((e) => [e.type, e.object.metadata.name])).to.deep.equal([['ADDED', 'nats-fault-after']]);
    await nats.restart(node!);
  });
});
