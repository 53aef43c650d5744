import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RpcError, grpc } from '../../internal/rpc/index.js';
import { Store, type StoreOptions } from '../../internal/storage/store.js';
import type { StorageEvent } from '../../internal/storage/events.js';
import { EtcdStore } from '../../internal/storage/etcd/store.js';
import { startEtcd, type RunningEtcd } from '../lib/etcd.js';
import { BACKENDS, testBackend, type TestStore } from '../lib/backends.js';

const v = (s: string): Buffer => Buffer.from(s);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function rpcError(p: Promise<unknown>, code: grpc.status): Promise<RpcError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err, `expected status ${grpc.status[code]}`).to.be.instanceOf(RpcError);
  expect(grpc.status[(err as RpcError).code]).to.equal(grpc.status[code]);
  return err as RpcError;
}

/** Consumes a watch until an event at or past `revision` arrives, or fails after timeoutMs. */
async function collect(events: AsyncGenerator<StorageEvent>, revision: number, timeoutMs = 10_000): Promise<StorageEvent[]> {
  const out: StorageEvent[] = [];
  const deadline = setTimeout(() => void events.return(undefined), timeoutMs);
  try {
    for await (const e of events) {
      out.push(e);
      if (e.revision >= revision && e.type !== 'PROGRESS') break;
    }
  } finally {
    clearTimeout(deadline);
  }
  return out;
}

