// The launcher: every service as a child process (and a local nats-server when
// no --nats-url is given), each handed the flags it owns, started in dependency
// order. Those on the serving path (storage, then authn, authz and admission side
// by side, then the gateway) are waited on until healthy; the controller-manager
// is not: it lists every resource before its controllers run, which takes long at
// size, and the API serves without it. All are stopped together. Every child that
// serves binds its own address (a Unix socket under the data dir for a gRPC service,
// port 0 for the gateway, unless one is given) and announces it; its peers are given
// the address it announced, and its health is checked there.
import https from 'node:https';
import net from 'node:net';
import { readFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlagError, flagArgs, parseDuration, recordFlag, splitArgs, type FlagSet } from '../config/flags.js';
import { SERVICE_FLAGS, serviceNodeArgs, type ServiceName } from '../config/services.js';
import { checkHealth } from '../rpc/index.js';
import { ensurePki, adminKubeconfigPath, type PkiPaths } from '../pki/index.js';
import { Child } from './child.js';
import { portOf } from './announce.js';

export const LAUNCHER_FLAGS: FlagSet = {
  'nats-server-binary': { type: 'string', default: 'nats-server', help: 'the nats-server to start when no --nats-url is given' },
  'startup-timeout': { type: 'duration', default: '60s', help: 'how long each service of the serving path may take to become healthy (the controller-manager is reported, not waited for)' },
};

const SERVICE_ORDER: ServiceName[] = ['storage', 'authn', 'authz', 'admission', 'gateway', 'controller-manager'];
/** What the API needs to serve, in stages: each needs only the stages before it, so a stage starts side by side. */
const SERVING_PATH: ServiceName[][] = [['storage'], ['authn', 'authz', 'admission'], ['gateway']];
/** What the controller-manager says once its controllers run (it serves no port to probe). */
const CONTROLLERS_RUNNING = 'controller-manager running';
const GRPC_SERVICES = ['storage', 'authn', 'authz', 'admission'] as const;
const MAX_NATS_PAYLOAD = 8 * 1024 * 1024;

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

const entryPoint = (service: string) => fileURLToPath(new URL(`../../cmd/${service}/main.js`, import.meta.url));

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

const hostOf = (address: string): string => address.slice(0, address.lastIndexOf(':')).replace(/^\[(.*)\]$/, '$1');

/** The longest Unix socket path the kernel takes (sun_path holds 108 bytes with the terminating NUL). */
const MAX_SOCKET_PATH = 107;

/** Where the services' Unix sockets go: under the data dir, or a private temporary directory (`temporary`,
 * removed at the end) when that path would be too long for a socket. */
function socketDir(dataDir: string): { dir: string; temporary: boolean } {
  const dir = join(dataDir, 'run');
  const longest = Math.max(...GRPC_SERVICES.map((s) => join(dir, `${s}.sock`).length));
  return longest <= MAX_SOCKET_PATH ? { dir, temporary: false } : { dir: mkdtempSync(join(tmpdir(), 'svc-apiserver-')), temporary: true };
}

/** What needs no other service's address: the data dir, and for a gRPC service given no address a Unix socket
 * (its peers all run on this machine: no TCP/IP stack between them). Answers a directory to remove at the end. */
function planServices(perService: Record<ServiceName, Map<string, string>>, dataDir: string): string | undefined {
  const sockets = socketDir(dataDir);
  for (const s of GRPC_SERVICES) if (!perService[s].has('listen')) perService[s].set('listen', `unix://${join(sockets.dir, `${s}.sock`)}`);
  for (const s of SERVICE_ORDER) if (SERVICE_FLAGS[s]['data-dir']) perService[s].set('data-dir', dataDir);
  return sockets.temporary ? sockets.dir : undefined;
}

/** Where a peer will serve before it says so: its Unix socket or fixed port, known from its flags (port 0 is not). */
function plannedAddress(flags: Map<string, string>): string | undefined {
  const listen = flags.get('listen');
  return listen && (listen.startsWith('unix://') || portOf(listen) > 0) ? listen : undefined;
}

