import { expect } from 'chai';
import net from 'node:net';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { checkHealth } from '../../internal/rpc/index.js';
import { waitFor } from '../lib/cluster.js';
import { Launcher, SERVICES, childrenOf, gone, kubeRequest, mentioning, tempDir } from '../lib/launcher.js';
import { unusedPort } from '../lib/ports.js';

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });
const CMS = '/api/v1/namespaces/default/configmaps';

describe('launcher: svc-apiserver starts, supervises and stops every service', function () {
  this.timeout(120_000);

  describe('two instances started at once, every port picked by the process that binds it', () => {
    const launchers: Launcher[] = [];
    const children: Array<Array<{ pid: number; cmdline: string }>> = [];

    before(async () => {
      for (let i = 0; i < 2; i++) launchers.push(new Launcher(tempDir(), ['--secure-port=0']));
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

    it('prints how to point kubectl at it, on the port the gateway bound', () => {
      for (const l of launchers) {
        expect(l.servingPort).to.be.greaterThan(0);
        expect(l.announced('gateway')).to.deep.equal([`127.0.0.1:${l.servingPort}`]);
        expect(l.stdout).to.include(`export KUBECONFIG=${join(l.dataDir, 'admin.kubeconfig')}`);
      }
      expect(launchers[0].servingPort).not.to.equal(launchers[1].servingPort);
    });

    it('checks each child where it said it serves, and gives its peers that address', () => {
      for (const l of launchers) {
        const kids = childrenOf(l.pid);
        for (const name of ['nats', 'storage', 'authn', 'authz', 'admission']) {
          const [address, ...more] = l.announced(name);
          expect(more, name).to.deep.equal([]);
          expect(l.stdout, name).to.match(new RegExp(`svc-apiserver: ${name} healthy on ${address.replace(/\./g, '\\.')} after `));
          if (name === 'nats') continue;
          expect(kids.find((k) => k.cmdline.includes('/cmd/gateway/main.js '))!.cmdline, name).to.include(`--${name}-address=${address}`);
        }
        expect(kids.find((k) => k.cmdline.includes('/cmd/storage/main.js '))!.cmdline).to.include(`--nats-url=nats://${l.announced('nats')[0]}`);
      }
    });

    it('prefixes each child\'s log lines with its name', async () => {
      // The controller-manager is not waited for: its line comes once its controllers run.
      expect(await waitFor(() => /svc-apiserver: controller-manager running after \d+\.\ds/.test(launchers[0].stdout), 60_000)).to.equal(true);
      const lines = launchers[0].stdout.split('\n');
      for (const name of ['nats', ...SERVICES]) expect(lines.some((l) => l.startsWith(`[${name}] `)), name).to.equal(true);
      // The gRPC services are reached on Unix sockets under the data dir.
      expect(lines.some((l) => l === `[storage] storage listening on unix://${join(launchers[0].dataDir, 'run', 'storage.sock')}`), launchers[0].stdout).to.equal(true);
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

  describe('one instance: the controller-manager off the serving path, children restarted where they were', () => {
    let launcher: Launcher | undefined;
    after(async () => { await launcher?.destroy(); });

    it('serves while the controller-manager cannot sync, and says so every --startup-timeout', async () => {
      // Pointed at a port nothing listens on, the controller-manager never gets its first lists.
      launcher = new Launcher(tempDir(), ['--secure-port=0', `--server=https://127.0.0.1:${await unusedPort()}`, '--startup-timeout=20s']);
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

    it('restarts a service that dies on the address its peers were given; while another process holds it, says so', async () => {
      const l = launcher!;
      const [address] = l.announced('authz');
      const socket = address.slice('unix://'.length);
      const authz = () => childrenOf(l.pid).filter((k) => k.cmdline.includes('/cmd/authz/main.js '));
      // The killed process leaves its socket file behind: the squatter removes it, as a restart would.
      const listen = (server: net.Server) => new Promise<void>((resolve, reject) => { rmSync(socket, { force: true }); server.once('error', reject).listen(socket, resolve); });
      // Kill authz and take its socket before the restart (a second later) does; a loaded machine may be slower
      // than the restart: then wait and try again, a few times.
      let squatter: net.Server | undefined;
      for (let attempt = 1; !squatter; attempt++) {
        const starts = l.announced('authz').length;
        const [before] = authz();
        process.kill(before.pid, 'SIGKILL');
        expect(await waitFor(() => gone([before.pid]), 5_000)).to.equal(true);
        const server = net.createServer();
        squatter = await listen(server).then(() => server, (err) => {
          if (attempt >= 3) throw err;
          return undefined;
        });
        if (!squatter) expect(await waitFor(() => l.announced('authz').length > starts, 60_000), l.stdout).to.equal(true);
      }
      const starts = l.announced('authz').length;
      try {
        expect(await waitFor(() => l.stdout.includes(`[authz] cannot bind ${address} again`), 20_000), l.stdout).to.equal(true);
        expect(l.announced('authz')).to.have.length(starts);
      } finally {
        await new Promise((resolve) => squatter!.close(resolve));
      }
      expect(await waitFor(() => l.announced('authz').length > starts, 40_000), l.stdout).to.equal(true);
      expect(new Set(l.announced('authz'))).to.deep.equal(new Set([address]));
      expect(await waitFor(() => checkHealth(address), 10_000)).to.equal(true);
      expect(authz()).to.have.length(1);
      expect((await kubeRequest(join(l.dataDir, 'admin.kubeconfig'), 'POST', CMS, cm('after-authz-restart'))).status).to.equal(201);
    });
  });

  describe('a controller-manager that refuses its flags', () => {
    let launcher: Launcher | undefined;
    after(async () => { await launcher?.destroy(); });

    it('is reported and not restarted, the API serving', async () => {
      launcher = new Launcher(tempDir(), ['--secure-port=0', '--controllers=no-such-controller']);
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
      launcher = new Launcher(tempDir(), ['--secure-port=0', '--token-auth-file=/nonexistent']);
      const exit = await launcher.exit(60_000);
      expect(exit?.code, launcher.stdout).to.equal(1);
      expect(launcher.stderr).to.match(/^svc-apiserver: authn exited \(code 1\) before it became healthy/);
      expect(launcher.stderr).to.include('/nonexistent');
      expect(launcher.stdout).not.to.include('restarting');
      expect(await waitFor(() => mentioning(launcher!.dataDir).length === 0, 5_000)).to.equal(true);
    });

    it('stops what it started when SIGTERM arrives during start-up', async () => {
      launcher = new Launcher(tempDir(), ['--secure-port=0']);
      expect(await waitFor(() => launcher!.stdout.includes('[storage] '), 30_000)).to.equal(true);
      process.kill(launcher.pid, 'SIGTERM');
      const exit = await launcher.exit(30_000);
      expect(exit?.code).to.equal(1);
      expect(launcher.stderr).to.match(/interrupted by SIGTERM/);
      expect(await waitFor(() => mentioning(launcher!.dataDir).length === 0, 5_000)).to.equal(true);
    });
  });
});
