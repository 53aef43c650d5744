// The storage backend the storage process's flags name: LevelDB in the data
// directory, or an etcd cluster (loaded only then: its client parses etcd's API
// at load).
import { join } from 'node:path';
import type { ParsedFlags } from '../config/flags.js';
import type { StorageBackend } from './backend.js';
import type { EtcdStore } from './etcd/store.js';
import { Store } from './store.js';

/** A backend the flags name, the revision its change stream starts after, and the store again when it is etcd. */
export interface OpenedBackend { store: StorageBackend; start: number; etcd?: EtcdStore }

/** A flag combination the storage process cannot start with, or an etcd it cannot reach. */
export class BackendError extends Error {}

export async function openBackend(flags: ParsedFlags, log: (line: string) => void): Promise<OpenedBackend> {
  const backend = flags.string('storage-backend');
  const compactionGiven = flags.given.has('etcd-compaction-interval');
  if (backend === 'leveldb') {
    const historyWindowMs = compactionGiven ? flags.duration('etcd-compaction-interval') : flags.duration('history-window');
    const store = await Store.open(join(flags.string('data-dir'), 'storage'), { historyWindowMs, log });
    return { store, start: store.revision };
  }
  if (backend !== 'etcd3') throw new BackendError(`--storage-backend must be leveldb or etcd3, not "${backend}"`);
  const servers = flags.list('etcd-servers').join(',');
  if (!servers) throw new BackendError('--storage-backend=etcd3 needs --etcd-servers');
  const { EtcdStore } = await import('./etcd/store.js');
  const store = await EtcdStore.open({
    servers, prefix: flags.string('etcd-prefix'), log,
    caFile: flags.string('etcd-cafile') || undefined, certFile: flags.string('etcd-certfile') || undefined, keyFile: flags.string('etcd-keyfile') || undefined,
    // The history window is what an interval of compaction gives on etcd (history lives one to two intervals).
    compactionIntervalMs: compactionGiven ? flags.duration('etcd-compaction-interval')
      : flags.given.has('history-window') ? flags.duration('history-window') : undefined,
  }).catch((err: Error) => { throw new BackendError(`cannot reach etcd at ${servers}: ${err.message}`); });
  return { store, start: (await store.currentRevision()).revision, etcd: store };
}
