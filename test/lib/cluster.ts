// A whole server for integration tests: a real nats-server and every service as
// its own process, the gRPC services on Unix sockets in a temp dir (as the launcher
// runs them) and the gateway on a free loopback port, data in a temp dir, reached
// over HTTPS with the generated admin certificate. Every process is stopped by PID.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkHealth } from '../../internal/rpc/index.js';
import { pkiPaths } from '../../internal/pki/index.js';
import { announcedAddress, portOf } from '../../internal/launcher/announce.js';
import { serviceNodeArgs } from '../../internal/config/services.js';
import { serviceEntryPoint as entry } from '../../internal/launcher/entry.js';
import { startNats, type RunningNats } from './nats.js';
import { NatsCluster } from './natscluster.js';
import { startEtcd, type RunningEtcd } from './etcd.js';

const GRPC_SERVICES = ['storage', 'authn', 'authz', 'admission'] as const;
type GrpcService = typeof GRPC_SERVICES[number];
type Service = GrpcService | 'gateway' | 'controller-manager';

/** Bounds each service's start: generous, as several test files share a loaded machine. */
const START_TIMEOUT_MS = 60_000;

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

export interface ClusterOptions {
  /** Extra flags per service. */
  flags?: Partial<Record<Service, string[]>>;
  env?: Record<string, string>;
  dataDir?: string;
  /** Leaves the controller-manager out (its requests would share small in-flight limits). */
  withoutControllerManager?: boolean;
  /** Options of the node runtime of every service (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
  nodeArgs?: string[];
  /** More processes of a service beside the first (`{ authn: 1 }`: two authn), started with it as `authn-2`, ...:
   * a gRPC service's each on a socket of its own, every peer given all their addresses; a gateway's on a free port. */
  replicas?: Partial<Record<GrpcService | 'gateway', number>>;
  /** A NATS cluster of this many nodes instead of one nats-server; every process is given all their URLs. */
  natsNodes?: number;
  /** Members of the cluster's etcd (etcd3): 1 unless set. */
  etcdMembers?: number;
  /** Where storage keeps objects: leveldb (default, or TEST_STORAGE_BACKEND) or etcd3, a one-member etcd of the cluster's own. */
  storageBackend?: 'leveldb' | 'etcd3';
}

/** A process of a service beside its first (Cluster.startReplica). */
export interface Replica {
  proc: ChildProcess;
  /** The socket it serves gRPC on, or the port it serves HTTPS on (a gateway). */
  address: string;
  port: number;
  log: string[];
}

/** Clusters started and not yet stopped: their processes are killed when the test process exits, whatever a test
 * left running (a `before` that timed out while its cluster was starting leaves its `after` nothing to stop). */
const unstopped = new Set<Cluster>();
process.once('exit', () => { for (const c of unstopped) c.killAllNow(); });

export class Cluster {
  readonly procs = new Map<Service, ChildProcess>();
  readonly logs = new Map<Service, string[]>();
  /** The processes beside each service's first, by name (`authn-2`). */
  readonly replicas = new Map<string, Replica>();
  /** Processes stopped on purpose (by kill or stop), which are not restarted. */
  private readonly deliberate = new WeakSet<ChildProcess>();
  private stopping = false;
  addresses = {} as Record<GrpcService, string>;
  port = 0;
  natsUrl = '';
  private nats?: RunningNats;
  /** The NATS cluster, with the natsNodes option. */
  natsCluster?: NatsCluster;
  /** The cluster's etcd, with the etcd3 storage backend. */
  etcd?: RunningEtcd;
  readonly storageBackend: 'leveldb' | 'etcd3';
  private ownsDataDir: boolean;
  readonly dataDir: string;
  /** Where the gRPC services' sockets are: short, as a socket path must be. */
  private readonly socketDir = mkdtempSync(join(tmpdir(), 'svc-sock-'));

  constructor(private readonly opts: ClusterOptions = {}) {
    this.ownsDataDir = !opts.dataDir;
    this.storageBackend = opts.storageBackend ?? (process.env.TEST_STORAGE_BACKEND === 'etcd3' ? 'etcd3' : 'leveldb');
    this.dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-it-'));
  }

