// The admission service process.
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { admissionFlags } from '../../internal/config/services.js';
import { initTracing } from '../../internal/tracing/index.js';
import { runServer } from '../../internal/rpc/index.js';
import { Registry } from 'prom-client';
import { metricsService } from '../../internal/metrics/index.js';
import { StorageClient } from '../../internal/storage/client.js';
import { authorizerTypes } from '../../internal/authz/index.js';
import {
  AdmissionChain, NamespaceCache, admissionService, buildPlugins, impliedPlugins, type AdmissionPlugin,
} from '../../internal/admission/index.js';

const flags = parseArgsOrExit('admission', admissionFlags);
await initTracing('admission');

const storage = new StorageClient(flags.string('storage-address'));
const registry = new Registry();
const namespaces = new NamespaceCache(storage, { registry }).start();
let plugins: AdmissionPlugin[];
try {
  const disable = flags.list('disable-admission-plugins');
  const implied = impliedPlugins(authorizerTypes(flags)).filter((p) => !disable.includes(p));
  plugins = buildPlugins([...new Set([...flags.list('enable-admission-plugins'), ...implied])], disable, {
    store: storage, namespaces, storage,
    tolerationSeconds: { notReady: flags.int('default-not-ready-toleration-seconds'), unreachable: flags.int('default-unreachable-toleration-seconds') },
  });
} catch (err) {
  process.stderr.write(`admission: ${(err as Error).message}\n`);
  process.exit(1);
}

await runServer('admission', flags.string('listen'), [admissionService(new AdmissionChain(plugins)), metricsService(registry)], {
  afterStop: () => { namespaces.stop(); storage.close(); },
});
