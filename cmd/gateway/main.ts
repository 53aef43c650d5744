// The HTTPS gateway: flags and wiring.
import { readFileSync } from 'node:fs';
import { connect } from '@nats-io/transport-node';
import { gatewayFlags } from '../../internal/config/services.js';
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { initTracing, shutdownTracing } from '../../internal/tracing/index.js';
import { ensurePki, writeAdminKubeconfig } from '../../internal/pki/index.js';
import { builtinRegistry } from '../../internal/registry/index.js';
import { messageNameFor } from '../../internal/apimachinery/protobuf/index.js';
import { parseFeatureGates } from '../../internal/config/features.js';

/** How long in-flight requests may take to finish once the server stops accepting new ones. */
const IN_FLIGHT_GRACE_MS = 2000;
import { Backends } from '../../gateway/backends.js';
import { WatchHub } from '../../gateway/hub.js';
import { ObjectCache } from '../../gateway/objectcache.js';
import { DecisionCache } from '../../gateway/decisions.js';
import { AuthenticationCache } from '../../gateway/authncache.js';
import { createApp } from '../../gateway/app.js';
import { createHttpsServer } from '../../gateway/server.js';
import { ensureInitialNamespaces } from '../../gateway/namespaces.js';
import { ensureClusterInfo } from '../../gateway/clusterinfo.js';
import { ServiceAllocator } from '../../gateway/serviceallocator.js';
import { CustomKinds } from '../../gateway/customkinds.js';
import { storedServiceResolver } from '../../gateway/serviceresolver.js';
import { logStrayErrors } from '../../gateway/stray.js';
import { ensureSystemPriorityClasses } from '../../internal/admission/plugins/priority-classes.js';

const flags = parseArgsOrExit('gateway', gatewayFlags);
await initTracing('gateway');
// The Protobuf tables compile on first use; do it now rather than in a request.
messageNameFor('v1', 'Namespace');

const features = (() => {
  try {
    return parseFeatureGates(flags.string('feature-gates'));
  } catch (err) {
    console.error(`gateway: --feature-gates: ${(err as Error).message}`);
    process.exit(2);
  }
})();
for (const limit of ['max-requests-inflight', 'max-mutating-requests-inflight']) {
  if (flags.int(limit) < 0) {
    console.error(`gateway: --${limit} can not be negative value`);
    process.exit(2);
  }
}
const dataDir = flags.string('data-dir');
const pki = await ensurePki(dataDir);
const registry = (() => {
  try {
    return builtinRegistry({ runtimeConfig: flags.string('runtime-config'), features });
  } catch (err) {
    console.error(`gateway: --runtime-config: ${(err as Error).message}`);
    process.exit(2);
  }
})();
const backends = new Backends({
  storage: flags.string('storage-address'), authn: flags.string('authn-address'),
  authz: flags.string('authz-address'), admission: flags.string('admission-address'),
});
const nc = await connect({ servers: flags.list('nats-url'), name: `svc-gateway-${process.pid}`, maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: true });
const hub = new WatchHub(nc, backends.storage);
await hub.start();
backends.revisions = hub;
backends.cache = new ObjectCache(backends.storage, hub);
const customKinds = new CustomKinds(backends.storage, registry, hub, storedServiceResolver(backends.storage));
void customKinds.start();
backends.decisions = new DecisionCache(nc);
await backends.decisions.start();
backends.authentications = new AuthenticationCache(nc);
await backends.authentications.start();

let bootstrapped = false;
let priorityClassesBootstrapped = false;
let rbacReconciled = false;
/** The authorization service reconciles the default RBAC policy at its start; ready once it says so. */
async function rbacBootstrapped(): Promise<void> {
  rbacReconciled ||= (await backends.policyStatus()).bootstrapped;
  if (!rbacReconciled) throw new Error('default RBAC policy not reconciled yet');
}
let shuttingDown = false;
const allocator = new ServiceAllocator(backends.storage, registry);
const app = createApp({
  registry, backends, hub, allocators: new Map([[registry.lookup('', 'v1', 'services')!, allocator]]),
  watch: { minRequestTimeoutSeconds: flags.int('min-request-timeout') },
  startupChecks: [
    { name: 'poststarthook/bootstrap-controller', run: () => { if (!bootstrapped) throw new Error('initial namespaces not created yet'); } },
    { name: 'poststarthook/rbac/bootstrap-roles', run: rbacBootstrapped },
    {
      name: 'poststarthook/scheduling/bootstrap-system-priority-classes',
      run: () => { if (!priorityClassesBootstrapped) throw new Error('system priority classes not created yet'); },
    },
    customKinds.check,
  ],
  isShuttingDown: () => shuttingDown,
  features,
  livezGracePeriodMs: flags.duration('livez-grace-period'),
  inflight: { readOnly: flags.int('max-requests-inflight'), mutating: flags.int('max-mutating-requests-inflight') },
  requestTimeoutMs: flags.duration('request-timeout'),
  upstreamGroupNames: flags.bool('serve-upstream-group-names'),
}, () => `${flags.string('bind-address')}:${port}`);

const server = createHttpsServer(app, {
  cert: readFileSync(flags.string('tls-cert-file') || pki.servingCert),
  key: readFileSync(flags.string('tls-private-key-file') || pki.servingKey),
  ca: [pki.caCert, flags.string('client-ca-file'), flags.string('requestheader-client-ca-file')].filter(Boolean).map((f) => readFileSync(f)),
}, { requestTimeoutMs: flags.duration('request-timeout') });
await new Promise<void>((resolve) => server.listen(flags.int('secure-port'), flags.string('bind-address'), resolve));
const address = server.address();
const port = typeof address === 'object' && address ? address.port : flags.int('secure-port');
const kubeconfig = await writeAdminKubeconfig(dataDir, `https://127.0.0.1:${port}`, pki);
console.log(`gateway serving on https://${flags.string('bind-address')}:${port} (kubeconfig ${kubeconfig})`);
// From here on a stray error is one request's, not a failed start: it is logged and the gateway serves on.
logStrayErrors('gateway');

/** The address clients reach the API at: the bound one, or the loopback address when bound to every address. */
const apiAddress = (bound: string): string => (bound === '0.0.0.0' || bound === '::' || bound === '' ? '127.0.0.1' : bound);

/** Creates the initial namespaces, the API's service and cluster-info once storage answers, then starts the loops that keep them. */
async function bootstrap(): Promise<void> {
  for (;;) {
    try {
      await ensureInitialNamespaces(backends.storage, registry);
      await allocator.ensureDefaults(apiAddress(flags.string('bind-address')), port);
      await ensureClusterInfo(backends.storage, `https://${apiAddress(flags.string('bind-address'))}:${port}`, readFileSync(pki.caCert));
      await ensureSystemPriorityClasses(backends.storage);
      priorityClassesBootstrapped = true;
      break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  bootstrapped = true;
  await allocator.start(hub);
}
void bootstrap();

/** Graceful stop: /readyz fails first, requests keep being served for the delay, then watches end and the server closes. */
async function shutdown(): Promise<void> {
  if (shuttingDown) return;
  shuttingDown = true;
  await new Promise((resolve) => setTimeout(resolve, flags.duration('shutdown-delay-duration')));
  customKinds.close();
  hub.close();
  backends.decisions?.close();
  backends.authentications?.close();
  const closed = new Promise((resolve) => server.close(resolve));
  server.closeIdleConnections();
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, IN_FLIGHT_GRACE_MS).unref())]);
  server.closeAllConnections();
  await nc.drain().catch(() => undefined);
  backends.close();
  await shutdownTracing();
  process.exit(0);
}
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