  /** Starts everything; on failure stops what did start before rethrowing, so nothing is left behind. */
  async start(): Promise<this> {
    unstopped.add(this);
    try {
      if (this.opts.natsNodes) {
        this.natsCluster = await new NatsCluster().start(this.opts.natsNodes);
        this.natsUrl = this.natsCluster.urls;
      } else {
        this.nats = await startNats();
        this.natsUrl = this.nats.url;
      }
      if (this.storageBackend === 'etcd3') this.etcd = await startEtcd({ members: this.opts.etcdMembers });
      // A socket of its own for each gRPC service; the gateway binds a free port itself and says which.
      for (const s of GRPC_SERVICES) this.addresses[s] = `unix://${join(this.socketDir, `${s}.sock`)}`;
      // In the launcher's stages: storage, then the services that need only it side by side, then the gateway.
      await this.startService('storage');
      await this.startReplicas('storage');
      const peers = await Promise.allSettled((['authn', 'authz', 'admission'] as const).map((s) => this.startService(s).then(() => this.startReplicas(s))));
      for (const p of peers) if (p.status === 'rejected') throw p.reason;
      await this.startService('gateway');
      await this.startReplicas('gateway');
      if (!this.opts.withoutControllerManager) await this.startService('controller-manager');
      return this;
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /** The address a service's peers are given: its first process's, then its replicas'. */
  private peer(s: GrpcService): string {
    const extra = Array.from({ length: this.opts.replicas?.[s] ?? 0 }, (_, i) => this.replicaSocket(`${s}-${i + 2}`));
    return [this.addresses[s], ...extra].join(',');
  }

  private replicaSocket(name: string): string {
    return `unix://${join(this.socketDir, `${name}.sock`)}`;
  }

  private args(s: Service): string[] {
    const a = { storage: this.peer('storage'), authn: this.peer('authn'), authz: this.peer('authz'), admission: this.peer('admission') };
    const common: Record<Service, string[]> = {
      storage: [`--listen=${this.addresses.storage}`, `--nats-url=${this.natsUrl}`, `--data-dir=${this.dataDir}`, ...this.storageBackendArgs()],
      authn: [`--listen=${this.addresses.authn}`, `--storage-address=${a.storage}`, `--nats-url=${this.natsUrl}`, `--client-ca-file=${pkiPaths(this.dataDir).caCert}`, `--data-dir=${this.dataDir}`],
      authz: [`--listen=${this.addresses.authz}`, `--storage-address=${a.storage}`, `--nats-url=${this.natsUrl}`],
      admission: [`--listen=${this.addresses.admission}`, `--storage-address=${a.storage}`, `--authz-address=${a.authz}`, `--nats-url=${this.natsUrl}`],
      gateway: [`--secure-port=${this.port}`, `--data-dir=${this.dataDir}`, `--nats-url=${this.natsUrl}`, `--storage-address=${a.storage}`,
        `--authn-address=${a.authn}`, `--authz-address=${a.authz}`, `--admission-address=${a.admission}`],
      'controller-manager': [`--server=https://127.0.0.1:${this.port}`, `--data-dir=${this.dataDir}`, ...this.controllerDefaults()],
    };
    return [...common[s], ...(this.opts.flags?.[s] ?? [])];
  }

  private storageBackendArgs(): string[] {
    return this.etcd ? ['--storage-backend=etcd3', `--etcd-servers=${this.etcd.servers}`] : [];
  }

  /** Unless a test sets its own: no leader election (one controller-manager; renewing a Lease would move the
   * store's revision on its own and a restarted one would wait out the killed one's Lease), and no root-CA
   * ConfigMap in every namespace (tests count the ConfigMaps they make). */
  private controllerDefaults(): string[] {
    const own = this.opts.flags?.['controller-manager'] ?? [];
    return [
      ...(own.some((f) => f.startsWith('--leader-elect')) ? [] : ['--leader-elect=false']),
      ...(own.some((f) => f.startsWith('--controllers')) ? [] : ['--controllers=*,-root-ca-cert-publisher']),
    ];
  }

  /** Starts one service; waits for it to serve (the gateway: ready) unless `untilServing` is false. */
  async startService(s: Service, untilServing = true): Promise<void> {
    if (s === 'authn' || s === 'gateway') await import('../../internal/pki/index.js').then((m) => m.ensurePki(this.dataDir));
    const proc = spawn(process.execPath, [...serviceNodeArgs(s), ...(this.opts.nodeArgs ?? []), entry(s), ...this.args(s)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...this.opts.env } });
    const log: string[] = this.logs.get(s) ?? [];
    this.logs.set(s, log);
    const earlier = log.length; // a restarted service announces itself anew
    proc.stdout!.on('data', (d) => log.push(String(d)));
    proc.stderr!.on('data', (d) => log.push(String(d)));
    this.procs.set(s, proc);
    if (s === 'controller-manager') this.restartOnExit(proc);
    // One that exits is waited for no longer (a controller-manager is started again: its output may still say so).
    const exited = () => s !== 'controller-manager' && (proc.exitCode !== null || proc.signalCode !== null);
    const bound = await waitFor(() => exited() || this.learnPort(s, log.slice(earlier).join('')), START_TIMEOUT_MS, 50) && !exited();
    const serving = async () => exited() || (s === 'gateway' ? this.ready() : s === 'controller-manager' ? true : checkHealth(this.addresses[s as GrpcService]));
    const ok = bound && (!untilServing || await waitFor(serving, START_TIMEOUT_MS)) && !exited();
    if (!ok) throw new Error(`${s} did not become healthy:\n${log.join('')}`);
  }

  private async startReplicas(s: GrpcService | 'gateway'): Promise<void> {
    for (let i = 0; i < (this.opts.replicas?.[s] ?? 0); i++) await this.startReplica(`${s}-${i + 2}`);
  }

  /** Starts (or starts again) a process beside a service's first, `authn-2`, and waits for it to serve. */
  async startReplica(name: string): Promise<Replica> {
    const s = name.slice(0, name.lastIndexOf('-')) as GrpcService | 'gateway';
    const gateway = s === 'gateway';
    const address = gateway ? '' : this.replicaSocket(name);
    const args = this.args(s).map((a) => (a.startsWith('--listen=') ? `--listen=${address}` : a.startsWith('--secure-port=') ? '--secure-port=0' : a));
    const proc = spawn(process.execPath, [...serviceNodeArgs(s), ...(this.opts.nodeArgs ?? []), entry(s), ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...this.opts.env } });
    const log = this.replicas.get(name)?.log ?? [];
    const earlier = log.length;
    proc.stdout!.on('data', (d) => log.push(String(d)));
    proc.stderr!.on('data', (d) => log.push(String(d)));
    const replica: Replica = { proc, address, port: 0, log };
    this.replicas.set(name, replica);
    const exited = () => proc.exitCode !== null || proc.signalCode !== null;
    const announced = () => log.slice(earlier).join('').split('\n').slice(0, -1).map(announcedAddress).find((a) => a !== undefined);
    const serving = async () => {
      const at = announced();
      if (!at || exited()) return exited();
      if (!gateway) return checkHealth(address);
      replica.port = portOf(at);
      return (await this.request('GET', '/readyz', { port: replica.port }).catch(() => undefined))?.status === 200;
    };
    if (!(await waitFor(serving, START_TIMEOUT_MS)) || exited()) throw new Error(`${name} did not become healthy:\n${log.join('')}`);
    return replica;
  }