// Every backend gives the same answers. Revisions are counted from the store's first (etcd's are global to the
// etcd cluster: a store under a new prefix starts where etcd is), so r(n) is the revision of the n-th write.
for (const backendName of BACKENDS) {
  describe(`storage store (${backendName})`, function () {
    this.timeout(20_000);
    const backend = testBackend(backendName);
    let store: TestStore;
    let base = 0;
    const r = (n: number): number => base + n;
    const revision = async (): Promise<number> => (await store.currentRevision()).revision - base;
    const compacted = async (): Promise<number> => (await store.currentRevision()).compactedRevision;

    beforeEach(async () => {
      store = await backend.open();
      base = (await store.currentRevision()).revision;
    });
    afterEach(async () => {
      await store.close();
    });

    it('creates, gets, updates and deletes with increasing revisions', async () => {
      const created = await store.create('core/configmaps/ns/a', v('one'), 'uid-a');
      expect(created.revision).to.equal(r(1));
      expect(created.kv).to.include({ key: 'core/configmaps/ns/a', modRevision: r(1), createRevision: r(1), uid: 'uid-a' });
      const got = await store.get('core/configmaps/ns/a');
      expect(got.revision).to.equal(r(1));
      expect(got.kv.value.toString()).to.equal('one');

      const updated = await store.update('core/configmaps/ns/a', v('two'));
      expect(updated.kv).to.include({ modRevision: r(2), createRevision: r(1), uid: 'uid-a' });
      expect((await store.get('core/configmaps/ns/a')).kv.value.toString()).to.equal('two');

      const deleted = await store.delete('core/configmaps/ns/a');
      expect(deleted.revision).to.equal(r(3));
      expect(deleted.kv).to.include({ modRevision: r(3), createRevision: r(1), uid: 'uid-a' });
      expect(deleted.kv.value.toString()).to.equal('two');
      await rpcError(store.get('core/configmaps/ns/a'), grpc.status.NOT_FOUND);
      expect(await revision()).to.equal(3);
    });

    it('answers malformed and impossible requests with the documented codes', async () => {
      await store.create('core/pods/ns/p', v('x'), 'u');
      await rpcError(store.create('core/pods/ns/p', v('y'), 'u'), grpc.status.ALREADY_EXISTS);
      await rpcError(store.update('core/pods/ns/missing', v('y')), grpc.status.NOT_FOUND);
      await rpcError(store.delete('core/pods/ns/missing'), grpc.status.NOT_FOUND);
      await rpcError(store.get(''), grpc.status.INVALID_ARGUMENT);
      await rpcError(store.create('', v('y')), grpc.status.INVALID_ARGUMENT);
      await rpcError(store.list('core/pods'), grpc.status.INVALID_ARGUMENT);
      await rpcError(store.list(''), grpc.status.INVALID_ARGUMENT);
      await rpcError(store.watch('core/pods', 0).next(), grpc.status.INVALID_ARGUMENT);
      const future = await rpcError(store.get('core/pods/ns/p', r(99)), grpc.status.OUT_OF_RANGE);
      expect(future.trailers['storage-error']).to.equal('future');
      const futureList = await rpcError(store.list('core/pods/', { revision: r(99) }), grpc.status.OUT_OF_RANGE);
      expect(futureList.trailers['storage-error']).to.equal('future');
      await rpcError(store.watch('core/pods/', r(99)).next(), grpc.status.OUT_OF_RANGE);
    });

    it('checks revision and uid preconditions', async () => {
      const { kv } = await store.create('core/secrets/ns/s', v('1'), 'uid-s');
      await store.update('core/secrets/ns/s', v('2'));
      const stale = await rpcError(store.update('core/secrets/ns/s', v('3'), { modRevision: kv.modRevision }), grpc.status.FAILED_PRECONDITION);
      expect(stale.trailers['storage-current-revision']).to.equal(String(r(2)));
      const otherUid = await rpcError(store.delete('core/secrets/ns/s', { uid: 'someone-else' }), grpc.status.FAILED_PRECONDITION);
      expect(otherUid.trailers['storage-current-revision']).to.equal(String(r(2)));
      const ok = await store.update('core/secrets/ns/s', v('3'), { modRevision: r(2), uid: 'uid-s' });
      expect(ok.revision).to.equal(r(3));
      expect(ok.kv).to.include({ uid: 'uid-s', createRevision: r(1) });
      expect((await store.delete('core/secrets/ns/s', { modRevision: r(3), uid: 'uid-s' })).revision).to.equal(r(4));
    });

    it('pages a list with continue_after and exact remaining counts', async () => {
      for (let i = 0; i < 25; i++) await store.create(`core/configmaps/ns1/cm${String(i).padStart(2, '0')}`, v(`${i}`), `u${i}`);
      await store.create('core/configmaps/ns10/other', v('x'), 'o');
      await store.create('core/configmaps/ns0/before', v('x'), 'b');
      const pages = [];
      let after = '';
      let at = 0;
      for (;;) {
        const page = await store.list('core/configmaps/ns1/', { limit: 10, continueAfter: after, revision: at });
        pages.push(page);
        if (!page.more) break;
        after = page.items[page.items.length - 1].key;
        at = page.revision;
      }
      expect(pages.map((p) => p.items.length)).to.deep.equal([10, 10, 5]);
      expect(pages.map((p) => p.remaining)).to.deep.equal([15, 5, 0]);
      expect(pages.map((p) => p.more)).to.deep.equal([true, true, false]);
      const keys = pages.flatMap((p) => p.items.map((kv) => kv.key));
      expect(keys).to.deep.equal(Array.from({ length: 25 }, (_, i) => `core/configmaps/ns1/cm${String(i).padStart(2, '0')}`));
      const all = await store.list('core/configmaps/');
      expect(all.items).to.have.length(27);
      expect(all.remaining).to.equal(0);
    });

    it('keeps pages of one list at its revision while writes go on', async () => {
      for (let i = 0; i < 6; i++) await store.create(`core/pods/ns/p${i}`, v('old'), `u${i}`);
      const first = await store.list('core/pods/', { limit: 3 });
      await store.delete('core/pods/ns/p4');
      await store.update('core/pods/ns/p5', v('new'));
      await store.create('core/pods/ns/p6', v('new'), 'u6');
      const second = await store.list('core/pods/', { limit: 2, revision: first.revision, continueAfter: 'core/pods/ns/p2' });
      expect(second.revision).to.equal(first.revision);
      expect(second.items.map((kv) => [kv.key, kv.value.toString()])).to.deep.equal([['core/pods/ns/p3', 'old'], ['core/pods/ns/p4', 'old']]);
      expect(second.remaining).to.equal(1);
      const now = await store.list('core/pods/', { continueAfter: 'core/pods/ns/p2' });
      expect(now.items.map((kv) => [kv.key, kv.value.toString()]))
        .to.deep.equal([['core/pods/ns/p3', 'old'], ['core/pods/ns/p5', 'new'], ['core/pods/ns/p6', 'new']]);
    });

    it('counts the keys left after a page at an older revision exactly, whatever changed since', async () => {
      for (let i = 0; i < 8; i++) await store.create(`core/secrets/ns/s${i}`, v('old'), `u${i}`);
      const first = await store.list('core/secrets/', { limit: 2 });
      await store.delete('core/secrets/ns/s3'); // existed then, gone now
      await store.delete('core/secrets/ns/s4');
      await store.create('core/secrets/ns/s4', v('again'), 'u4b'); // existed then and now
      await store.create('core/secrets/ns/s5a', v('new'), 'n1'); // new
      await store.create('core/secrets/ns/s5b', v('new'), 'n2');
      await store.delete('core/secrets/ns/s5b'); // came and went
      await store.update('core/secrets/ns/s6', v('new'));
      await store.delete('core/secrets/ns/s0'); // before the page: not counted either way
      await store.create('core/secrets/other/x', v('x'), 'x'); // another namespace, after the prefix of ns/ only
      const second = await store.list('core/secrets/ns/', { limit: 2, revision: first.revision, continueAfter: 'core/secrets/ns/s1' });
      expect(second.items.map((kv) => kv.key)).to.deep.equal(['core/secrets/ns/s2', 'core/secrets/ns/s3']);
      expect(second).to.include({ remaining: 4, more: true });
    });

    it('reads a key and a list as of an older revision', async () => {
      const a1 = await store.create('apps/deployments/ns/a', v('a1'), 'ua');
      const b1 = await store.create('apps/deployments/ns/b', v('b1'), 'ub');
      await store.update('apps/deployments/ns/a', v('a2'));
      const del = await store.delete('apps/deployments/ns/b');
      await store.create('apps/deployments/ns/b', v('b-again'), 'ub2');

      const old = await store.get('apps/deployments/ns/a', a1.revision);
      expect(old.revision).to.equal(a1.revision);
      expect(old.kv).to.include({ modRevision: r(1), uid: 'ua' });
      expect(old.kv.value.toString()).to.equal('a1');
      await rpcError(store.get('apps/deployments/ns/b', del.revision), grpc.status.NOT_FOUND);
      expect((await store.get('apps/deployments/ns/b', del.revision - 1)).kv.value.toString()).to.equal('b1');

      const at = (revision: number) => store.list('apps/deployments/', { revision })
        .then((l) => l.items.map((kv) => `${kv.key.split('/')[3]}=${kv.value.toString()}@${kv.modRevision - base}`));
      expect(await at(b1.revision)).to.deep.equal(['a=a1@1', 'b=b1@2']);
      expect(await at(del.revision)).to.deep.equal(['a=a2@3']);
      expect(await at(0)).to.deep.equal(['a=a2@3', 'b=b-again@5']);
      await store.update('apps/deployments/ns/a', v('a3')); // so that earlier revisions are read through the version index
      const firstOf = (revision: number) => store.list('apps/deployments/', { revision, limit: 1 })
        .then((l) => [l.items.map((kv) => kv.value.toString()), l.remaining, l.more]);
      expect(await firstOf(b1.revision)).to.deep.equal([['a1'], 1, true]);
      expect(await firstOf(del.revision)).to.deep.equal([['a2'], 0, false]);
      expect(await firstOf(del.revision + 1)).to.deep.equal([['a2'], 1, true]);
    });

    it('makes compacted revisions unreadable and keeps the rest', async () => {
      await store.create('core/nodes//n1', v('1'), 'n1');
      await store.update('core/nodes//n1', v('2'));
      await store.create('core/nodes//n2', v('x'), 'n2');
      await store.delete('core/nodes//n2');
      await store.update('core/nodes//n1', v('3'));
      expect(await store.compact(r(4))).to.equal(r(4));
      expect(await compacted()).to.equal(r(4));

      const gone = await rpcError(store.get('core/nodes//n1', r(3)), grpc.status.OUT_OF_RANGE);
      expect(gone.trailers['storage-error']).to.equal('compacted');
      await rpcError(store.list('core/nodes/', { revision: r(2) }), grpc.status.OUT_OF_RANGE);
      await rpcError(store.watch('core/nodes/', r(3)).next(), grpc.status.OUT_OF_RANGE);
      expect((await store.get('core/nodes//n1', r(4))).kv.value.toString()).to.equal('2');
      expect((await store.list('core/nodes/', { revision: r(4) })).items.map((kv) => kv.key)).to.deep.equal(['core/nodes//n1']);
      const watched = await collect(store.watch('core/nodes/', r(4)), r(5));
      expect(watched.map((e) => [e.type, e.revision])).to.deep.equal([['PUT', r(5)]]);
      await rpcError(store.compact(r(99)), grpc.status.OUT_OF_RANGE);
    });

    it('keeps data and continues revisions after a restart', async () => {
      await store.create('core/services/ns/s', v('1'), 'us');
      await store.update('core/services/ns/s', v('2'));
      await store.create('core/services/ns/t', v('1'), 'ut');
      await store.close();
      store = await backend.open({}, backend.lastId);
      expect(await revision()).to.equal(3);
      expect((await store.get('core/services/ns/s')).kv).to.include({ modRevision: r(2), createRevision: r(1), uid: 'us' });
      expect((await store.update('core/services/ns/t', v('2'))).revision).to.equal(r(4));
      expect((await store.list('core/services/', { revision: r(3) })).items.map((kv) => kv.value.toString())).to.deep.equal(['2', '1']);
    });

    it('gives concurrent writes distinct consecutive revisions', async () => {
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => store.create(`core/configmaps/ns/c${i}`, v(`${i}`), `u${i}`)));
      const revisions = results.map((res) => res.revision).sort((a, b) => a - b);
      expect(revisions).to.deep.equal(Array.from({ length: 200 }, (_, i) => r(i + 1)));
      expect(results.every((res) => res.kv.modRevision === res.revision)).to.equal(true);
      expect((await store.list('core/configmaps/')).items).to.have.length(200);
    });

    it('lets one of two racing writes to a key win and refuses the other', async () => {
      const { kv } = await store.create('core/leases/ns/l', v('0'), 'ul');
      const outcomes = await Promise.allSettled([
        store.update('core/leases/ns/l', v('first'), { modRevision: kv.modRevision }),
        store.update('core/leases/ns/l', v('second'), { modRevision: kv.modRevision }),
        store.create('core/leases/ns/m', v('1'), 'um'),
        store.create('core/leases/ns/m', v('2'), 'um2'),
      ]);
      const updates = outcomes.slice(0, 2);
      const creates = outcomes.slice(2);
      expect(updates.filter((o) => o.status === 'fulfilled')).to.have.length(1);
      expect(creates.filter((o) => o.status === 'fulfilled')).to.have.length(1);
      const won = (updates.find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<{ revision: number }>).value;
      const lost = (updates.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason as RpcError;
      expect(grpc.status[lost.code]).to.equal('FAILED_PRECONDITION');
      expect(lost.trailers['storage-current-revision']).to.equal(String(won.revision));
      expect(grpc.status[((creates.find((o) => o.status === 'rejected') as PromiseRejectedResult).reason as RpcError).code]).to.equal('ALREADY_EXISTS');
      const winner = updates[0].status === 'fulfilled' ? 'first' : 'second';
      expect((await store.get('core/leases/ns/l')).kv.value.toString()).to.equal(winner);
      expect(await revision()).to.equal(3);
    });

    it('watches history then live changes without gap or duplicate', async () => {
      for (let i = 0; i < 20; i++) await store.create(`core/events/ns/e${i}`, v('0'), `u${i}`);
      await store.create('core/other/ns/x', v('0'), 'x');
      const written: number[] = [];
      const writer = (async () => {
        for (let n = 0; n < 150; n++) {
          const done = await Promise.all(Array.from({ length: 4 }, (_, j) => store.update(`core/events/ns/e${(n * 4 + j) % 20}`, v(`${n}`))));
          written.push(...done.map((res) => res.revision));
          if (n % 10 === 0) await store.update('core/other/ns/x', v(`${n}`));
        }
      })();
      await sleep(20);
      const start = r(10);
      const watch = store.watch('core/events/', start, { follow: true });
      const first = await watch.next(); // history is read and the feed joined while the writer runs
      await writer;
      const last = Math.max(...written);
      const events = [first.value as StorageEvent, ...await collect(watch, last)];
      await watch.return(undefined);
      expect(events.filter((e) => e.type === 'PROGRESS')).to.have.length(1);
      const expected = [...Array.from({ length: 10 }, (_, i) => r(11 + i)), ...written].sort((a, b) => a - b);
      const changes = events.filter((e) => e.type !== 'PROGRESS');
      expect(changes.map((e) => e.revision)).to.deep.equal(expected);
      expect(changes.every((e) => e.kv!.key.startsWith('core/events/'))).to.equal(true);
      expect(store.activeWatches).to.equal(0);
    });

    it('ends a watch without follow at the current revision, with prev values', async () => {
      await store.create('core/cm/ns/a', v('1'), 'ua');
      await store.update('core/cm/ns/a', v('2'));
      await store.delete('core/cm/ns/a');
      const events: StorageEvent[] = [];
      for await (const e of store.watch('core/cm/', base)) events.push(e);
      expect(events.map((e) => [e.type, e.revision - base, e.kv!.modRevision - base, e.kv!.value.toString(), e.prevKv?.value.toString()]))
        .to.deep.equal([['PUT', 1, 1, '1', undefined], ['PUT', 2, 2, '2', '1'], ['DELETE', 3, 3, '2', '2']]);
      expect(events[0].prevKv).to.equal(null);
      expect(events[2].prevKv!.modRevision).to.equal(r(2));
      expect(events[2].kv).to.include({ uid: 'ua', createRevision: r(1) });
    });

    it('ends a watch that falls too far behind, before it is read again', async () => {
      await store.close();
      store = await backend.open({ maxWatchBacklog: 5 });
      const watch = store.watch('', (await store.currentRevision()).revision, { follow: true });
      expect((await watch.next()).value).to.include({ type: 'PROGRESS' });
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.create(`core/x/ns/k${i}`, v('1'), `u${i}`)));
      // Unread, the events pile up until the bound ends the watch (on etcd as they arrive from etcd's watch).
      const deadline = Date.now() + 5000;
      while (store.activeWatches > 0 && Date.now() < deadline) await sleep(10);
      expect(store.activeWatches, 'watches still taking events').to.equal(0);
      await rpcError(watch.next(), grpc.status.RESOURCE_EXHAUSTED);
    });

    it('releases a followed watch when it is aborted, and ends watches on close', async () => {
      const aborted = new AbortController();
      const watch = store.watch('', base, { follow: true, signal: aborted.signal });
      expect((await watch.next()).value).to.include({ type: 'PROGRESS', revision: base });
      expect(store.activeWatches).to.equal(1);
      const pending = watch.next();
      aborted.abort();
      expect((await pending).done).to.equal(true);
      expect(store.activeWatches).to.equal(0);

      const open = store.watch('', base, { follow: true });
      await open.next();
      const closing = store.close();
      await rpcError(open.next(), grpc.status.UNAVAILABLE);
      await closing;
      await rpcError(store.create('core/x/ns/y', v('1')), grpc.status.UNAVAILABLE);
      expect(store.activeWatches).to.equal(0);
    });
  });
}

