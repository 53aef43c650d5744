// The launcher: every service as a child process (and a local nats-server when
// no --nats-url is given), each handed the flags it owns, started in dependency
// order. Those on the serving path (storage, then authn, authz and admission side
// by side, then the gateway) are waited on until healthy; the controller-manager
// is not: it lists every resource before its controllers run, which takes long at
// size, and the API serves without it. All are stopped together. Every child that
// serves binds its own address (a Unix socket under the data dir for a gRPC service,
// port 0 for the gateway, unless one is given) and announces it; its peers are given
// the address it announced, and its health is checked there.
// Replicated (--replicas, --nats-nodes, --etcd-members), each service runs several
// times, every client is given the address of each replica, and a local NATS
// cluster and etcd cluster start first.
import https from 'node:https';
import { readFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FlagError, flagArgs, parseDuration, recordFlag, splitArgs, type FlagSet } from '../config/flags.js';
import { SERVICE_FLAGS, serviceNodeArgs, type ServiceName } from '../config/services.js';
import { serviceEntryPoint } from './entry.js';
import { checkHealth } from '../rpc/index.js';
import { ensurePki, adminKubeconfigPath, writeAdminKubeconfigOf, type PkiPaths } from '../pki/index.js';
import { Child } from './child.js';
import { portOf } from './announce.js';
import { natsChildren } from './nats.js';
import { etcdChildren, etcdServers, planEtcd } from './etcd.js';
import { ETCD3, STORAGE_BACKEND_FLAG, readTopology, replicaName, replicasOf, type Topology } from './topology.js';

export const LAUNCHER_FLAGS: FlagSet = {
  'nats-server-binary': { type: 'string', default: 'nats-server', help: 'the nats-server to start when no --nats-url is given' },
  'startup-timeout': { type: 'duration', default: '60s', help: 'how long each service of the serving path may take to become healthy (the controller-manager is reported, not waited for)' },
  replicas: { type: 'int', default: '1', help: 'processes of each service, every client given the address of each; gateway N serves on --secure-port+N-1 and controller-manager N works through it; storage runs once on LevelDB (one writer), this many times on etcd3' },
  'nats-nodes': { type: 'int', default: '1', help: 'nats-server nodes started when no --nats-url is given; several form a cluster (routes on free loopback ports), every client given each URL' },
  'etcd-members': { type: 'int', default: '0', help: 'start a local etcd cluster of this many members (data under --data-dir/etcd) and run storage on it (--storage-backend=etcd3 --etcd-servers=<each member>); 0: none' },
  'etcd-port': { type: 'int', default: '12379', help: 'client port of the first local etcd member: member N serves clients on --etcd-port+2(N-1) and peers on the port after (0: free ports, for a data dir used once, as members keep their peer URLs)' },
  'etcd-binary': { type: 'string', default: 'etcd', help: 'the etcd that --etcd-members starts' },
};

const SERVICE_ORDER: ServiceName[] = ['storage', 'authn', 'authz', 'admission', 'gateway', 'controller-manager'];
/** What the API needs to serve, in stages: each needs only the stages before it, so a stage starts side by side. */
const SERVING_PATH: ServiceName[][] = [['storage'], ['authn', 'authz', 'admission'], ['gateway']];
/** What the controller-manager says once its controllers run (it serves no port to probe), or while another leads. */
const CONTROLLERS_RUNNING = 'controller-manager running';
const STANDING_BY = 'controller-manager standing by';
const GRPC_SERVICES = ['storage', 'authn', 'authz', 'admission'] as const;
/** Where a replicated API's kubeconfig goes: one context per gateway (admin.kubeconfig names whichever gateway wrote it last). */
const GATEWAYS_KUBECONFIG = 'gateways.kubeconfig';

/** Routes each given flag to every service that declares it; unknown flags are an error. */
export function routeFlags(argv: string[]): { perService: Record<ServiceName, Map<string, string>>; launcher: Map<string, string> } {
  const isBool = (n: string) => Object.values(SERVICE_FLAGS).some((s) => s[n]?.type === 'bool') || LAUNCHER_FLAGS[n]?.type === 'bool';
  const perService = Object.fromEntries(SERVICE_ORDER.map((s) => [s, new Map<string, string>()])) as Record<ServiceName, Map<string, string>>;
  const launcher = new Map<string, string>();
  for (const [name, value] of splitArgs(argv, isBool)) {
    const owners = SERVICE_ORDER.filter((s) => SERVICE_FLAGS[s][name]);
    if (LAUNCHER_FLAGS[name]) launcher.set(name, value);
    else if (owners.length === 0) throw new FlagError(`unknown flag --${name}`);
    for (const s of owners) recordFlag(perService[s], name, value, SERVICE_FLAGS[s][name].type === 'array');
  }
  return { perService, launcher };
}

