// The storage service: a backend (LevelDB, or etcd) behind gRPC, publishing commits on NATS.
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { storageFlags } from '../../internal/config/services.js';
import { api, runServer } from '../../internal/rpc/index.js';
import { BackendError, openBackend } from '../../internal/storage/open.js';
import { EventPublisher } from '../../internal/storage/publisher.js';
import { storageHandlers } from '../../internal/storage/service.js';
import { initTracing } from '../../internal/tracing/index.js';

const NATS_STARTUP_WAIT_MS = 2000;

const flags = parseArgsOrExit('storage', storageFlags);
await initTracing('storage');
const log = (line: string): void => { process.stderr.write(`${line}\n`); };
const fail = (message: string): never => {
  log(`storage: ${message}`);
  process.exit(2);
};

const { store, start, etcd } = await openBackend(flags, log)
  .catch((err: unknown) => (err instanceof BackendError ? fail(err.message) : Promise.reject(err)));
const publisher = new EventPublisher(flags.string('nats-url'), start, log);
store.onCommit((batch) => publisher.publish(batch));
store.onProgress((revision, gap) => publisher.progress(revision, gap));
// Writes before the first NATS connection would be left out of the chain; give NATS a moment.
if (!(await publisher.connected(NATS_STARTUP_WAIT_MS))) log(`storage: NATS at ${flags.string('nats-url')} not reachable yet; serving anyway`);
// On etcd, any number of storage processes serve; the elected one publishes.
const replica = etcd ? await import('../../internal/storage/etcd/replica.js').then((m) => m.runReplica(etcd, publisher, log)) : undefined;

// Closing the store first ends watch streams at once, so the server can stop; a publishing replica hands over first.
await runServer('storage', flags.string('listen'), [
  { name: 'svc.storage.v1.Storage', definition: api.svc.storage.v1.Storage.service, handlers: storageHandlers(store) },
], { beforeStop: async () => { await replica?.stop(); await store.close(); }, afterStop: () => publisher.close() });