/** A service's flags at one start: each peer's address as the peer announced it, or as planned for a peer of the
 * same stage not yet serving (unless given), and on a restart its own address again, which its peers were given. */
function serviceArgs(s: ServiceName, perService: Record<ServiceName, Map<string, string>>, peers: Map<string, Child>, address?: string): string[] {
  const given = new Map(perService[s]);
  for (const peer of GRPC_SERVICES) {
    const flag = `${peer}-address`;
    const known = peers.get(peer)?.address ?? plannedAddress(perService[peer]);
    if (SERVICE_FLAGS[s][flag] && !given.has(flag) && known) given.set(flag, known);
  }
  if (address) given.set(s === 'gateway' ? 'secure-port' : 'listen', s === 'gateway' ? String(portOf(address)) : address);
  return flagArgs(given);
}

/** Whether something accepts TCP connections at `address`. */
function accepts(address: string): Promise<boolean> {
  return new Promise((done) => {
    const socket = net.connect(portOf(address), hostOf(address), () => { socket.end(); done(true); });
    socket.on('error', () => done(false));
  });
}

/** nats-server on a port it picks (`-p -1`) and logs; a restart takes the same port. */
function natsChild(binary: string, dataDir: string): Child {
  const conf = join(dataDir, 'nats.conf');
  writeFileSync(conf, `max_payload: ${MAX_NATS_PAYLOAD}\n`);
  return new Child({
    name: 'nats', command: binary, announces: true, healthy: (address) => (address ? accepts(address) : Promise.resolve(false)),
    args: (address) => ['-c', conf, '-a', '127.0.0.1', '-p', address ? String(portOf(address)) : '-1'],
  });
}

