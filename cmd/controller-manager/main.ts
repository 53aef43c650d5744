// The controller-manager: namespace deletion, garbage collection, ClusterRole
// aggregation, resource quota usage, CustomResourceDefinitions, storage protection,
// admission policy status, Jobs, TTL after finished, service accounts and their tokens,
// the root-CA ConfigMap and the bootstrap-token controllers, as a client of a gateway's HTTPS API, while it holds the leader Lease.
// Flags and wiring.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { controllerManagerFlags } from '../../internal/config/services.js';
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { ApiClient } from '../../internal/client/index.js';
import { GarbageCollector } from '../../internal/controllers/gc.js';
import { NamespaceController } from '../../internal/controllers/namespace.js';
import { ClusterRoleAggregationController } from '../../internal/controllers/aggregation.js';
import { CrdController } from '../../internal/controllers/crd.js';
import { BootstrapSigner } from '../../internal/controllers/bootstrapsigner.js';
import { TokenCleaner } from '../../internal/controllers/tokencleaner.js';
import { PvProtectionController, PvcProtectionController } from '../../internal/controllers/storageprotection.js';
import { ResourceQuotaController } from '../../internal/controllers/resourcequota.js';
import { ValidatingAdmissionPolicyStatusController } from '../../internal/controllers/vapstatus.js';
import { JobController } from '../../internal/controllers/job/controller.js';
import { TtlAfterFinishedController } from '../../internal/controllers/ttlafterfinished.js';
import { ServiceAccountsController } from '../../internal/controllers/serviceaccounts.js';
import { RootCaCertPublisher } from '../../internal/controllers/rootcacertpublisher.js';
import { TokensController } from '../../internal/controllers/tokens.js';
import { LeaderElector } from '../../internal/controllers/leaderelection.js';
import { ServiceAccountToken } from '../../internal/controllers/credentials.js';
import { recorderFor, referenceTo } from '../../internal/controllers/events.js';
import { selectControllers, type CatalogEntry, type Controller } from '../../internal/controllers/selection.js';
import { discovered } from '../../internal/controllers/discovery.js';
import { loadSigningKey } from '../../internal/serviceaccount/keys.js';
import { CONTROLLER_MANAGER_NAME, NAMESPACE_SYSTEM, group } from '../../internal/names/index.js';
import { pkiPaths } from '../../internal/pki/index.js';
import { initTracing, shutdownTracing } from '../../internal/tracing/index.js';

const flags = parseArgsOrExit('controller-manager', controllerManagerFlags);
await initTracing('controller-manager');
const pki = pkiPaths(flags.string('data-dir'));
const server = flags.string('server');
const credentials = { server, ca: readFileSync(pki.caCert), cert: readFileSync(pki.controllerManagerCert), key: readFileSync(pki.controllerManagerKey) };
const client = new ApiClient({ ...credentials, userAgent: CONTROLLER_MANAGER_NAME });
/** A client with the controller-manager's own identity; its requests say which controller sent them (`svc-controller-manager/<controller>`). */
const ownClientFor = (name: string) => new ApiClient({ ...credentials, userAgent: `${CONTROLLER_MANAGER_NAME}/${name}` });
/** A controller's client: it writes as the ServiceAccount `<name>` in svc-system with --use-service-account-credentials
 * (its informers still read as the controller-manager), else as the controller-manager. */
const clientFor = (name: string) => {
  const own = ownClientFor(name);
  if (!flags.bool('use-service-account-credentials')) return own;
  const token = new ServiceAccountToken(client, NAMESPACE_SYSTEM, name);
  // Asked for while the controller's informers list, so its first write does not wait for it (a failure is asked again then).
  token.token().catch(() => undefined);
  return new ApiClient({ server, ca: credentials.ca, token, informers: own, userAgent: `${CONTROLLER_MANAGER_NAME}/${name}` });
};
const resources = discovered(client);
const rootCa = () => readFileSync(flags.string('root-ca-file') || pki.caCert, 'utf8');

/** The token controller signs with the key the authn service verifies; without a readable key it stays off, as upstream's.
 * It acts as the controller-manager itself, as upstream's: the accounts' tokens must not depend on it. */
function tokensController(name: string): Controller {
  try {
    return new TokensController(ownClientFor(name), loadSigningKey(flags.string('service-account-private-key-file') || pki.servingKey), rootCa());
  } catch (err) {
    console.error(`controller-manager: ${name} is disabled: ${(err as Error).message}`);
    return { start: async () => undefined, stop: () => undefined };
  }
}

