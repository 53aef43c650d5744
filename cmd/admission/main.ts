// The admission service process.
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { admissionFlags } from '../../internal/config/services.js';
import { initTracing, shutdownTracing } from '../../internal/tracing/index.js';
import { serve } from '../../internal/rpc/index.js';
import { StorageClient } from '../../internal/storage/client.js';
import { AdmissionChain, admissionService, buildPlugins, type AdmissionPlugin } from '../../internal/admission/index.js';

const flags = parseArgsOrExit('admission', admissionFlags);
initTracing('admission');

const storage = new StorageClient(flags.string('storage-address'));
let plugins: AdmissionPlugin[];
try {
  plugins = buildPlugins(flags.list('enable-admission-plugins'), flags.list('disable-admission-plugins'), { store: storage });
} catch (err) {
  process.stderr.write(`admission: ${(err as Error).message}\n`);
  process.exit(1);
}

const listen = flags.string('listen');
const server = await serve(listen, [admissionService(new AdmissionChain(plugins))]).catch((err: Error) => {
  process.stderr.write(`admission: cannot listen on ${listen}: ${err.message}\n`);
  process.exit(1);
});
process.stdout.write(`admission listening on ${listen.replace(/:\d+$/, `:${server.port}`)}\n`);

const stop = async () => {
  await server.stop();
  storage.close();
  await shutdownTracing();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