describe('storage store (leveldb only)', () => {
  let dir: string;
  let store: Store;
  const open = async (options: StoreOptions = {}): Promise<Store> =>
    Store.open(join(dir, 'storage'), { compactionIntervalMs: 0, ...options });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'storage-test-'));
    store = await open();
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('compacts by the history window', async () => {
    await store.close();
    store = await open({ historyWindowMs: 300 });
    await store.create('core/a/ns/x', v('1'), 'x');
    await sleep(20); // commit times are kept at a granularity of window/100 (at least 10 ms)
    await store.update('core/a/ns/x', v('2'));
    expect(await store.compact()).to.equal(0);
    await sleep(400);
    await store.update('core/a/ns/x', v('3'));
    expect(await store.compact()).to.equal(2);
    await rpcError(store.get('core/a/ns/x', 1), grpc.status.OUT_OF_RANGE);
    expect((await store.get('core/a/ns/x', 2)).kv.value.toString()).to.equal('2');
  });

  it('ages out a write committed too soon after the last mark, with no later write', async () => {
    await store.close();
    store = await open({ historyWindowMs: 300 });
    await store.create('core/a/ns/x', v('1'), 'x');
    await store.update('core/a/ns/x', v('2')); // within the mark granularity of the create
    await sleep(400);
    expect(await store.compact()).to.equal(2);
    await rpcError(store.get('core/a/ns/x', 1), grpc.status.OUT_OF_RANGE);
  });

  it('group-commits concurrent writes with distinct consecutive revisions', async () => {
    let batches = 0;
    store.onCommit(() => { batches++; });
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => store.create(`core/configmaps/ns/c${i}`, v(`${i}`), `u${i}`)));
    const revisions = results.map((r) => r.revision).sort((a, b) => a - b);
    expect(revisions).to.deep.equal(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(results.every((r) => r.kv.modRevision === r.revision)).to.equal(true);
    await sleep(10);
    expect(batches).to.be.greaterThan(0).and.lessThan(20);
    expect((await store.list('core/configmaps/')).items).to.have.length(200);
  });

  it('keeps the compacted revision after a restart', async () => {
    await store.create('core/services/ns/s', v('1'), 'us');
    await store.update('core/services/ns/s', v('2'));
    await store.create('core/services/ns/t', v('1'), 'ut');
    await store.compact(2);
    await store.close();
    store = await open();
    expect(store.revision).to.equal(3);
    expect(store.compactedRevision).to.equal(2);
    expect((await store.get('core/services/ns/s')).kv).to.include({ modRevision: 2, createRevision: 1, uid: 'us' });
    expect((await store.update('core/services/ns/t', v('2'))).revision).to.equal(4);
    expect((await store.list('core/services/', { revision: 3 })).items.map((kv) => kv.value.toString())).to.deep.equal(['2', '1']);
  });

});

