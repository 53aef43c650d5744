// The storage service: a backend (LevelDB, or etcd) behind gRPC, publishing commits on NATS.
import { join } from 'node:path';
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { storageFlags } from '../../internal/config/services.js';
import { api, runServer } from '../../internal/rpc/index.js';
import type { StorageBackend } from '../../internal/storage/backend.js';
import type { EtcdStore } from '../../internal/storage/etcd/store.js';
import { EventPublisher } from '../../internal/storage/publisher.js';
import { storageHandlers } from '../../internal/storage/service.js';
import { Store } from '../../internal/storage/store.js';
import { initTracing } from '../../internal/tracing/index.js';

const NATS_STARTUP_WAIT_MS = 2000;

const flags = parseArgsOrExit('storage', storageFlags);
await initTracing('storage');
const log = (line: string): void => { process.stderr.write(`${line}\n`); };
const fail = (message: string): never => {
  log(`storage: ${message}`);
  process.exit(2);
};

/** The backend the flags name, the revision its change stream starts after, and the store again when it is etcd. */
async function openBackend(): Promise<{ store: StorageBackend; start: number; etcd?: EtcdStore }> {
  const backend = flags.string('storage-backend');
  const compactionGiven = flags.given.has('etcd-compaction-interval');
  if (backend === 'leveldb') {
    const historyWindowMs = compactionGiven ? flags.duration('etcd-compaction-interval') : flags.duration('history-window');
    const store = await Store.open(join(flags.string('data-dir'), 'storage'), { historyWindowMs, log });
    return { store, start: store.revision };
  }
  if (backend !== 'etcd3') return fail(`--storage-backend must be leveldb or etcd3, not "${backend}"`);
  const servers = flags.list('etcd-servers').join(',');
  if (!servers) return fail('--storage-backend=etcd3 needs --etcd-servers');
  // Loaded only for this backend: its client parses etcd's API at load.
  const { EtcdStore } = await import('../../internal/storage/etcd/store.js');
  const store = await EtcdStore.open({
    servers, prefix: flags.string('etcd-prefix'), log,
    caFile: flags.string('etcd-cafile') || undefined, certFile: flags.string('etcd-certfile') || undefined, keyFile: flags.string('etcd-keyfile') || undefined,
    // The history window is what an interval of compaction gives on etcd (history lives one to two intervals).
    compactionIntervalMs: compactionGiven ? flags.duration('etcd-compaction-interval')
      : flags.given.has('history-window') ? flags.duration('history-window') : undefined,
  }).catch((err: Error) => fail(`cannot reach etcd at ${servers}: ${err.message}`));
  return { store, start: (await store.currentRevision()).revision, etcd: store };
}

const { store, start, etcd } = await openBackend();
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
