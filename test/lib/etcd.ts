// Real etcd for tests and benchmarks: the Debian `etcd-server` package (installed
// when missing, as root), one member or a cluster of several on free loopback
// ports, data in a temp dir, every member stopped by PID.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdClient } from '../../internal/storage/etcd/client.js';
import { unusedPort } from './ports.js';

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
const INSTALL_TIMEOUT_MS = 300_000;

const which = (cmd: string): string | undefined => {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
};

/** The etcd binary; installs the Debian package first when there is none. */
export function ensureEtcd(): string {
  const found = process.env.ETCD_BIN ?? which('etcd');
  if (found) return found;
  if (process.getuid?.() !== 0) throw new Error('etcd is not installed and installing it needs root: apt-get install -y etcd-server');
  console.log('installing etcd-server (apt-get) ...');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', 'etcd-server']]) {
    const r = spawnSync('apt-get', args, { env, encoding: 'utf8', timeout: INSTALL_TIMEOUT_MS });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}):\n${(r.stderr ?? '').slice(-2000)}`);
  }
  const installed = which('etcd');
  if (!installed) throw new Error('etcd-server installed, but no etcd on PATH');
  return installed;
}

export interface EtcdMember {
  name: string;
  /** host:port of its client URL. */
  endpoint: string;
  pid: number;
  /** Kills the member (SIGKILL: a crash) and waits for it to exit; its data stays, so `start` brings it back. */
  kill(): Promise<void>;
  start(): Promise<void>;
}

export interface RunningEtcd {
  /** The client URLs of every member, comma-separated, as --etcd-servers takes them. */
  servers: string;
  /** host:port of the first member. */
  endpoint: string;
  pid: number;
  version: string;
  members: EtcdMember[];
  /** The index of the member that says it leads (its metrics), once one does; -1 when none does within timeoutMs. */
  leader(timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

interface Ports { client: number; peer: number }

/** Starts etcd: one member, or `members` of them forming one cluster. */
export async function startEtcd(options: { members?: number } = {}): Promise<RunningEtcd> {
  const bin = ensureEtcd();
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).match(/etcd Version: (\S+)/)?.[1] ?? '?';
  const count = options.members ?? 1;
  const dir = mkdtempSync(join(tmpdir(), 'test-etcd-'));
  const ports: Ports[] = [];
  for (let i = 0; i < count; i++) ports.push({ client: await unusedPort(), peer: await unusedPort() });
  const names = ports.map((_p, i) => `m${i}`);
  const initialCluster = ports.map((p, i) => `${names[i]}=http://127.0.0.1:${p.peer}`).join(',');
  const members = ports.map((p, i) => member(bin, names[i], join(dir, names[i]), p, initialCluster));
  const stop = async (): Promise<void> => {
    await Promise.all(members.map((m) => m.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all(members.map((m) => m.start()));
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    servers: members.map((m) => `http://${m.endpoint}`).join(','), endpoint: members[0].endpoint, version,
    get pid() { return members[0].pid; }, members, stop, leader: (timeoutMs = 30_000) => leaderOf(members, timeoutMs),
  };
}

async function leaderOf(members: Array<{ endpoint: string }>, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const says = await Promise.all(members.map((m) => fetch(`http://${m.endpoint}/metrics`).then((r) => r.text()).catch(() => '')));
    const leader = says.findIndex((text) => /^etcd_server_is_leader 1$/m.test(text));
    if (leader >= 0 || Date.now() > deadline) return leader;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function member(bin: string, name: string, dataDir: string, ports: Ports, initialCluster: string) {
  const endpoint = `127.0.0.1:${ports.client}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let log = '';
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    if (!running()) return;
    const proc = child!;
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  const start = async (): Promise<void> => {
    child = spawn(bin, [
      '--name', name, '--data-dir', dataDir, '--log-level', 'error', '--logger', 'zap',
      '--listen-client-urls', `http://${endpoint}`, '--advertise-client-urls', `http://${endpoint}`,
      '--listen-peer-urls', `http://127.0.0.1:${ports.peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${ports.peer}`,
      '--initial-cluster', initialCluster, '--initial-cluster-state', 'new',
      '--heartbeat-interval', '50', '--election-timeout', '500',
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    const proc = child;
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => { log = (log + d).slice(-4000); });
    exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    const client = new EtcdClient({ servers: `http://${endpoint}` });
    try {
      const deadline = Date.now() + START_TIMEOUT_MS;
      for (;;) {
        if (proc.exitCode !== null) throw new Error(`etcd ${name} exited with ${proc.exitCode}:\n${log}`);
        if (await client.range({ key: Buffer.from('health') }).then(() => true, () => false)) break;
        if (Date.now() > deadline) throw new Error(`etcd ${name} did not serve within ${START_TIMEOUT_MS} ms:\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      client.close();
    }
  };
  return {
    name, endpoint, start,
    get pid() { return child?.pid ?? 0; },
    kill: () => halt('SIGKILL'),
    stop: () => halt('SIGTERM'),
  };
}