  /** Kills a process beside a service's first (SIGKILL by default, as a crash). */
  async killReplica(name: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const proc = this.replicas.get(name)?.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => { proc.once('exit', () => resolve()); proc.kill(signal); });
  }

  /** As the launcher does, a controller-manager that exits unasked (a leader that lost its Lease) is started again. */
  private restartOnExit(proc: ChildProcess): void {
    proc.once('exit', (code) => {
      if (code === 2 || this.deliberate.has(proc) || this.procs.get('controller-manager') !== proc) return; // 2: flags refused
      setTimeout(() => { if (!this.stopping && this.procs.get('controller-manager') === proc) void this.startService('controller-manager').catch(() => undefined); }, 1000);
    });
  }

  /** Reads the port a service announces, as the launcher does; the controller-manager serves none. */
  private learnPort(s: Service, output: string): boolean {
    // A candidate waiting out a killed leader's Lease is up too: it runs the controllers once the Lease is its.
    if (s === 'controller-manager') return output.includes('controller-manager running') || output.includes('controller-manager standing by');
    // Whole lines only: a port cut in two by a chunk boundary would be another port.
    const announced = output.split('\n').slice(0, -1).map(announcedAddress).find((a) => a !== undefined);
    if (!announced) return false;
    if (s === 'gateway') this.port = portOf(announced);
    else this.addresses[s] = announced;
    return true;
  }

  /** The PID of every process the cluster runs, nats-server (and etcd) included, by name. */
  pids(): Map<string, number> {
    const pids = new Map<string, number>(this.nats ? [['nats-server', this.nats.pid]] : []);
    if (this.etcd) pids.set('etcd', this.etcd.pid);
    for (const [s, proc] of this.procs) if (proc.pid !== undefined && proc.exitCode === null) pids.set(s, proc.pid);
    return pids;
  }

  /** Stops the nats-server (as an outage; with SIGKILL, as a crash); `restartNats` brings it back on the same port. */
  async stopNats(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    await (signal === 'SIGKILL' ? this.nats?.crash() : this.nats?.stop());
    this.nats = undefined;
  }

  async restartNats(): Promise<void> {
    this.nats = await startNats({ port: Number(new URL(this.natsUrl).port) });
  }

  private async ready(): Promise<boolean> {
    return (await this.request('GET', '/readyz').catch(() => undefined))?.status === 200;
  }

  /** Kills one service (SIGKILL by default, as a crash). */
  async kill(s: Service, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const proc = this.procs.get(s);
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    this.deliberate.add(proc);
    await new Promise<void>((resolve) => { proc.once('exit', () => resolve()); proc.kill(signal); });
    this.procs.delete(s);
  }

  /** Stops every process, clients before their servers (a gRPC server that stops waits for its open calls to end). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.kill('controller-manager');
    const replicasOf = (s: Service) => [...this.replicas.keys()].filter((n) => n.startsWith(`${s}-`)).map((n) => this.killReplica(n, 'SIGTERM'));
    await Promise.all([this.kill('gateway', 'SIGTERM'), ...replicasOf('gateway')]);
    await Promise.all((['authn', 'authz', 'admission'] as const).flatMap((s) => [this.kill(s, 'SIGTERM'), ...replicasOf(s)]));
    await Promise.all([this.kill('storage', 'SIGTERM'), ...replicasOf('storage')]);
    for (const s of [...this.procs.keys()]) await this.kill(s);
    await this.nats?.stop();
    await this.natsCluster?.stop();
    await this.etcd?.stop();
    if (this.ownsDataDir) rmSync(this.dataDir, { recursive: true, force: true });
    rmSync(this.socketDir, { recursive: true, force: true });
    unstopped.delete(this);
  }

  /** SIGKILLs every process of the cluster at once, synchronously, as the test process's exit allows. */
  killAllNow(): void {
    const pids = [...this.pids().values(), ...[...this.replicas.values()].map((r) => r.proc.pid),
      ...(this.etcd?.members.map((m) => m.pid) ?? []), ...(this.natsCluster?.nodes.map((n) => n?.pid) ?? [])];
    for (const pid of pids) {
      try { if (pid) process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
    }
  }

  get kubeconfig(): string {
    return join(this.dataDir, 'admin.kubeconfig');
  }

  private tls() {
    const p = pkiPaths(this.dataDir);
    return { ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) };
  }

  /** One HTTPS request as the admin user (anonymously with anonymous: true, or with another client certificate). */
  request(method: string, path: string, opts: {
    body?: unknown; headers?: Record<string, string>; anonymous?: boolean; timeoutMs?: number; clientCert?: { cert: string; key: string };
    /** Another gateway's port (a replica's). */
    port?: number;
  } = {}): Promise<Response> {
    const tls = this.tls();
    const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' || Buffer.isBuffer(opts.body) ? opts.body : JSON.stringify(opts.body);
    // An explicit length: Node sends no body with a DELETE otherwise.
    const headers: Record<string, string> = {
      ...(payload !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(payload)) } : {}), ...opts.headers,
    };
    return new Promise((resolve, reject) => {
      const req = https.request({
        host: '127.0.0.1', port: opts.port ?? this.port, method, path, headers, ca: tls.ca,
        ...(opts.anonymous ? {} : opts.clientCert ?? { cert: tls.cert, key: tls.key }), timeout: opts.timeoutMs ?? 15_000,
      }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: any;
          try { body = JSON.parse(text); } catch { body = undefined; }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** Opens a watch and collects its events until `until` is satisfied, the stream ends, the timeout or `signal` aborts it. */
  watch(path: string, opts: { until?: (events: any[]) => boolean; timeoutMs?: number; headers?: Record<string, string>; signal?: AbortSignal; port?: number } = {}): Promise<{ status: number; events: any[]; lines: string[]; ended: boolean }> {
    const tls = this.tls();
    return new Promise((resolve, reject) => {
      const events: any[] = [];
      const lines: string[] = []; // each event as sent
      let buffer = '';
      let status = 0;
      let settled = false;
      const finish = (ended: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        resolve({ status, events, lines, ended });
      };
      const timer = setTimeout(() => finish(false), opts.timeoutMs ?? 10_000);
      opts.signal?.addEventListener('abort', () => finish(false), { once: true });
      const req = https.request({ host: '127.0.0.1', port: opts.port ?? this.port, method: 'GET', path, ca: tls.ca, cert: tls.cert, key: tls.key, headers: opts.headers }, (res) => {
        status = res.statusCode ?? 0;
        res.on('data', (chunk) => {
          buffer += String(chunk);
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl).trim();
            buffer = buffer.slice(nl + 1);
            if (line) {
              lines.push(line);
              events.push(JSON.parse(line));
            }
          }
          if (status !== 200 && buffer) { events.push(JSON.parse(buffer)); buffer = ''; }
          if (opts.until?.(events)) finish(false);
        });
        res.on('end', () => {
          if (buffer.trim()) events.push(JSON.parse(buffer));
          finish(true);
        });
        res.on('error', () => finish(true));
      });
      req.on('error', (err) => (settled ? undefined : events.length ? finish(true) : reject(err)));
      req.end();
    });
  }
}

/** Polls until check resolves true or the timeout runs out. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, intervalMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await Promise.resolve(check()).catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return false;
}