describe('storage store (etcd only)', function () {
  this.timeout(20_000);
  const backend = testBackend('etcd3');
  let store: EtcdStore;
  beforeEach(async () => { store = await backend.open() as EtcdStore; });
  afterEach(async () => { await store.close(); });

  it('ends the history of a watch at a revision another user of etcd took', async () => {
    const base = (await store.currentRevision()).revision;
    await store.create('core/cm/ns/a', v('1'), 'ua');
    await store.client.put(Buffer.from('/elsewhere/x'), v('x'));
    const events: StorageEvent[] = [];
    for await (const e of store.watch('core/cm/', base)) events.push(e);
    expect(events.map((e) => [e.type, e.revision])).to.deep.equal([['PUT', base + 1]]);
  });

  it('finds out whether a create whose answer was lost happened, and sends no other write again', async () => {
    const txn = store.client.txn.bind(store.client);
    let lose: 'answer' | 'request' | undefined;
    store.client.txn = async (...args: Parameters<typeof txn>) => {
      const losing = lose;
      lose = undefined;
      if (losing === 'request') throw new RpcError(grpc.status.UNAVAILABLE, 'etcd is unreachable: the request was lost');
      const res = await txn(...args);
      if (losing === 'answer') throw new RpcError(grpc.status.UNAVAILABLE, 'etcd is unreachable: the answer was lost');
      return res;
    };
    // Applied, its answer lost: sent again, it finds the object with its uid and answers as the first would have.
    lose = 'answer';
    const happened = await store.create('core/cm/ns/a', v('1'), 'ua');
    expect((await store.get('core/cm/ns/a')).kv).to.include({ uid: 'ua', createRevision: happened.revision, modRevision: happened.revision });
    // Not applied: sent again, it creates the object.
    lose = 'request';
    const created = await store.create('core/cm/ns/b', v('2'), 'ub');
    expect((await store.get('core/cm/ns/b')).kv).to.include({ uid: 'ub', createRevision: created.revision });
    // Another object there: it already exists, as it would without the loss.
    lose = 'request';
    await rpcError(store.create('core/cm/ns/a', v('3'), 'other'), grpc.status.ALREADY_EXISTS);
    // An update whose answer was lost is answered unavailable, not sent again (it had been applied).
    lose = 'answer';
    await rpcError(store.update('core/cm/ns/a', v('4')), grpc.status.UNAVAILABLE);
    expect((await store.get('core/cm/ns/a')).kv.value.toString()).to.equal('4');
  });

  it('hands changes to commit listeners and revisions of its own keys, or owed to readers, to progress listeners', async () => {
    const batches: number[][] = [];
    const progress: number[] = [];
    store.onCommit((batch) => batches.push(batch.map((c) => c.event.revision)));
    store.onProgress((revision) => progress.push(revision));
    store.startPublishing((await store.currentRevision()).revision);
    const { revision } = await store.create('core/cm/ns/a', v('1'), 'ua');
    await store.compact(); // the schedule's first turn writes the compaction key
    const foreign = (await store.client.put(Buffer.from('/elsewhere/y'), v('y'))).header.revision;
    expect((await store.currentRevision()).revision).to.equal(foreign); // a reader told this revision: the stream owes it
    const deadline = Date.now() + 5000;
    while (!progress.some((p) => p > foreign) && Date.now() < deadline) await sleep(20);
    expect(batches).to.deep.equal([[revision]]);
    expect(progress[0]).to.equal(revision + 1);
    expect(progress.some((p) => p > foreign), `progress past ${foreign}: ${progress.join(', ')}`).to.equal(true);
  });
});