/** Asks the gateway's /readyz as the admin, as any client must authenticate (anonymous access may be off). */
function httpsReady(port: number, pki: PkiPaths): Promise<boolean> {
  const tls = { ca: readFileSync(pki.caCert), cert: readFileSync(pki.adminCert), key: readFileSync(pki.adminKey) };
  return new Promise((done) => {
    const req = https.get({ host: '127.0.0.1', port, path: '/readyz', ...tls, timeout: 1000 }, (res) => {
      res.resume();
      done(res.statusCode === 200);
    });
    req.on('error', () => done(false));
    req.on('timeout', () => { req.destroy(); done(false); });
  });
}

export interface Launched {
  children: Child[];
  stop(): Promise<void>;
}

/** One process of a service: its name and the flags that differ between replicas. */
interface Replica {
  service: ServiceName;
  name: string;
  own: Map<string, string>;
  child?: Child;
}
type Plan = Record<ServiceName, Replica[]>;

/** The longest Unix socket path the kernel takes (sun_path holds 108 bytes with the terminating NUL). */
const MAX_SOCKET_PATH = 107;

/** Where the services' Unix sockets go: under the data dir, or a private temporary directory (`temporary`,
 * removed at the end) when that path would be too long for a socket. */
function socketDir(dataDir: string, names: string[]): { dir: string; temporary: boolean } {
  const dir = join(dataDir, 'run');
  const longest = Math.max(...names.map((n) => join(dir, `${n}.sock`).length));
  return longest <= MAX_SOCKET_PATH ? { dir, temporary: false } : { dir: mkdtempSync(join(tmpdir(), 'svc-apiserver-')), temporary: true };
}

/** The replicas of each service and what needs no other service's address: the data dir, for a gRPC service given
 * no address a Unix socket of each replica (its peers all run on this machine: no TCP/IP stack between them), for
 * replicated gateways consecutive ports. Answers a directory to remove at the end. */
function planServices(perService: Record<ServiceName, Map<string, string>>, topology: Topology, dataDir: string): { plan: Plan; temporary?: string } {
  const plan = Object.fromEntries(SERVICE_ORDER.map((s) => {
    const n = replicasOf(topology, s);
    return [s, Array.from({ length: n }, (_, i): Replica => ({ service: s, name: replicaName(s, i, n), own: new Map() }))];
  })) as Plan;
  const sockets = socketDir(dataDir, GRPC_SERVICES.flatMap((s) => plan[s].map((r) => r.name)));
  for (const s of GRPC_SERVICES) {
    if (!perService[s].has('listen')) for (const r of plan[s]) r.own.set('listen', `unix://${join(sockets.dir, `${r.name}.sock`)}`);
  }
  for (const s of SERVICE_ORDER) if (SERVICE_FLAGS[s]['data-dir']) perService[s].set('data-dir', dataDir);
  if (plan.gateway.length > 1) {
    const base = Number(perService.gateway.get('secure-port') ?? SERVICE_FLAGS.gateway['secure-port'].default);
    plan.gateway.forEach((r, i) => r.own.set('secure-port', String(base === 0 ? 0 : base + i)));
  }
  return { plan, temporary: sockets.temporary ? sockets.dir : undefined };
}

/** Where a peer will serve before it says so: its Unix socket or fixed port, known from its flags (port 0 is not). */
function plannedAddress(flags: Map<string, string>): string | undefined {
  const listen = flags.get('listen');
  return listen && (listen.startsWith('unix://') || portOf(listen) > 0) ? listen : undefined;
}

/** Every address of a service, comma-separated: each replica's as it announced it, or as planned for one of the
 * same stage not yet serving; undefined while one is not known. */
function addressesOf(replicas: Replica[], common: Map<string, string>): string | undefined {
  const known = replicas.map((r) => r.child?.address ?? plannedAddress(new Map([...common, ...r.own])));
  return known.every((a) => a !== undefined) ? known.join(',') : undefined;
}

