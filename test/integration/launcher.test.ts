import { expect } from 'chai';
import { join } from 'node:path';
import { freePort } from '../../internal/launcher/ports.js';
import { waitFor } from '../lib/cluster.js';
import { Launcher, READY, SERVICES, childrenOf, gone, kubeRequest, mentioning, tempDir } from '../lib/launcher.js';

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
const CMS = '/api/v1/namespaces/default/configmaps';

describe('launcher: svc-apiserver starts, supervises and stops every service', function () {
  this.timeout(120_000);

  describe('two instances side by side', () => {
    const launchers: Launcher[] = [];
    const ports: number[] = [];
    const children: Array<Array<{ pid: number; cmdline: string }>> = [];

    before(async () => {
      for (let i = 0; i < 2; i++) {
        ports.push(await freePort());
        launchers.push(new Launcher(tempDir(), [`--secure-port=${ports[i]}`]));
      }
      const ready = await Promise.all(launchers.map((l) => l.ready(90_000)));
      launchers.forEach((l, i) => expect(ready[i], `instance ${i}:\n${l.stdout}\n${l.stderr}`).to.equal(true));
      for (const l of launchers) children.push(childrenOf(l.pid));
    });

    after(async () => { for (const l of launchers) await l.destroy(); });

    it('starts nats-server and every service as its own children', () => {
      for (const kids of children) {
        expect(kids.filter((k) => k.cmdline.startsWith('nats-server '))).to.have.length(1);
        for (const s of SERVICES) expect(kids.filter((k) => k.cmdline.includes(`/cmd/${s}/main.js `)), s).to.have.length(1);
        expect(kids).to.have.length(SERVICES.length + 1);
      }
    });

    it('prints how to point kubectl at it', () => {
      launchers.forEach((l, i) => {
        expect(l.stdout).to.include(`${READY} on https://127.0.0.1:${ports[i]}`);
        expect(l.stdout).to.include(`export KUBECONFIG=${join(l.dataDir, 'admin.kubeconfig')}`);
      });
    });

    it('prefixes each child\'s log lines with its name', async () => {
      // The controller-manager is not waited for: its line comes once its controllers run.
      expect(await waitFor(() => /svc-apiserver: controller-manager running after \d+\.\ds/.test(launchers[0].stdout), 60_000)).to.equal(true);
      const lines = launchers[0].stdout.split('\n');
      for (const name of ['nats', ...SERVICES]) expect(lines.some((l) => l.startsWith(`[${name}] `)), name).to.equal(true);
      expect(lines.some((l) => /^\[storage\] storage listening on 127\.0\.0\.1:\d+$/.test(l))).to.equal(true);
    });

    it('answers /readyz and a create with the credentials of admin.kubeconfig, each instance with its own data', async () => {
      const [a, b] = launchers.map((l) => join(l.dataDir, 'admin.kubeconfig'));
      expect((await kubeRequest(a, 'GET', '/readyz')).status).to.equal(200);
      expect((await kubeRequest(b, 'GET', '/readyz')).status).to.equal(200);
      const created = await kubeRequest(a, 'POST', CMS, cm('only-in-a'));
      expect(created.status).to.equal(201);
      expect(created.body.metadata.name).to.equal('only-in-a');
      expect((await kubeRequest(a, 'GET', `${CMS}/only-in-a`)).status).to.equal(200);
      expect((await kubeRequest(b, 'GET', `${CMS}/only-in-a`)).status).to.equal(404);
    });

    it('stops with all its children on SIGTERM, leaving the other instance serving', async () => {
      const [a, b] = launchers;
      process.kill(a.pid, 'SIGTERM');
      expect(await a.exit(30_000)).to.deep.equal({ code: 0, signal: null });
      expect(await waitFor(() => gone(children[0].map((k) => k.pid)), 5_000)).to.equal(true);
      expect(mentioning(a.dataDir)).to.deep.equal([]);
      expect((await kubeRequest(join(b.dataDir, 'admin.kubeconfig'), 'GET', '/readyz')).status).to.equal(200);
    });

    it('stops cleanly on Ctrl-C, when every child gets SIGINT too, without restarting any', async () => {
      const b = launchers[1];
      process.kill(-b.pid, 'SIGINT');
      expect(await b.exit(30_000)).to.deep.equal({ code: 0, signal: null });
      expect(await waitFor(() => gone(children[1].map((k) => k.pid)), 5_000)).to.equal(true);
      expect(mentioning(b.dataDir)).to.deep.equal([]);
      expect(b.stdout).not.to.include('restarting');
    });
  });

  describe('the controller-manager is off the serving path', () => {
    let launcher: Launcher | undefined;
    after(async () => { await launcher?.destroy(); });

    it('serves while the controller-manager cannot sync, and says so every --startup-timeout', async () => {
      // Pointed at a port nothing listens on, the controller-manager never gets its first lists.
      launcher = new Launcher(tempDir(), [`--secure-port=${await freePort()}`, `--server=https://127.0.0.1:${await freePort()}`, '--startup-timeout=20s']);
      expect(await launcher.ready(90_000), `${launcher.stdout}\n${launcher.stderr}`).to.equal(true);
      expect(childrenOf(launcher.pid).filter((k) => k.cmdline.includes('/cmd/controller-manager/main.js '))).to.have.length(1);
      expect(await waitFor(() => launcher!.stdout.includes('controller-manager still syncing after 20s'), 40_000), launcher.stdout).to.equal(true);
      const kubeconfig = join(launcher.dataDir, 'admin.kubeconfig');
      expect((await kubeRequest(kubeconfig, 'GET', '/readyz')).status).to.equal(200);
      expect((await kubeRequest(kubeconfig, 'POST', CMS, cm('while-syncing'))).status).to.equal(201);
    });

    it('restarts a controller-manager that dies, the API serving throughout', async () => {
      const manager = () => childrenOf(launcher!.pid).filter((k) => k.cmdline.includes('/cmd/controller-manager/main.js '));
      const [before] = manager();
      process.kill(before.pid, 'SIGKILL');
      expect(await waitFor(() => launcher!.stdout.includes('[controller-manager] exited (SIGKILL); restarting in 1000 ms'), 10_000), launcher!.stdout).to.equal(true);
      expect(await waitFor(() => manager().length === 1 && manager()[0].pid !== before.pid, 10_000)).to.equal(true);
      expect((await kubeRequest(join(launcher!.dataDir, 'admin.kubeconfig'), 'GET', '/readyz')).status).to.equal(200);
      expect(launcher!.running).to.equal(true);
    });
  });

  describe('a controller-manager that refuses its flags', () => {
    let launcher: Launcher | undefined;
    after(async () => { await launcher?.destroy(); });

    it('is reported and not restarted, the API serving', async () => {
      launcher = new Launcher(tempDir(), [`--secure-port=${await freePort()}`, '--controllers=no-such-controller']);
      expect(await launcher.ready(90_000), `${launcher.stdout}\n${launcher.stderr}`).to.equal(true);
      const reported = 'svc-apiserver: controller-manager exited (code 2); not restarted, the API serves without it';
      expect(await waitFor(() => launcher!.stdout.includes(reported), 30_000), launcher.stdout).to.equal(true);
      expect(launcher.stdout).to.include('"no-such-controller" is not in the list of known controllers');
      expect(launcher.stdout).not.to.include('restarting in');
      expect((await kubeRequest(join(launcher.dataDir, 'admin.kubeconfig'), 'GET', '/readyz')).status).to.equal(200);
    });
  });

  describe('failures', () => {
    let launcher: Launcher | undefined;
    afterEach(async () => { await launcher?.destroy(); launcher = undefined; });

    it('exits non-zero with a clear message on an unknown flag', async () => {
      launcher = new Launcher(tempDir(), ['--no-such-flag=1']);
      const exit = await launcher.exit(15_000);
      expect(exit?.code).to.equal(1);
      expect(launcher.stderr).to.include('unknown flag --no-such-flag');
      expect(mentioning(launcher.dataDir)).to.deep.equal([]);
    });

    it('exits non-zero naming a service that cannot start, and leaves no process behind', async () => {
      launcher = new Launcher(tempDir(), [`--secure-port=${await freePort()}`, '--token-auth-file=/nonexistent']);
      const exit = await launcher.exit(60_000);
      expect(exit?.code, launcher.stdout).to.equal(1);
      expect(launcher.stderr).to.match(/^svc-apiserver: authn exited \(code 1\) before it became healthy/);
      expect(launcher.stderr).to.include('/nonexistent');
      expect(launcher.stdout).not.to.include('restarting');
      expect(await waitFor(() => mentioning(launcher!.dataDir).length === 0, 5_000)).to.equal(true);
    });

    it('stops what it started when SIGTERM arrives during start-up', async () => {
      launcher = new Launcher(tempDir(), [`--secure-port=${await freePort()}`]);
      expect(await waitFor(() => launcher!.stdout.includes('[storage] '), 30_000)).to.equal(true);
      process.kill(launcher.pid, 'SIGTERM');
      const exit = await launcher.exit(30_000);
      expect(exit?.code).to.equal(1);
      expect(launcher.stderr).to.match(/interrupted by SIGTERM/);
      expect(await waitFor(() => mentioning(launcher!.dataDir).length === 0, 5_000)).to.equal(true);
    });
  });
});