export async function launch(argv: string[]): Promise<Launched> {
  const { perService, launcher } = routeFlags(argv);
  const dataDir = resolve(perService.gateway.get('data-dir') ?? './data');
  mkdirSync(dataDir, { recursive: true });
  const pki = await ensurePki(dataDir);
  if (!perService.authn.has('client-ca-file')) perService.authn.set('client-ca-file', pki.caCert);
  // The token controller signs with the key the authn service verifies with.
  const signingKey = perService.authn.get('service-account-signing-key-file') || perService.authn.get('tls-private-key-file');
  if (signingKey && !perService['controller-manager'].has('service-account-private-key-file')) perService['controller-manager'].set('service-account-private-key-file', signingKey);
  const temporary = planServices(perService, dataDir);
  const children: Child[] = [];
  const byName = new Map<string, Child>();
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stopAll(children).then(() => { if (temporary) rmSync(temporary, { recursive: true, force: true }); }));
  const timeoutMs = parseDuration(launcher.get('startup-timeout') ?? LAUNCHER_FLAGS['startup-timeout'].default!);
  // Until every child serves, a signal aborts the start-up and takes down what already runs.
  let interrupted: string | undefined;
  const interrupt = (signal: NodeJS.Signals) => { interrupted = signal; void stop(); };
  process.once('SIGINT', interrupt).once('SIGTERM', interrupt);
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
  const startAndWait = async (child: Child) => {
    if (interrupted) throw new Error(`interrupted by ${interrupted} before starting ${child.spec.name}`);
    children.push(child);
    byName.set(child.spec.name, child);
    child.start();
    const healthy = await child.waitHealthy(timeoutMs);
    if (interrupted) throw new Error(`interrupted by ${interrupted} while starting ${child.spec.name}`);
    if (healthy) return console.log(`svc-apiserver: ${child.spec.name} healthy${child.address ? ` on ${child.address}` : ''} after ${elapsed()}`);
    const why = child.failure ? `${child.failure} before it became healthy` : `did not become healthy within ${timeoutMs / 1000}s`;
    throw new Error(`${child.spec.name} ${why}; its last output:\n${child.tail.join('\n')}`);
  };
  const serviceChild = (s: ServiceName, healthy: (address: string | undefined, child: Child) => Promise<boolean>, optional = false): Child => {
    const child: Child = new Child({
      name: s, command: process.execPath, args: (address) => [...serviceNodeArgs(s), entryPoint(s), ...serviceArgs(s, perService, byName, address)],
      healthy: (address) => healthy(address, child), announces: s !== 'controller-manager', optional,
    });
    return child;
  };
  // Each is checked where it said it serves; no address said, not serving.
  const servingCheck = (s: ServiceName) => (address: string | undefined): Promise<boolean> =>
    (!address ? Promise.resolve(false) : s === 'gateway' ? httpsReady(portOf(address), pki) : checkHealth(address));
  try {
    if (!perService.storage.has('nats-url')) {
      const nats = natsChild(launcher.get('nats-server-binary') ?? 'nats-server', dataDir);
      await startAndWait(nats);
      for (const s of SERVICE_ORDER) if (SERVICE_FLAGS[s]['nats-url']) perService[s].set('nats-url', `nats://${nats.address}`);
    }
    for (const stage of SERVING_PATH) {
      const starting = stage.map((s) => serviceChild(s, servingCheck(s)));
      // The first failure stops everything at once (the rest of the stage then ends its wait) and is the one reported.
      let failure: unknown;
      await Promise.all(starting.map((child) => startAndWait(child).catch((err) => { failure ??= err; void stop(); })));
      if (failure) throw failure;
    }
    await confirmServing(children, timeoutMs);
  } catch (err) {
    await stop();
    throw err;
  } finally {
    process.off('SIGINT', interrupt).off('SIGTERM', interrupt);
  }
  const gatewayPort = portOf(byName.get('gateway')!.address!);
  if (!perService['controller-manager'].has('server')) perService['controller-manager'].set('server', `https://127.0.0.1:${gatewayPort}`);
  // Its own output says when its controllers run: the lines of the current process only, as it may restart.
  const controllers = serviceChild('controller-manager', async (_address, child) => child.current.some((l) => l.includes(CONTROLLERS_RUNNING)), true);
  children.push(controllers);
  controllers.start();
  const modes = perService.authz.get('authorization-mode') ?? SERVICE_FLAGS.authz['authorization-mode'].default;
  console.log(`svc-apiserver is ready on https://127.0.0.1:${gatewayPort} (authorization mode ${modes})\n\n  export KUBECONFIG=${adminKubeconfigPath(dataDir)}\n  kubectl.1.33 get namespaces\n`);
  void reportSync(controllers, timeoutMs, elapsed);
  return { children, stop };
}

/** Ready means every child serves now, at the address it announced: one that died after its stage (and is
 * restarting on its address) is waited for again. */
async function confirmServing(children: Child[], timeoutMs: number): Promise<void> {
  for (const child of children) {
    if (!(await child.waitHealthy(timeoutMs))) throw new Error(`${child.spec.name} does not serve any more on ${child.address}; its last output:\n${child.tail.join('\n')}`);
  }
}

/** Says when the controller-manager's controllers run, and every interval until then that they do not yet. */
async function reportSync(child: Child, intervalMs: number, elapsed: () => string): Promise<void> {
  const since = Date.now();
  while (!(await child.waitHealthy(intervalMs))) {
    if (child.stopped) return;
    if (child.failure) return console.log(`svc-apiserver: controller-manager ${child.failure}; not restarted, the API serves without it`);
    console.log(`svc-apiserver: controller-manager still syncing after ${Math.round((Date.now() - since) / 1000)}s; the API serves meanwhile`);
  }
  console.log(`svc-apiserver: controller-manager running after ${elapsed()}`);
}

/** Stops every child, the last started first; none restarts meanwhile, even when signalled directly (Ctrl-C). */
async function stopAll(children: Child[]): Promise<void> {
  for (const c of children) c.retire();
  for (const c of [...children].reverse()) await c.stop();
}
