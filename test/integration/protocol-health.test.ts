// Document 1, "Health endpoints": /livez, /readyz, /healthz, single checks, verbose,
// exclude, failing checks, and readiness during a graceful shutdown.
import { expect } from 'chai';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';

const lines = (res: Response) => res.text.trimEnd().split('\n');

/** The check names of a verbose answer, in order. */
function checksOf(res: Response): string[] {
  return lines(res).slice(0, -1).map((l) => /^\[[+-]\](\S+)/.exec(l)?.[1] ?? `unparsed: ${l}`);
}

describe('protocol: health endpoints', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('GET /livez/ping, /readyz/ping and /healthz/ping answer 200 ok', async () => {
    for (const path of ['/livez/ping', '/readyz/ping', '/healthz/ping']) {
      const res = await c.request('GET', path);
      expect(res.status, path).to.equal(200);
      expect(res.text, path).to.equal('ok');
    }
  });

  it('verbose lists every check as [+]name ok and ends with "<endpoint> check passed"', async () => {
    for (const endpoint of ['livez', 'readyz', 'healthz']) {
      const res = await c.request('GET', `/${endpoint}?verbose`);
      expect(res.status, endpoint).to.equal(200);
      const all = lines(res);
      expect(all.at(-1), endpoint).to.equal(`${endpoint} check passed`);
      for (const l of all.slice(0, -1)) expect(l, endpoint).to.match(/^\[\+\]\S+ ok$/);
      const names = checksOf(res);
      expect(names, endpoint).to.include.members(['ping', 'log', 'store']);
      expect(names.filter((n) => n.startsWith('poststarthook/')), endpoint).to.not.deep.equal([]);
      if (endpoint === 'readyz') expect(names).to.include('shutdown');
      else expect(names, endpoint).not.to.include('shutdown');
    }
  });

  it('every check of a verbose listing answers on its own path, /readyz/shutdown included', async () => {
    for (const endpoint of ['livez', 'readyz']) {
      const names = checksOf(await c.request('GET', `/${endpoint}?verbose`));
      for (const name of names) {
        const res = await c.request('GET', `/${endpoint}/${name}`);
        expect(res.status, `/${endpoint}/${name}`).to.equal(200);
        expect(res.text, `/${endpoint}/${name}`).to.equal('ok');
      }
    }
    const shutdown = await c.request('GET', '/readyz/shutdown');
    expect(shutdown.status).to.equal(200);
    expect(shutdown.text).to.equal('ok');
  });

  it('exclude omits checks ([+]name excluded: ok) and combines with verbose', async () => {
    const res = await c.request('GET', '/readyz?verbose&exclude=ping&exclude=shutdown');
    expect(res.status).to.equal(200);
    expect(res.text).to.contain('[+]ping excluded: ok\n').and.contain('[+]shutdown excluded: ok\n').and.contain('[+]store ok\n');
    expect(lines(res).at(-1)).to.equal('readyz check passed');
    const quiet = await c.request('GET', '/livez?exclude=log');
    expect(quiet.status).to.equal(200);
    expect(quiet.text).to.equal('ok');
  });

  it('an unknown check answers 404', async () => {
    for (const path of ['/livez/nonexistent', '/readyz/nonexistent', '/healthz/nonexistent', '/livez/shutdown']) {
      const res = await c.request('GET', path);
      expect(res.status, path).to.equal(404);
    }
  });

  it('a failing check: 500 with [-]store, "readyz check failed"; excluding it answers 200; livez/ping stays 200', async function () {
    this.timeout(60_000);
    await c.kill('storage');
    try {
      const down = await c.request('GET', '/readyz?verbose');
      expect(down.status).to.equal(500);
      expect(down.text).to.match(/^\[-\]store failed/m).and.contain('[+]ping ok');
      expect(lines(down).at(-1)).to.equal('readyz check failed');
      const plain = await c.request('GET', '/readyz');
      expect(plain.status).to.equal(500);
      const single = await c.request('GET', '/readyz/store');
      expect(single.status).to.equal(500);
      const excluded = await c.request('GET', '/readyz?exclude=store');
      expect(excluded.status, excluded.text).to.equal(200);
      expect(excluded.text).to.equal('ok');
      expect((await c.request('GET', '/livez/ping')).status).to.equal(200);
    } finally {
      await c.startService('storage');
    }
    expect(await waitFor(async () => (await c.request('GET', '/readyz')).status === 200, 15_000)).to.equal(true);
  });
});

describe('protocol: graceful shutdown with --shutdown-delay-duration', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster({ flags: { gateway: ['--shutdown-delay-duration=4s'] } }).start(); });
  after(async () => { await c?.stop(); });

  it('on SIGTERM /readyz fails first while requests are still served, open watches end cleanly, then the process exits 0', async () => {
    const gateway = c.procs.get('gateway')!;
    const exited = new Promise<number | null>((resolve) => gateway.once('exit', (code) => resolve(code)));
    const watching = c.watch('/api/v1/namespaces/default/configmaps?watch=1', { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 300));
    const signalled = Date.now();
    gateway.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));

    const ready = await c.request('GET', '/readyz?verbose').catch((err: Error) => err);
    expect(ready, 'the gateway still answers during the shutdown delay').not.to.be.instanceOf(Error);
    const readyRes = ready as Response;
    expect(readyRes.status).to.equal(500);
    expect(readyRes.text).to.match(/^\[-\]shutdown failed/m);
    const served = await c.request('GET', '/api/v1/namespaces/default').catch((err: Error) => err);
    expect(served, 'requests are served during the delay').not.to.be.instanceOf(Error);
    expect((served as Response).status).to.equal(200);
    expect((await c.request('GET', '/livez')).status, 'livez stays ok').to.equal(200);

    const { status, ended } = await watching;
    expect(status).to.equal(200);
    expect(ended, 'the watch ended').to.equal(true);
    const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 20_000))]);
    expect(code).to.equal(0);
    expect(Date.now() - signalled, 'waited out the shutdown delay').to.be.at.least(3_500);
  });
});
