// The controller-manager: namespace deletion, garbage collection, ClusterRole
// aggregation, resource quota usage, CustomResourceDefinitions, admission policy
// status and the bootstrap-token controllers, as a client of a gateway's HTTPS
// API. Flags and wiring.
import { readFileSync } from 'node:fs';
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
import { rootCaPublisher, serviceAccountController } from '../../internal/controllers/namespacedefaults.js';
import { ValidatingAdmissionPolicyStatusController } from '../../internal/controllers/vapstatus.js';
import { selectControllers, type CatalogEntry, type Controller } from '../../internal/controllers/selection.js';
import { discovered } from '../../internal/controllers/discovery.js';
import { pkiPaths } from '../../internal/pki/index.js';
import { initTracing, shutdownTracing } from '../../internal/tracing/index.js';

const flags = parseArgsOrExit('controller-manager', controllerManagerFlags);
await initTracing('controller-manager');
const pki = pkiPaths(flags.string('data-dir'));
const server = flags.string('server');
const client = new ApiClient({
  server, ca: readFileSync(pki.caCert), cert: readFileSync(pki.controllerManagerCert), key: readFileSync(pki.controllerManagerKey), userAgent: 'svc-controller-manager',
});
const resources = discovered(client);

const catalog: CatalogEntry[] = [
  { name: 'namespace-controller', alias: 'namespace', create: () => new NamespaceController(client, discovered(client, 0)) },
  { name: 'clusterrole-aggregation-controller', alias: 'clusterrole-aggregation', create: () => new ClusterRoleAggregationController(client) },
  { name: 'crd-controller', alias: 'crd', create: () => new CrdController(client) },
  {
    name: 'garbage-collector-controller', alias: 'garbagecollector',
    create: () => { const gc = new GarbageCollector(client); return { start: async () => gc.start(await resources(), discovered(client, 0)), stop: () => gc.stop() }; },
  },
  { name: 'persistentvolumeclaim-protection-controller', alias: 'pvc-protection', create: () => new PvcProtectionController(client) },
  { name: 'persistentvolume-protection-controller', alias: 'pv-protection', create: () => new PvProtectionController(client) },
  {
    name: 'resourcequota-controller', alias: 'resourcequota', create: () => new ResourceQuotaController(client, resources, {
      resyncMs: flags.duration('resource-quota-sync-period'), workers: flags.int('concurrent-resource-quota-syncs'),
    }),
  },
  { name: 'serviceaccount-controller', alias: 'serviceaccount', create: () => serviceAccountController(client) },
  {
    name: 'root-ca-certificate-publisher-controller', alias: 'root-ca-cert-publisher', disabledByDefault: true,
    create: () => rootCaPublisher(client, readFileSync(pki.caCert, 'utf8')),
  },
  {
    name: 'validatingadmissionpolicy-status-controller', alias: 'validatingadmissionpolicy-status',
    create: () => new ValidatingAdmissionPolicyStatusController(client),
  },
  { name: 'bootstrap-signer-controller', alias: 'bootstrapsigner', disabledByDefault: true, create: () => new BootstrapSigner(client) },
  { name: 'token-cleaner-controller', alias: 'tokencleaner', disabledByDefault: true, create: () => new TokenCleaner(client) },
];

let running: Controller[];
try {
  running = selectControllers(catalog, flags.list('controllers')).map((c) => c.create());
} catch (err) {
  console.error(`controller-manager: --controllers: ${(err as Error).message}`);
  process.exit(2);
}
// Each controller acts once its own informers have listed; they list side by side.
await Promise.all(running.map((controller) => controller.start()));
console.log(`controller-manager running against ${server}`);

async function shutdown(): Promise<void> {
  for (const controller of running) controller.stop();
  client.close();
  await shutdownTracing();
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown()).once('SIGINT', () => void shutdown());