/** A replica's flags at one start: every address of each peer (unless given), and on a restart its own address
 * again, which its peers were given. */
function serviceArgs(r: Replica, perService: Record<ServiceName, Map<string, string>>, plan: Plan, address?: string): string[] {
  const s = r.service;
  const given = new Map([...perService[s], ...r.own]);
  for (const peer of GRPC_SERVICES) {
    const flag = `${peer}-address`;
    const known = addressesOf(plan[peer], perService[peer]);
    if (SERVICE_FLAGS[s][flag] && !perService[s].has(flag) && known) given.set(flag, known);
  }
  if (address) given.set(s === 'gateway' ? 'secure-port' : 'listen', s === 'gateway' ? String(portOf(address)) : address);
  return flagArgs(given);
}

/** How to reach the API: the kubeconfig, and with several gateways one context for each. */
function readyMessage(gateways: string[], modes: string | undefined, kubeconfig: string): string {
  const how = gateways.length === 1 ? ['kubectl.1.33 get namespaces']
    : gateways.map((_, i) => `kubectl.1.33 --context=gateway-${i + 1} get namespaces${i === 0 ? '   # the current context' : ''}`);
  return `svc-apiserver is ready on ${gateways.join(', ')} (authorization mode ${modes})\n\n  export KUBECONFIG=${kubeconfig}\n${how.map((l) => `  ${l}\n`).join('')}`;
}

export async function launch(argv: string[]): Promise<Launched> {
  const { perService, launcher } = routeFlags(argv);
  const flag = (name: string): string => launcher.get(name) ?? LAUNCHER_FLAGS[name].default!;
  const topology = readTopology(flag, perService.storage);
  const dataDir = resolve(perService.gateway.get('data-dir') ?? './data');
  mkdirSync(dataDir, { recursive: true });
  const pki = await ensurePki(dataDir);
  if (!perService.authn.has('client-ca-file')) perService.authn.set('client-ca-file', pki.caCert);
  // The token controller signs with the key the authn service verifies with.
  const signingKey = perService.authn.get('service-account-signing-key-file') || perService.authn.get('tls-private-key-file');
  if (signingKey && !perService['controller-manager'].has('service-account-private-key-file')) perService['controller-manager'].set('service-account-private-key-file', signingKey);
  const etcd = await planEtcd(topology.etcdMembers, topology.etcdPort);
  if (etcd.length > 0) {
    perService.storage.set(STORAGE_BACKEND_FLAG, ETCD3);
    perService.storage.set('etcd-servers', etcdServers(etcd));
  }
  const { plan, temporary } = planServices(perService, topology, dataDir);
  if (topology.storageReplicas < topology.replicas) console.log('svc-apiserver: storage runs once on LevelDB (one writer); --storage-backend=etcd3 or --etcd-members runs it replicated');
  const children: Child[] = [];
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stopAll(children).then(() => { if (temporary) rmSync(temporary, { recursive: true, force: true }); }));
  const timeoutMs = parseDuration(flag('startup-timeout'));
  // Until every child serves, a signal aborts the start-up and takes down what already runs.
  let interrupted: string | undefined;
  const interrupt = (signal: NodeJS.Signals) => { interrupted = signal; void stop(); };
  process.once('SIGINT', interrupt).once('SIGTERM', interrupt);
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
  const startAndWait = async (child: Child) => {
    if (interrupted) throw new Error(`interrupted by ${interrupted} before starting ${child.spec.name}`);
    children.push(child);
    child.start();
    const healthy = await child.waitHealthy(timeoutMs);
    if (interrupted) throw new Error(`interrupted by ${interrupted} while starting ${child.spec.name}`);
    if (healthy) return console.log(`svc-apiserver: ${child.spec.name} healthy${child.address ? ` on ${child.address}` : ''} after ${elapsed()}`);
    const why = child.failure ? `${child.failure} before it became healthy` : `did not become healthy within ${timeoutMs / 1000}s`;
    throw new Error(`${child.spec.name} ${why}; its last output:\n${child.tail.join('\n')}`);
  };
  // The first failure stops everything at once (the rest of the stage then ends its wait) and is the one reported.
  const startStage = async (stage: Child[]) => {
    let failure: unknown;
    await Promise.all(stage.map((child) => startAndWait(child).catch((err) => { failure ??= err; void stop(); })));
    if (failure) throw failure;
  };
  const serviceChild = (r: Replica, healthy: (address: string | undefined, child: Child) => Promise<boolean>, optional = false): Child => {
    const child: Child = new Child({
      name: r.name, command: process.execPath, args: (address) => [...serviceNodeArgs(r.service), serviceEntryPoint(r.service), ...serviceArgs(r, perService, plan, address)],
      healthy: (address) => healthy(address, child), announces: r.service !== 'controller-manager', optional,
    });
    r.child = child;
    return child;
  };
  // Each is checked where it said it serves; no address said, not serving.
  const servingCheck = (s: ServiceName) => (address: string | undefined): Promise<boolean> =>
    (!address ? Promise.resolve(false) : s === 'gateway' ? httpsReady(portOf(address), pki) : checkHealth(address));
  try {
    if (etcd.length > 0) await startStage(etcdChildren(flag('etcd-binary'), dataDir, etcd));
    if (topology.natsNodes > 0) {
      const nodes = await natsChildren(flag('nats-server-binary'), dataDir, topology.natsNodes);
      await startStage(nodes);
      const urls = nodes.map((n) => `nats://${n.address}`).join(',');
      for (const s of SERVICE_ORDER) if (SERVICE_FLAGS[s]['nats-url']) perService[s].set('nats-url', urls);
    }
    for (const stage of SERVING_PATH) await startStage(stage.flatMap((s) => plan[s].map((r) => serviceChild(r, servingCheck(s)))));
    await confirmServing(children, timeoutMs);
  } catch (err) {
    await stop();
    throw err;
  } finally {
    process.off('SIGINT', interrupt).off('SIGTERM', interrupt);
  }
  const gateways = plan.gateway.map((r) => `https://127.0.0.1:${portOf(r.child!.address!)}`);
  // Controller-manager N works through gateway N; its own output says when its controllers run (the lines of the
  // current process only, as it may restart).
  const managers = plan['controller-manager'].map((r, i) => {
    if (!perService['controller-manager'].has('server')) r.own.set('server', gateways[i % gateways.length]);
    const child = serviceChild(r, async (_address, c) => c.current.some((l) => l.includes(CONTROLLERS_RUNNING)), true);
    children.push(child);
    child.start();
    return child;
  });
  const kubeconfig = gateways.length === 1 ? adminKubeconfigPath(dataDir) : join(dataDir, GATEWAYS_KUBECONFIG);
  if (gateways.length > 1) await writeAdminKubeconfigOf(kubeconfig, gateways.map((server, i) => ({ name: `gateway-${i + 1}`, server })), pki);
  const modes = perService.authz.get('authorization-mode') ?? SERVICE_FLAGS.authz['authorization-mode'].default;
  console.log(readyMessage(gateways, modes, kubeconfig));
  for (const m of managers) void reportSync(m, timeoutMs, elapsed);
  return { children, stop };
}