describe('storage store (etcd cluster of 3)', function () {
  this.timeout(60_000);
  let etcd: RunningEtcd;
  before(async () => { etcd = await startEtcd({ members: 3 }); });
  after(async () => { await etcd?.stop(); });

  it('goes on through another member when the one it uses dies', async () => {
    const store = await EtcdStore.open({ servers: etcd.servers, prefix: '/failover', compactionIntervalMs: 0 });
    let killed = false;
    try {
      const watch = store.watch('core/cm/', (await store.currentRevision()).revision, { follow: true });
      expect((await watch.next()).value).to.include({ type: 'PROGRESS' });
      await store.create('core/cm/ns/a', v('1'), 'ua');
      expect((await watch.next()).value).to.include({ type: 'PUT' });
      await etcd.members[0].kill();
      killed = true;
      let refused = 0;
      let written: number | undefined;
      for (let i = 0; i < 20 && written === undefined; i++) {
        written = await store.update('core/cm/ns/a', v('2')).then((r) => r.revision, () => { refused++; return undefined; });
      }
      expect(written, 'a write through the members left').to.be.a('number');
      expect(refused, 'writes refused before the next member was used').to.be.at.most(3);
      expect((await store.get('core/cm/ns/a')).kv.value.toString()).to.equal('2');
      // The watch was on the dead member: it ends, as watches do when etcd goes, and the caller watches again.
      await rpcError(watch.next(), grpc.status.UNAVAILABLE);
    } finally {
      await store.close();
      if (killed) await etcd.members[0].start();
    }
  });

  it('answers creates a follower forwarded to a leader that died within one more write deadline, each created once', async () => {
    const leader = await etcd.leader();
    expect(leader).to.be.at.least(0);
    // Calls go to a follower first: it forwards writes to the leader.
    const order = [...etcd.members.filter((_m, i) => i !== leader), etcd.members[leader]];
    const store = await EtcdStore.open({ servers: order.map((m) => `http://${m.endpoint}`).join(','), prefix: '/leaderloss', compactionIntervalMs: 0 });
    try {
      await store.create('core/cm/ns/before', v('0'), 'u-before');
      await etcd.members[leader].kill();
      const started = performance.now();
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => store.create(`core/cm/ns/k${i}`, v(`${i}`), `u${i}`)
        .then((res) => ({ revision: res.revision, ms: performance.now() - started }), (err: RpcError) => ({ err, ms: performance.now() - started }))));
      console.log(`      creates during the leader's loss answered in ${results.map((r) => Math.round(r.ms)).join(', ')} ms`);
      expect(results.map((r) => ('err' in r ? grpc.status[r.err.code] : 'OK')), 'answers').to.deep.equal(Array(5).fill('OK'));
      expect(Math.max(...results.map((r) => r.ms)), 'ms until the last answer').to.be.lessThan(4500);
      for (const [i, r] of results.entries()) {
        expect((await store.get(`core/cm/ns/k${i}`)).kv).to.include({ uid: `u${i}`, createRevision: (r as { revision: number }).revision });
      }
    } finally {
      await store.close();
      await etcd.members[leader].start();
    }
  });
});
