import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RpcError, grpc, type RunningServer } from '../../internal/rpc/index.js';
import { SortedRecords } from '../../internal/storage/cache.js';
import { serveStorage } from '../lib/storage.js';
import { StorageClient } from '../../internal/storage/client.js';
import type { KeyValue } from '../../internal/storage/events.js';
import { Store, type StoreOptions } from '../../internal/storage/store.js';

const v = (s: string): Buffer => Buffer.from(s);
const show = (kvs: KeyValue[]): string[] => kvs.map((kv) => `${kv.key}=${kv.value.toString()}@${kv.modRevision}/${kv.createRevision}/${kv.uid}`);

async function rpcError(p: Promise<unknown>, code: grpc.status): Promise<RpcError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err, `expected status ${grpc.status[code]}`).to.be.instanceOf(RpcError);
  expect(grpc.status[(err as RpcError).code]).to.equal(grpc.status[code]);
  return err as RpcError;
}

/** A deterministic pseudo-random sequence, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

describe('sorted records', () => {
  // Keys that sort differently in UTF-16 and in UTF-8: U+E000 before, U+1F600 (a surrogate pair) after in UTF-8.
  const odd = ['a/\ue000', 'a/\u{1f600}', 'a/\uffff', 'a/z', 'a/\u00e9', 'a/\u{10000}x'];
  const utf8Sorted = (keys: string[]): string[] => [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));

  it('keeps keys in UTF-8 byte order through inserts, updates, deletes, splits and merges', () => {
    const next = random(7);
    const index = new SortedRecords();
    const model = new Map<string, Buffer>();
    const prefixes = ['a/', 'a/b/', 'ab/', 'b/', 'b/c/'];
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 600; i++) {
        const key = `${prefixes[Math.floor(next() * prefixes.length)]}${Math.floor(next() * 1500)}`;
        if (next() < (round % 4 === 3 ? 0.9 : 0.35)) {
          index.delete(key);
          model.delete(key);
        } else {
          const record = v(`${round}.${i}`);
          index.set(key, record);
          model.set(key, record);
        }
      }
      for (const key of odd) if (round === 10) { index.set(key, v(key)); model.set(key, v(key)); }
      expect(index.size).to.equal(model.size);
      for (const prefix of ['', ...prefixes]) {
        const want = utf8Sorted([...model.keys()].filter((k) => k.startsWith(prefix)));
        expect(index.page(prefix, Infinity).entries.map(([k]) => k)).to.deep.equal(want);
        const limit = 1 + Math.floor(next() * 40);
        const { entries, remaining } = index.page(prefix, limit);
        expect(entries.map(([k, r]) => [k, r])).to.deep.equal(want.slice(0, limit).map((k) => [k, model.get(k)]));
        expect(remaining).to.equal(Math.max(0, want.length - limit));
      }
    }
    for (const key of [...model.keys()]) index.delete(key);
    expect(index.size).to.equal(0);
    expect(index.page('', Infinity).entries).to.deep.equal([]);
  });
});

describe('storage reads of any state at least as new (allowCached)', () => {
  let dir: string;
  let store: Store;
  const open = async (options: StoreOptions = {}): Promise<Store> =>
    Store.open(join(dir, 'storage'), { compactionIntervalMs: 0, ...options });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'storage-cache-'));
    store = await open();
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The answers to the same list with and without allowCached, which must agree. */
  async function bothLists(prefix: string, limit = 0) {
    const cached = await store.list(prefix, { allowCached: true, limit });
    const stored = await store.list(prefix, { limit });
    expect(show(cached.items)).to.deep.equal(show(stored.items));
    expect({ ...cached, items: undefined }).to.deep.equal({ ...stored, items: undefined });
    return cached;
  }

  it('reads the newest state, across a restart and after every commit', async () => {
    await store.create('core/pods/ns/a', v('a1'), 'ua');
    await store.create('core/pods/ns/b', v('b1'), 'ub');
    await store.create('core/pods/ns2/c', v('c1'), 'uc');
    await store.create('w/x/\u{1f600}/1', v('wide'), 'uw');
    await store.create('w/x/\ue000/1', v('private'), 'up');
    await store.create('w/x/z/1', v('ascii'), 'uz');
    await store.close();
    store = await open();
    expect(show((await bothLists('core/pods/')).items)).to.deep.equal([
      'core/pods/ns/a=a1@1/1/ua', 'core/pods/ns/b=b1@2/2/ub', 'core/pods/ns2/c=c1@3/3/uc']);
    expect((await bothLists('w/')).items.map((kv) => kv.key)).to.deep.equal(['w/x/z/1', 'w/x/\ue000/1', 'w/x/\u{1f600}/1']);

    await store.update('core/pods/ns/a', v('a2'));
    await store.delete('core/pods/ns/b');
    await Promise.all([store.create('core/pods/ns/d', v('d1'), 'ud'), store.update('core/pods/ns2/c', v('c2'))]);
    const cached = await bothLists('core/pods/ns/');
    expect(cached.revision).to.equal(10);
    expect(show(cached.items)).to.deep.equal(['core/pods/ns/a=a2@7/1/ua', 'core/pods/ns/d=d1@9/9/ud']);
    const got = await store.get('core/pods/ns2/c', 0, { allowCached: true });
    expect(show([got.kv])).to.deep.equal(['core/pods/ns2/c=c2@10/3/uc']);
    expect(got.revision).to.equal(10);
    await rpcError(store.get('core/pods/ns/b', 0, { allowCached: true }), grpc.status.NOT_FOUND);
  });

  it('does not show a refused write', async () => {
    await store.create('core/pods/ns/a', v('a1'), 'ua');
    await rpcError(store.update('core/pods/ns/a', v('a2'), { modRevision: 9 }), grpc.status.FAILED_PRECONDITION);
    await rpcError(store.create('core/pods/ns/a', v('again'), 'ux'), grpc.status.ALREADY_EXISTS);
    const got = await store.get('core/pods/ns/a', 0, { allowCached: true });
    expect(show([got.kv])).to.deep.equal(['core/pods/ns/a=a1@1/1/ua']);
    expect(store.revision).to.equal(1);
  });

  it('serves any state at least as new as the revision asked for', async () => {
    for (let i = 1; i <= 4; i++) await store.create(`core/nodes//n${i}`, v(`${i}`), `u${i}`);
    await store.compact(3);
    await rpcError(store.get('core/nodes//n1', 2), grpc.status.OUT_OF_RANGE);
    const got = await store.get('core/nodes//n1', 2, { allowCached: true });
    expect(got.revision).to.equal(4);
    const list = await store.list('core/nodes/', { revision: 3, allowCached: true });
    expect(list.revision).to.equal(4);
    expect(list.items).to.have.length(4);
    for (const read of [store.get('core/nodes//n1', 5, { allowCached: true }), store.list('core/nodes/', { revision: 5, allowCached: true })]) {
      expect((await rpcError(read, grpc.status.OUT_OF_RANGE)).trailers['storage-error']).to.equal('future');
    }
    await rpcError(store.get('core/nodes//n1', -1, { allowCached: true }), grpc.status.INVALID_ARGUMENT);
    await rpcError(store.list('core/nodes', { allowCached: true }), grpc.status.INVALID_ARGUMENT);
  });

  it('pages a list of the newest state as one snapshot: later pages at its revision', async () => {
    for (let i = 0; i < 7; i++) await store.create(`core/pods/ns/p${i}`, v(`${i}`), `u${i}`);
    const first = await store.list('core/pods/', { allowCached: true, limit: 3 });
    expect(first).to.include({ revision: 7, more: true, remaining: 4 });
    await store.delete('core/pods/ns/p4');
    await store.update('core/pods/ns/p5', v('changed'));
    await store.create('core/pods/ns/p9', v('new'), 'u9');
    const items = [...first.items];
    let after = items[items.length - 1].key;
    for (const want of [{ more: true, remaining: 1 }, { more: false, remaining: 0 }]) {
      // allowCached is ignored with continueAfter: the page is read at exactly the first page's revision.
      const page = await store.list('core/pods/', { revision: first.revision, limit: 3, continueAfter: after, allowCached: true });
      expect(page).to.include({ revision: 7, ...want });
      items.push(...page.items);
      after = page.items[page.items.length - 1].key;
    }
    expect(items.map((kv) => `${kv.key.slice(-2)}=${kv.value.toString()}`)).to.deep.equal(
      ['p0=0', 'p1=1', 'p2=2', 'p3=3', 'p4=4', 'p5=5', 'p6=6']);
  });

  it('carries allow_cached through the gRPC service', async () => {
    const server: RunningServer = await serveStorage(store);
    const client = new StorageClient(`127.0.0.1:${server.port}`);
    try {
      for (let i = 1; i <= 3; i++) await client.create(`core/pods/ns/p${i}`, v(`${i}`), `u${i}`);
      await client.compact(2);
      const compacted = await client.get('core/pods/ns/p1', 1).then(() => undefined, (e: grpc.ServiceError) => e);
      expect(compacted?.code).to.equal(grpc.status.OUT_OF_RANGE);
      const got = await client.get('core/pods/ns/p1', 1, { allowCached: true });
      expect(got.revision).to.equal(3);
      const page = await client.list('core/pods/', { revision: 1, limit: 2, allowCached: true });
      expect(page).to.include({ revision: 3, more: true, remaining: 1 });
      expect(page.items.map((kv) => kv.key)).to.deep.equal(['core/pods/ns/p1', 'core/pods/ns/p2']);
    } finally {
      client.close();
      await server.stop();
    }
  });
});
