import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { freePort } from '../../internal/launcher/ports.js';
import { waitFor } from '../lib/cluster.js';

const MAIN = fileURLToPath(new URL('../../cmd/svc-apiserver/main.js', import.meta.url));
const SERVICES = ['storage', 'authn', 'authz', 'admission', 'gateway', 'controller-manager'];
const READY = 'svc-apiserver is ready';

/** One launcher process in its own process group (so a test can press Ctrl-C on it), with its output. */
class Launcher {
  readonly proc: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(readonly dataDir: string, readonly args: string[]) {
    this.proc = spawn(process.execPath, [MAIN, `--data-dir=${dataDir}`, ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.proc.stdout!.setEncoding('utf8').on('data', (d: string) => { this.stdout += d; });
    this.proc.stderr!.setEncoding('utf8').on('data', (d: string) => { this.stderr += d; });
    this.exited = new Promise((resolve) => this.proc.once('exit', (code, signal) => resolve({ code, signal })));
  }

  get pid(): number {
    return this.proc.pid!;
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Resolves true once the launcher says it is ready, false if it exits or the timeout passes first. */
  ready(timeoutMs = 60_000): Promise<boolean> {
    return waitFor(() => this.stdout.includes(READY) || !this.running, timeoutMs, 100).then(() => this.stdout.includes(READY));
  }

  /** Resolves with how it exited, or undefined when it still runs after timeoutMs. */
  async exit(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), timeoutMs); });
    const result = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    return result;
  }

  /** Kills the launcher and whatever it left (by PID), then removes its data. */
  async destroy(): Promise<void> {
    for (const pid of [this.pid, ...mentioning(this.dataDir)]) {
      try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
    }
    if (this.running) await this.exit(5_000);
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

const tempDir = () => mkdtempSync(join(tmpdir(), 'svc-launcher-'));

function proc(pid: string, file: string): string {
  try { return readFileSync(`/proc/${pid}/${file}`, 'utf8'); } catch { return ''; }
}

/** The direct children of pid, with their command lines. */
function childrenOf(pid: number): Array<{ pid: number; cmdline: string }> {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).flatMap((p) => {
    const stat = proc(p, 'stat');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return ppid === pid ? [{ pid: Number(p), cmdline: proc(p, 'cmdline').split('\0').join(' ') }] : [];
  });
}

/** Whether pid runs (a zombie has ended already). */
function alive(pid: number | string): boolean {
  const stat = proc(String(pid), 'stat');
  return stat !== '' && stat[stat.lastIndexOf(')') + 2] !== 'Z';
}

/** Live processes (other than this one) whose command line names path: every child of a launcher names its data dir. */
function mentioning(path: string): number[] {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
    .filter((p) => proc(p, 'cmdline').includes(path) && alive(p)).map(Number);
}

const gone = (pids: number[]) => pids.every((pid) => !alive(pid));

/** One HTTPS request with the server address and credentials of a kubeconfig. */
function kubeRequest(kubeconfig: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const config = parse(readFileSync(kubeconfig, 'utf8'));
  const cluster = config.clusters[0].cluster;
  const user = config.users[0].user;
  const b64 = (s: string) => Buffer.from(s, 'base64');
  const url = new URL(path, cluster.server);
  return new Promise((resolve, reject) => {
    const req = https.request(url, {
      method, ca: b64(cluster['certificate-authority-data']), cert: b64(user['client-certificate-data']), key: b64(user['client-key-data']),
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' }, timeout: 10_000,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: res.headers['content-type']?.startsWith('application/json') ? JSON.parse(text) : text });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

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

    it('prefixes each child\'s log lines with its name', () => {
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
