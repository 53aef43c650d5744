// The launcher (cmd/svc-apiserver) as integration tests start it: its own process
// group, its output kept, its children found through /proc, and HTTPS requests
// with the credentials of the kubeconfig it writes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { waitFor } from './cluster.js';
import { announcedAddress } from '../../internal/launcher/announce.js';

export const MAIN = fileURLToPath(new URL('../../cmd/svc-apiserver/main.js', import.meta.url));
export const SERVICES = ['storage', 'authn', 'authz', 'admission', 'gateway', 'controller-manager'];
export const READY = 'svc-apiserver is ready';

/** One launcher process in its own process group (so a test can press Ctrl-C on it), with its output. */
export class Launcher {
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

  /** The gateway's port, as the launcher's ready line says (0 before it is ready). */
  get servingPort(): number {
    const m = new RegExp(`${READY} on https://127\\.0\\.0\\.1:(\\d+)`).exec(this.stdout);
    return m ? Number(m[1]) : 0;
  }

  /** Every address a child announced, in order (one per start of it). */
  announced(name: string): string[] {
    return this.stdout.split('\n').slice(0, -1).filter((l) => l.startsWith(`[${name}] `)).map(announcedAddress)
      .flatMap((a) => (a ? [a] : []));
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

  /**
   * A crash of the whole server: SIGKILL to the launcher's process group at once
   * (the launcher and every child), then to each of them by PID and to anything
   * left that names the data dir (a child spawned meanwhile). Resolves with the
   * PIDs that ran, once every one is gone (false when one is not).
   */
  async crash(): Promise<{ pids: number[]; gone: boolean }> {
    const pids = this.running ? [this.pid, ...childrenOf(this.pid).map((c) => c.pid)] : [];
    try { process.kill(-this.pid, 'SIGKILL'); } catch { /* already gone */ }
    for (const pid of [...pids, ...mentioning(this.dataDir)]) {
      try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
    }
    await this.exit(5_000);
    return { pids, gone: await waitFor(() => gone(pids) && mentioning(this.dataDir).length === 0, 10_000) };
  }

  /** Kills the launcher and whatever it left (as crash() does), then removes its data unless it is kept for another launcher. */
  async destroy(keepData = false): Promise<void> {
    await this.crash();
    if (!keepData) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

export const tempDir = () => mkdtempSync(join(tmpdir(), 'svc-launcher-'));

function proc(pid: string, file: string): string {
  try { return readFileSync(`/proc/${pid}/${file}`, 'utf8'); } catch { return ''; }
}

/** The direct children of pid, with their command lines. */
export function childrenOf(pid: number): Array<{ pid: number; cmdline: string }> {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p)).flatMap((p) => {
    const stat = proc(p, 'stat');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return ppid === pid ? [{ pid: Number(p), cmdline: proc(p, 'cmdline').split('\0').join(' ') }] : [];
  });
}

/** Whether pid runs (a zombie has ended already). */
export function alive(pid: number | string): boolean {
  const stat = proc(String(pid), 'stat');
  return stat !== '' && stat[stat.lastIndexOf(')') + 2] !== 'Z';
}

/** Live processes (other than this one) whose command line names path: every child of a launcher names its data dir. */
export function mentioning(path: string): number[] {
  return readdirSync('/proc').filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
    .filter((p) => proc(p, 'cmdline').includes(path) && alive(p)).map(Number);
}

export const gone = (pids: number[]) => pids.every((pid) => !alive(pid));

/** The server of one cluster of a kubeconfig (the first unless told) and the credentials of its first user. */
function kubeTarget(kubeconfig: string, cluster: number): { server: string; tls: { ca: Buffer; cert: Buffer; key: Buffer } } {
  const config = parse(readFileSync(kubeconfig, 'utf8'));
  const { server, 'certificate-authority-data': ca } = config.clusters[cluster].cluster;
  const user = config.users[0].user;
  const b64 = (s: string) => Buffer.from(s, 'base64');
  return { server, tls: { ca: b64(ca), cert: b64(user['client-certificate-data']), key: b64(user['client-key-data']) } };
}

/** One HTTPS request with the server address (of the cluster-th cluster) and credentials of a kubeconfig. */
export function kubeRequest(kubeconfig: string, method: string, path: string, body?: unknown, cluster = 0): Promise<{ status: number; body: any }> {
  const { server, tls } = kubeTarget(kubeconfig, cluster);
  const url = new URL(path, server);
  return new Promise((resolve, reject) => {
    const req = https.request(url, {
      method, ...tls, headers: body === undefined ? {} : { 'Content-Type': 'application/json' }, timeout: 10_000,
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

/** A watch (a path with ?watch=1) through a kubeconfig's cluster-th cluster: the events it received so far, in order. */
export function kubeWatch(kubeconfig: string, path: string, cluster = 0): { events: Array<{ type: string; object: any }>; status(): number; close(): void } {
  const { server, tls } = kubeTarget(kubeconfig, cluster);
  const events: Array<{ type: string; object: any }> = [];
  let status = 0;
  let buffered = '';
  const req = https.get(new URL(path, server), tls, (res) => {
    status = res.statusCode ?? 0;
    res.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (buffered + chunk).split('\n');
      buffered = lines.pop()!;
      for (const line of lines) if (line.trim()) events.push(JSON.parse(line));
    });
  });
  req.on('error', () => undefined);
  return { events, status: () => status, close: () => req.destroy() };
}
