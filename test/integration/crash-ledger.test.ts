// kill -9 of each process in turn under a steady writer that keeps a ledger of
// acknowledged creates: the killed process is started again (on the same address
// and data dir, by the test for a cluster of separate processes, by the launcher
// for svc-apiserver), the rest heals without being restarted, and every
// acknowledged create is there with its data afterwards.
import { expect } from 'chai';
import { join } from 'node:path';
import { Cluster, waitFor } from '../lib/cluster.js';
import { LedgerWriter } from '../lib/ledger.js';
import { Launcher, alive, childrenOf, kubeRequest, tempDir } from '../lib/launcher.js';

const KILLED = ['storage', 'authn', 'authz', 'admission', 'gateway', 'controller-manager', 'nats-server'] as const;
type Killed = typeof KILLED[number];
/** Creates acknowledged before each kill, and needed after it to count as healed. */
const ACKS = 15;
const HEAL_MS = 60_000;

describe('crash ledger: kill -9 of each process in turn under a steady writer', function () {
  this.timeout(300_000);

  describe('a cluster of separate processes, each restarted on its own address', () => {
    let c: Cluster;
    let writer: LedgerWriter;
    before(async () => {
      c = await new Cluster().start();
      writer = new LedgerWriter((method, path, body) => c.request(method, path, { body, timeoutMs: 5000 }), 'default').start();
    });
    after(async () => {
      await writer?.stop();
      await c?.stop();
    });

    const pids = () => new Map([...c.procs].map(([s, p]) => [s as string, p.pid!]));

    for (const killed of KILLED) {
      it(`${killed}: restarted, the others untouched, no acknowledged create lost`, async () => {
        expect(await writer.acks(ACKS, HEAL_MS), writer.describe()).to.equal(true);
        const others = pids();
        others.delete(killed);
        if (killed === 'nats-server') {
          await c.stopNats('SIGKILL');
          await c.restartNats();
        } else {
          await c.kill(killed, 'SIGKILL');
          await c.startService(killed);
        }
        expect(await writer.acks(ACKS, HEAL_MS), `after ${killed}: ${writer.describe()}`).to.equal(true);
        for (const [s, pid] of others) expect(c.procs.get(s as never)?.pid, `${s} kept running`).to.equal(pid);
        for (const pid of others.values()) expect(alive(pid)).to.equal(true);
        expect(await writer.lost(), writer.describe()).to.deep.equal([]);
      });
    }

    it('heals whole: watches see new creates, the controllers act', async () => {
      const list = await c.request('GET', '/api/v1/namespaces/default/configmaps?limit=1');
      expect(list.status).to.equal(200);
      const watching = c.watch(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`,
        { until: (events) => events.some((e) => e.object?.metadata?.name === 'after-crashes'), timeoutMs: 20_000 });
      expect((await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'after-crashes' } } })).status).to.equal(201);
      expect((await watching).events.map((e) => e.object?.metadata?.name)).to.include('after-crashes');
      // The namespace controller (restarted above) empties and removes a deleted namespace.
      expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'crash-ns' } } })).status).to.equal(201);
      expect((await c.request('POST', '/api/v1/namespaces/crash-ns/configmaps', { body: { metadata: { name: 'inside' } } })).status).to.equal(201);
      expect((await c.request('DELETE', '/api/v1/namespaces/crash-ns')).status).to.equal(200);
      expect(await waitFor(async () => (await c.request('GET', '/api/v1/namespaces/crash-ns')).status === 404, 30_000, 250)).to.equal(true);
      await writer.stop();
      expect(await writer.lost(), writer.describe()).to.deep.equal([]);
    });
  });

  describe('svc-apiserver, whose launcher restarts what dies', () => {
    let launcher: Launcher;
    let writer: LedgerWriter;
    before(async () => {
      launcher = new Launcher(tempDir(), ['--secure-port=0']);
      expect(await launcher.ready(90_000), `${launcher.stdout}\n${launcher.stderr}`).to.equal(true);
      const kubeconfig = join(launcher.dataDir, 'admin.kubeconfig');
      writer = new LedgerWriter((method, path, body) => kubeRequest(kubeconfig, method, path, body), 'default').start();
    });
    after(async () => {
      await writer?.stop();
      await launcher?.destroy();
    });

    const childFor = (name: Killed) => {
      const match = name === 'nats-server' ? (cmd: string) => cmd.startsWith('nats-server ') : (cmd: string) => cmd.includes(`/cmd/${name}/main.js `);
      return childrenOf(launcher.pid).filter((k) => match(k.cmdline));
    };
    const prefix = (name: Killed) => (name === 'nats-server' ? 'nats' : name);

    for (const killed of KILLED) {
      it(`${killed}: restarted by the launcher, the others untouched, no acknowledged create lost`, async () => {
        expect(await writer.acks(ACKS, HEAL_MS), writer.describe()).to.equal(true);
        const [victim] = childFor(killed);
        expect(victim, killed).to.not.equal(undefined);
        const others = childrenOf(launcher.pid).filter((k) => k.pid !== victim.pid);
        const restarts = launcher.stdout.split(`[${prefix(killed)}] exited (SIGKILL); restarting in`).length;
        process.kill(victim.pid, 'SIGKILL');
        expect(await waitFor(() => launcher.stdout.split(`[${prefix(killed)}] exited (SIGKILL); restarting in`).length > restarts, 10_000)).to.equal(true);
        expect(await waitFor(() => childFor(killed).some((k) => k.pid !== victim.pid), 30_000), `${killed} back`).to.equal(true);
        expect(await writer.acks(ACKS, HEAL_MS), `after ${killed}: ${writer.describe()}`).to.equal(true);
        for (const k of others) expect(alive(k.pid), k.cmdline).to.equal(true);
        expect(launcher.running).to.equal(true);
        expect(await writer.lost(), writer.describe()).to.deep.equal([]);
      });
    }
  });
});
