// The controller-manager: namespace deletion, garbage collection and ClusterRole aggregation, as a client
// of a gateway's HTTPS API. Flags and wiring.
import { readFileSync } from 'node:fs';
import { controllerManagerFlags } from '../../internal/config/services.js';
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { ApiClient } from '../../internal/client/index.js';
import { GarbageCollector } from '../../internal/controllers/gc.js';
import { NamespaceController } from '../../internal/controllers/namespace.js';
import { ClusterRoleAggregationController } from '../../internal/controllers/aggregation.js';
import { discovered } from '../../internal/controllers/discovery.js';
import { pkiPaths } from '../../internal/pki/index.js';
import { initTracing, shutdownTracing } from '../../internal/tracing/index.js';

const flags = parseArgsOrExit('controller-manager', controllerManagerFlags);
initTracing('controller-manager');
const pki = pkiPaths(flags.string('data-dir'));
const server = flags.string('server');
const client = new ApiClient({
  server, ca: readFileSync(pki.caCert), cert: readFileSync(pki.controllerManagerCert), key: readFileSync(pki.controllerManagerKey), userAgent: 'svc-controller-manager',
});
const resources = discovered(client);
const namespaces = new NamespaceController(client, resources);
const collector = new GarbageCollector(client);
const aggregation = new ClusterRoleAggregationController(client);

await namespaces.start();
await aggregation.start();
await collector.start(await resources());
console.log(`controller-manager running against ${server}`);

async function shutdown(): Promise<void> {
  namespaces.stop();
  aggregation.stop();
  collector.stop();
  client.close();
  await shutdownTracing();
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown()).once('SIGINT', () => void shutdown());
