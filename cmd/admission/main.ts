// The admission service process.
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { admissionFlags } from '../../internal/config/services.js';
import { initTracing } from '../../internal/tracing/index.js';
import { runServer } from '../../internal/rpc/index.js';
import { Registry } from 'prom-client';
import { metricsService } from '../../internal/metrics/index.js';
import { StorageClient } from '../../internal/storage/client.js';
import { authorizerTypes } from '../../internal/authz/index.js';
import { parseFeatureGates } from '../../internal/config/features.js';
import {
  AdmissionChain, AuthzClient, NamespaceCache, admissionService, buildPlugins, impliedPlugins, loadAdmissionConfiguration, type AdmissionPlugin,
} from '../../internal/admission/index.js';

const flags = parseArgsOrExit('admission', admissionFlags);
await initTracing('admission');

const storage = new StorageClient(flags.string('storage-address'));
const registry = new Registry();
const namespaces = new NamespaceCache(storage, { registry }).start();
const authz = new AuthzClient(flags.string('authz-address'));
let plugins: AdmissionPlugin[];
try {
  const disable = flags.list('disable-admission-plugins');
  const implied = impliedPlugins(authorizerTypes(flags)).filter((p) => !disable.includes(p));
  const config = loadAdmissionConfiguration(flags.string('admission-control-config-file'));
  const gates = parseFeatureGates(flags.string('feature-gates'));
  plugins = buildPlugins([...new Set([...flags.list('enable-admission-plugins'), ...implied])], disable, {
    store: storage, namespaces, pluginConfig: (name) => config.pluginConfig(name), storage, metrics: registry, authorize: authz.authorize, gates,
    tolerationSeconds: { notReady: flags.int('default-not-ready-toleration-seconds'), unreachable: flags.int('default-unreachable-toleration-seconds') },
  });
} catch (err) {
  process.stderr.write(`admission: ${(err as Error).message}\n`);
  process.exit(1);
}

await runServer('admission', flags.string('listen'), [admissionService(new AdmissionChain(plugins, registry)), metricsService(registry)], {
  afterStop: () => { plugins.forEach((p) => p.stop?.()); namespaces.stop(); authz.close(); storage.close(); },
});
