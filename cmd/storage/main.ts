// The storage service: a backend (LevelDB, or etcd) behind gRPC, publishing commits on NATS.
import { join } from 'node:path';
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { storageFlags } from '../../internal/config/services.js';
import { api, runServer } from '../../internal/rpc/index.js';
import type { StorageBackend } from '../../internal/storage/backend.js';
import { EtcdStore } from '../../internal/storage/etcd/store.js';
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

/** The backend the flags name, and the revision its change stream starts after. */
async function openBackend(): Promise<{ store: StorageBackend; start: number }> {
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
  const store = await EtcdStore.open({
    servers, prefix: flags.string('etcd-prefix'), log,
    caFile: flags.string('etcd-cafile') || undefined, certFile: flags.string('etcd-certfile') || undefined, keyFile: flags.string('etcd-keyfile') || undefined,
    // The history window is what an interval of compaction gives on etcd (history lives one to two intervals).
    compactionIntervalMs: compactionGiven ? flags.duration('etcd-compaction-interval')
      : flags.given.has('history-window') ? flags.duration('history-window') : undefined,
  }).catch((err: Error) => fail(`cannot reach etcd at ${servers}: ${err.message}`));
  return { store, start: (await store.currentRevision()).revision };
}

const { store, start } = await openBackend();
const publisher = new EventPublisher(flags.string('nats-url'), start, log);
store.onCommit((batch) => publisher.publish(batch));
store.onProgress((revision, gap) => publisher.progress(revision, gap));
// Writes before the first NATS connection would be left out of the chain; give NATS a moment.
if (!(await publisher.connected(NATS_STARTUP_WAIT_MS))) log(`storage: NATS at ${flags.string('nats-url')} not reachable yet; serving anyway`);
if (store instanceof EtcdStore) store.startPublishing(start);

// Closing the store first ends watch streams at once, so the server can stop.
await runServer('storage', flags.string('listen'), [
  { name: 'svc.storage.v1.Storage', definition: api.svc.storage.v1.Storage.service, handlers: storageHandlers(store) },
], { beforeStop: () => store.close(), afterStop: () => publisher.close() });
