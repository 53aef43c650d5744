// Outages of the services behind the gateway: while the storage process is down
// under a stream of writes every refused request is 503 ServiceUnavailable with
// Retry-After (never 500), and writes succeed again once it is back on the same
// address; the same holds for the admission and authorization services.
import { expect } from 'chai';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';

const CMS = '/api/v1/namespaces/default/configmaps';

describe('service outages', function () {
  this.timeout(90_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('answers 503 with Retry-After while storage is down, and writes again once it is back', async () => {
    let n = 0;
    const failures: Response[] = [];
    let created = 0;
    let stop = false;
    const create = async () => {
      const res = await c.request('POST', CMS, { body: { metadata: { name: `cm-${n++}` } } });
      if (res.status === 201) created++;
      else failures.push(res);
      return res;
    };
    const writers = Array.from({ length: 4 }, async () => { while (!stop) await create(); });
    try {
      expect(await waitFor(() => created >= 10, 20_000, 20)).to.equal(true);
      await c.kill('storage');
      expect(await waitFor(() => failures.length >= 20, 20_000, 20), 'writes fail while storage is down').to.equal(true);
      const reads = await Promise.all([c.request('GET', CMS), c.request('GET', `${CMS}/cm-0`)]);
      await c.startService('storage');
      const before = created;
      expect(await waitFor(() => created >= before + 10, 30_000, 50), 'writes succeed again').to.equal(true);
      // Admission's memory of namespaces followed storage across the restart: new and terminating ones are told apart.
      expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'after-restart' } } })).status).to.equal(201);
      expect((await c.request('POST', '/api/v1/namespaces/after-restart/configmaps', { body: { metadata: { name: 'x', finalizers: ['example.com/keep'] } } })).status).to.equal(201);
      expect((await c.request('DELETE', '/api/v1/namespaces/after-restart')).status).to.equal(200);
      expect((await c.request('POST', '/api/v1/namespaces/after-restart/configmaps', { body: { metadata: { name: 'y' } } })).status).to.equal(403);
      for (const res of [...failures, ...reads]) {
        expect(res.status, res.text).to.equal(503);
        expect(res.headers['retry-after']).to.equal('1');
        expect(res.body).to.deep.include({ kind: 'Status', status: 'Failure', reason: 'ServiceUnavailable', code: 503 });
        expect(res.body.details).to.deep.include({ retryAfterSeconds: 1 });
      }
    } finally {
      stop = true;
      await Promise.all(writers);
    }
    expect(c.procs.get('gateway')?.exitCode).to.equal(null);
  });

  it('answers reads and watches that accept any state (resourceVersion=0) from the gateway\'s memory while storage does not answer', async () => {
    expect((await c.request('POST', CMS, { body: { metadata: { name: 'remembered' }, data: { k: 'v' } } })).status).to.equal(201);
    // The first read of a collection starts caching it once the gateway follows storage's changes again (after the
    // restart above; a watch is refused with 503 until then); reads go to storage until it is listed.
    const following = async () => (await c.watch(`${CMS}?watch=1`, { until: (e) => e.length > 0, timeoutMs: 2000 })).status === 200;
    expect(await waitFor(following, 10_000), 'watches served again').to.equal(true);
    expect(await waitFor(async () => (await c.request('GET', `${CMS}/remembered`)).status === 200, 10_000)).to.equal(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const storage = c.procs.get('storage')!;
    storage.kill('SIGSTOP');
    try {
      const one = await c.request('GET', `${CMS}/remembered?resourceVersion=0`, { timeoutMs: 5000 });
      expect(one.status, one.text).to.equal(200);
      expect(one.body.data).to.deep.equal({ k: 'v' });
      const list = await c.request('GET', `${CMS}?resourceVersion=0`, { timeoutMs: 5000 });
      expect(list.status, list.text).to.equal(200);
      expect(list.body.items.map((i: any) => i.metadata.name)).to.include('remembered');
      expect((await c.request('GET', `${CMS}/absent?resourceVersion=0`, { timeoutMs: 5000 })).status).to.equal(404);
      const watched = await c.watch(`${CMS}?watch=1&resourceVersion=0`, { until: (e) => e.some((ev) => ev.object?.metadata?.name === 'remembered'), timeoutMs: 5000 });
      expect(watched.status).to.equal(200);
      expect(watched.events.find((ev) => ev.object.metadata.name === 'remembered')?.type).to.equal('ADDED');
    } finally {
      storage.kill('SIGCONT');
    }
  });

  // Each time a namespace not asked for before: no kept authorization decision answers for it (one kept for a
  // name may answer for every name of the kind).
  let fresh = 0;
  const checks = {
    admission: { ask: () => c.request('POST', CMS, { body: { metadata: { name: `fresh-${fresh++}` } } }), ok: 201, says: 'the admission service is unavailable' },
    authz: { ask: () => c.request('GET', `/api/v1/namespaces/fresh-${fresh++}/configmaps/x`), ok: 404, says: 'the authorization service is unavailable' },
  };
  for (const [service, check] of Object.entries(checks) as [keyof typeof checks, typeof checks.authz][]) {
    it(`answers 503 with Retry-After while the ${service} service is down, and serves again once it is back`, async () => {
      await c.kill(service);
      try {
        const res = await check.ask();
        expect(res.status, res.text).to.equal(503);
        expect(res.headers['retry-after']).to.equal('1');
        expect(res.body).to.deep.include({ reason: 'ServiceUnavailable', code: 503 });
        expect(res.body.message).to.contain(check.says);
      } finally {
        await c.startService(service);
      }
      expect(await waitFor(async () => (await check.ask()).status === check.ok, 20_000, 200)).to.equal(true);
    });
  }
});