const catalog: CatalogEntry[] = [
  { name: 'namespace-controller', alias: 'namespace', create: () => new NamespaceController(clientFor('namespace-controller'), discovered(client, 0)) },
  { name: 'clusterrole-aggregation-controller', alias: 'clusterrole-aggregation', create: () => new ClusterRoleAggregationController(clientFor('clusterrole-aggregation-controller')) },
  { name: 'crd-controller', alias: 'crd', create: () => new CrdController(clientFor('crd-controller')) },
  {
    name: 'garbage-collector-controller', alias: 'garbagecollector',
    create: () => { const gc = new GarbageCollector(clientFor('generic-garbage-collector')); return { start: async () => gc.start(await resources(), discovered(client, 0)), stop: () => gc.stop() }; },
  },
  { name: 'persistentvolumeclaim-protection-controller', alias: 'pvc-protection', create: () => new PvcProtectionController(clientFor('pvc-protection-controller')) },
  { name: 'persistentvolume-protection-controller', alias: 'pv-protection', create: () => new PvProtectionController(clientFor('pv-protection-controller')) },
  {
    name: 'resourcequota-controller', alias: 'resourcequota', create: () => new ResourceQuotaController(clientFor('resourcequota-controller'), resources, {
      resyncMs: flags.duration('resource-quota-sync-period'), workers: flags.int('concurrent-resource-quota-syncs'),
    }),
  },
  {
    name: 'ttl-after-finished-controller', alias: 'ttl-after-finished',
    create: () => new TtlAfterFinishedController(clientFor('ttl-after-finished-controller'), Date.now, flags.int('concurrent-ttl-after-finished-syncs')),
  },
  {
    name: 'job-controller', alias: 'job',
    create: () => {
      const jobs = clientFor('job-controller');
      return new JobController(jobs, { workers: flags.int('concurrent-job-syncs'), recorder: recorderFor(jobs, 'job-controller') });
    },
  },
  { name: 'serviceaccount-controller', alias: 'serviceaccount', create: () => new ServiceAccountsController(clientFor('service-account-controller')) },
  { name: 'serviceaccount-token-controller', alias: 'serviceaccount-token', create: () => tokensController('tokens-controller') },
  // Off by default here (upstream runs it): a ConfigMap in every namespace would change what existing clients list and count.
  {
    name: 'root-ca-certificate-publisher-controller', alias: 'root-ca-cert-publisher',
    create: () => new RootCaCertPublisher(clientFor('root-ca-cert-publisher'), rootCa()),
  },
  {
    name: 'validatingadmissionpolicy-status-controller', alias: 'validatingadmissionpolicy-status',
    create: () => new ValidatingAdmissionPolicyStatusController(clientFor('validatingadmissionpolicy-status-controller')),
  },
  { name: 'bootstrap-signer-controller', alias: 'bootstrapsigner', disabledByDefault: true, create: () => new BootstrapSigner(clientFor('bootstrap-signer')) },
  { name: 'token-cleaner-controller', alias: 'tokencleaner', disabledByDefault: true, create: () => new TokenCleaner(clientFor('token-cleaner')) },
];

let selected: CatalogEntry[];
try {
  selected = selectControllers(catalog, flags.list('controllers'));
} catch (err) {
  console.error(`controller-manager: --controllers: ${(err as Error).message}`);
  process.exit(2);
}

const timing = { lease: flags.duration('leader-elect-lease-duration'), renew: flags.duration('leader-elect-renew-deadline'), retry: flags.duration('leader-elect-retry-period') };
if (flags.bool('leader-elect') && !(timing.lease > timing.renew && timing.renew > timing.retry * 1.2 && timing.retry > 0)) {
  console.error('controller-manager: --leader-elect-lease-duration must exceed --leader-elect-renew-deadline, which must exceed 1.2 times --leader-elect-retry-period');
  process.exit(2);
}
const identity = `${hostname()}_${randomUUID()}`;
const lease = { namespace: flags.string('leader-elect-resource-namespace'), name: flags.string('leader-elect-resource-name') };
const events = recorderFor(ownClientFor('leader-election'), CONTROLLER_MANAGER_NAME);
const elector = flags.bool('leader-elect') ? new LeaderElector(ownClientFor('leader-election'), {
  ...lease, identity,
  leaseDurationMs: timing.lease, renewDeadlineMs: timing.renew, retryPeriodMs: timing.retry,
  onHeldBy: (holder) => console.log(`controller-manager standing by: the lease ${lease.namespace}/${lease.name} is held by ${holder}`),
}) : undefined;
const leaseRef = () => referenceTo(elector?.lease ?? { metadata: lease }, { apiVersion: `${group('coordination')}/v1`, kind: 'Lease' });

let running: Controller[] = [];
let stopping = false;

async function shutdown(code: number): Promise<never> {
  stopping = true;
  for (const controller of running) controller.stop();
  if (await elector?.release()) {
    events.event(leaseRef(), 'Normal', 'LeaderElection', 'Release', `${identity} stopped leading`);
    await Promise.race([events.flushed(), sleep(1000)]);
  }
  client.close();
  await shutdownTracing();
  process.exit(code);
}
process.once('SIGTERM', () => void shutdown(0)).once('SIGINT', () => void shutdown(0));

if (elector) {
  console.log(`controller-manager: attempting to acquire leader lease ${lease.namespace}/${lease.name} as ${identity}`);
  if (!(await elector.acquire())) await new Promise(() => undefined); // stopped by a signal: shutdown exits
  console.log(`controller-manager: acquired leader lease ${lease.namespace}/${lease.name}`);
  events.event(leaseRef(), 'Normal', 'LeaderElection', 'Acquire', `${identity} became leader`);
  // As upstream: a leader that could not renew stops acting at once, by exiting; whoever runs it starts it again.
  elector.keep(() => { console.error('controller-manager: leader election lost'); process.exit(1); });
}
if (!stopping) {
  running = selected.map((c) => c.create());
  // Each controller acts once its own informers have listed; they list side by side.
  await Promise.all(running.map((controller) => controller.start()));
  console.log(`controller-manager running against ${server}`);
}
