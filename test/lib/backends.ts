// Both storage backends for unit tests: LevelDB in a temp dir, or etcd (one member per test file, started on
// first use) under a key prefix of its own per store, so every store starts empty.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdStore, type EtcdStoreOptions } from '../../internal/storage/etcd/store.js';
import { Store, type StoreOptions } from '../../internal/storage/store.js';
import { startEtcd, type RunningEtcd } from './etcd.js';

export const BACKENDS = ['leveldb', 'etcd3'] as const;
export type BackendName = typeof BACKENDS[number];
export type TestStore = Store | EtcdStore;

/** Opens stores of one backend for the tests of a `describe` (call in its body); each `open` of a new name is empty. */
export function testBackend(name: BackendName) {
  let etcd: RunningEtcd | undefined;
  let dir = '';
  let stores = 0;
  before(async function () {
    this.timeout(60_000);
    dir = mkdtempSync(join(tmpdir(), 'storage-test-'));
    if (name === 'etcd3') etcd = await startEtcd();
  });
  after(async () => {
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    name,
    /** A new empty store, or (with `reopen`) the one of that id again. */
    async open(options: StoreOptions & Partial<EtcdStoreOptions> = {}, reopen?: string): Promise<TestStore> {
      const id = reopen ?? `s${++stores}`;
      if (name === 'leveldb') return Store.open(join(dir, id), { compactionIntervalMs: 0, ...options });
      return EtcdStore.open({ servers: etcd!.servers, prefix: `/test/${id}`, compactionIntervalMs: 0, ...options });
    },
    /** The id the last store opened under, to reopen it. */
    get lastId(): string {
      return `s${stores}`;
    },
    get etcd(): RunningEtcd | undefined {
      return etcd;
    },
  };
}
