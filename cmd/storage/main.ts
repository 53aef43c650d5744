// The storage service: the LevelDB store behind gRPC, publishing commits on NATS.
import { join } from 'node:path';
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { storageFlags } from '../../internal/config/services.js';
import { api, runServer } from '../../internal/rpc/index.js';
import { EventPublisher } from '../../internal/storage/publisher.js';
import { storageHandlers } from '../../internal/storage/service.js';
import { Store } from '../../internal/storage/store.js';
import { initTracing } from '../../internal/tracing/index.js';

const NATS_STARTUP_WAIT_MS = 2000;

const flags = parseArgsOrExit('storage', storageFlags);
await initTracing('storage');
const log = (line: string): void => { process.stderr.write(`${line}\n`); };

const historyWindowMs = flags.given.has('etcd-compaction-interval')
  ? flags.duration('etcd-compaction-interval') : flags.duration('history-window');
const store = await Store.open(join(flags.string('data-dir'), 'storage'), { historyWindowMs, log });
const publisher = new EventPublisher(flags.string('nats-url'), store.revision, log);
store.onCommit((batch) => publisher.publish(batch));
// Writes before the first NATS connection would be left out of the chain; give NATS a moment.
if (!(await publisher.connected(NATS_STARTUP_WAIT_MS))) log(`storage: NATS at ${flags.string('nats-url')} not reachable yet; serving anyway`);

// Closing the store first ends watch streams at once, so the server can stop.
await runServer('storage', flags.string('listen'), [
  { name: 'svc.storage.v1.Storage', definition: api.svc.storage.v1.Storage.service, handlers: storageHandlers(store) },
], { beforeStop: () => store.close(), afterStop: () => publisher.close() });