/** Ready means every child serves now, at the address it announced: one that died after its stage (and is
 * restarting on its address) is waited for again. */
async function confirmServing(children: Child[], timeoutMs: number): Promise<void> {
  for (const child of children) {
    if (!(await child.waitHealthy(timeoutMs))) throw new Error(`${child.spec.name} does not serve any more on ${child.address}; its last output:\n${child.tail.join('\n')}`);
  }
}

/** Says when a controller-manager's controllers run, and every interval until then that they do not yet (or, once,
 * that it stands by while another holds the leader lease). */
async function reportSync(child: Child, intervalMs: number, elapsed: () => string): Promise<void> {
  const name = child.spec.name;
  const since = Date.now();
  let standingBy = false;
  while (!(await child.waitHealthy(intervalMs))) {
    if (child.stopped) return;
    if (child.failure) return console.log(`svc-apiserver: ${name} ${child.failure}; not restarted, the API serves without it`);
    if (child.current.some((l) => l.includes(STANDING_BY))) {
      if (!standingBy) console.log(`svc-apiserver: ${name} standing by: another holds the leader lease`);
      standingBy = true;
      continue;
    }
    console.log(`svc-apiserver: ${name} still syncing after ${Math.round((Date.now() - since) / 1000)}s; the API serves meanwhile`);
  }
  console.log(`svc-apiserver: ${name} running after ${elapsed()}`);
}

/** Stops every child, the last started first; none restarts meanwhile, even when signalled directly (Ctrl-C). */
async function stopAll(children: Child[]): Promise<void> {
  for (const c of children) c.retire();
  for (const c of [...children].reverse()) await c.stop();
}
