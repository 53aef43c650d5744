import { expect } from 'chai';
import { ObjectCache, RevisionProbe, type ChangeStream } from '../../gateway/objectcache.js';
import type { HubWatcher } from '../../gateway/hub.js';
import type { KeyValue, StorageClient, StorageEvent } from '../../internal/storage/client.js';
import { encodeStored } from '../../internal/storage/objects.js';

const PREFIX = 'core/configmaps/';
const kv = (name: string, revision: number, data = 'x'): KeyValue => ({
  key: `${PREFIX}ns/${name}`, value: encodeStored({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data: { v: data } }),
  modRevision: revision, createRevision: revision, uid: '',
});
const put = (name: string, revision: number, data?: string): StorageEvent => ({ type: 'PUT', kv: kv(name, revision, data), prevKv: null, revision });
const del = (name: string, revision: number): StorageEvent => ({ type: 'DELETE', kv: kv(name, revision), prevKv: kv(name, 1), revision });
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A change stream the test drives: it delivers events and moves its revision. */
class FakeStream implements ChangeStream {
  ready = true;
  currentRevision = 0;
  readonly watchers = new Map<HubWatcher, string>();
  reached = async (revision: number) => this.currentRevision >= revision;
  register(prefix: string, watcher: HubWatcher): () => void {
    this.watchers.set(watcher, prefix);
    return () => this.watchers.delete(watcher);
  }
  deliver(ev: StorageEvent): void {
    this.currentRevision = ev.revision;
    for (const [w, prefix] of this.watchers) if (ev.kv!.key.startsWith(prefix)) w.onEvent(ev);
  }
  fail(): void {
    for (const w of [...this.watchers.keys()]) w.onFail('lost');
    this.watchers.clear();
  }
}

/** Storage holding some objects at a revision; `hold` keeps list calls waiting until released. */
function fakeStorage(items: KeyValue[], revision: number) {
  const calls = { list: 0, currentRevision: 0 };
  let release: (() => void) | undefined;
  const state = { items, revision, compacted: 0, hold: false };
  const storage = {
    list: async (prefix: string, opts: { limit?: number; continueAfter?: string }) => {
      calls.list++;
      if (state.hold) await new Promise<void>((resolve) => { release = resolve; });
      const under = state.items.filter((i) => i.key.startsWith(prefix) && i.key > (opts.continueAfter ?? ''));
      const page = opts.limit ? under.slice(0, opts.limit) : under;
      return { items: page, revision: state.revision, more: page.length < under.length, remaining: under.length - page.length };
    },
    currentRevision: async () => { calls.currentRevision++; return { revision: state.revision, compactedRevision: state.compacted }; },
  };
  return { storage: storage as unknown as StorageClient, calls, state, release: () => release?.() };
}

const names = (entries: Array<[string, string]>) => entries.map(([, json]) => JSON.parse(json).metadata.name);

describe('gateway: the object cache', () => {
  it('answers nothing until listed, then holds every object as its JSON with its resourceVersion', async () => {
    const stream = new FakeStream();
    const { storage, calls } = fakeStorage([kv('a', 3), kv('b', 4)], 5);
    const cache = new ObjectCache(storage, stream);
    expect(await cache.serving(PREFIX, { mode: 'Any', revision: 0 })).to.equal(undefined);
    await tick();
    const c = await cache.serving(PREFIX, { mode: 'Any', revision: 0 });
    expect(c).to.not.equal(undefined);
    expect(calls.list).to.equal(1);
    expect(JSON.parse(c!.get(`${PREFIX}ns/a`)!)).to.deep.include({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(JSON.parse(c!.get(`${PREFIX}ns/a`)!).metadata.resourceVersion).to.equal('3');
    expect(c!.revision).to.equal(5);
  });

  it('applies changes that arrive while it lists, skipping those the list already holds', async () => {
    const stream = new FakeStream();
    const { storage, state, release } = fakeStorage([kv('a', 3)], 5);
    state.hold = true;
    const cache = new ObjectCache(storage, stream);
    const c = cache.collection(PREFIX);
    c.fill();
    stream.deliver(put('a', 4, 'old')); // already in the list at 5
    stream.deliver(put('b', 6));
    stream.deliver(del('a', 7));
    release();
    await tick();
    expect(c.live).to.equal(true);
    expect(names(c.page(PREFIX, 0).entries)).to.deep.equal(['b']);
    expect(c.revision).to.equal(7);
  });

  it('holds an exact revision only while nothing changed after it', async () => {
    const stream = new FakeStream();
    const { storage } = fakeStorage([kv('a', 3)], 5);
    const cache = new ObjectCache(storage, stream);
    cache.collection(PREFIX).fill();
    await tick();
    stream.deliver({ ...put('other', 6), kv: { ...kv('other', 6), key: 'core/secrets/ns/other' } });
    expect(await cache.serving(PREFIX, { mode: 'Exact', revision: 5 })).to.not.equal(undefined);
    expect(await cache.serving(PREFIX, { mode: 'Exact', revision: 6 })).to.not.equal(undefined);
    stream.deliver(put('b', 7));
    expect(await cache.serving(PREFIX, { mode: 'Exact', revision: 6 })).to.equal(undefined);
    expect(await cache.serving(PREFIX, { mode: 'Exact', revision: 7 })).to.not.equal(undefined);
  });

  it('refuses an exact revision storage has compacted, though unchanged since', async () => {
    const stream = new FakeStream();
    const { storage, state } = fakeStorage([kv('a', 3)], 5);
    const cache = new ObjectCache(storage, stream);
    cache.collection(PREFIX).fill();
    await tick();
    state.compacted = 6;
    stream.deliver({ ...put('other', 6), kv: { ...kv('other', 6), key: 'core/secrets/ns/other' } });
    expect(await cache.serving(PREFIX, { mode: 'Exact', revision: 5 })).to.equal(undefined);
    expect(await cache.serving(PREFIX, { mode: 'Exact', revision: 6 })).to.not.equal(undefined);
  });

  it('a consistent read waits for storage\'s current revision on the stream, and reads storage when it does not come', async () => {
    const stream = new FakeStream();
    const { storage, state } = fakeStorage([kv('a', 3)], 5);
    const cache = new ObjectCache(storage, stream);
    stream.currentRevision = 5;
    cache.collection(PREFIX).fill();
    await tick();
    expect(await cache.serving(PREFIX, { mode: 'MostRecent', revision: 0 })).to.not.equal(undefined);
    state.revision = 8; // committed, not yet on the stream
    expect(await cache.serving(PREFIX, { mode: 'MostRecent', revision: 0 })).to.equal(undefined);
    stream.deliver(put('c', 8));
    const c = await cache.serving(PREFIX, { mode: 'MostRecent', revision: 0 });
    expect(names(c!.page(PREFIX, 0).entries)).to.deep.equal(['a', 'c']);
  });

  it('forgets a collection when the stream fails and lists it again on the next read', async () => {
    const stream = new FakeStream();
    const { storage, state, calls } = fakeStorage([kv('a', 3)], 5);
    const cache = new ObjectCache(storage, stream);
    cache.collection(PREFIX).fill();
    await tick();
    stream.fail();
    stream.ready = false;
    expect(await cache.serving(PREFIX, { mode: 'Any', revision: 0 })).to.equal(undefined);
    expect(calls.list).to.equal(1); // not while the stream is down
    stream.ready = true;
    state.items = [kv('z', 9)];
    state.revision = stream.currentRevision = 9;
    expect(await cache.serving(PREFIX, { mode: 'Any', revision: 0 })).to.equal(undefined);
    await tick();
    const c = await cache.serving(PREFIX, { mode: 'Any', revision: 0 });
    expect(names(c!.page(PREFIX, 0).entries)).to.deep.equal(['z']);
    expect(calls.list).to.equal(2);
  });

  it('pages: a limit, the remaining count, and the keys after a continue key', async () => {
    const stream = new FakeStream();
    const { storage } = fakeStorage(['a', 'b', 'c', 'd'].map((n, i) => kv(n, i + 1)), 5);
    const cache = new ObjectCache(storage, stream);
    const c = cache.collection(PREFIX);
    c.fill();
    await tick();
    const first = c.page(`${PREFIX}ns/`, 2);
    expect(names(first.entries)).to.deep.equal(['a', 'b']);
    expect(first.remaining).to.equal(2);
    expect(names(c.page(`${PREFIX}ns/`, 2, first.entries[1][0]).entries)).to.deep.equal(['c', 'd']);
    expect(c.page(`${PREFIX}other/`, 0).entries).to.deep.equal([]);
  });
});

describe('gateway: storage revision probe', () => {
  it('concurrent reads share calls, and a read arriving during a call waits for the next one', async () => {
    let revision = 1;
    const pending: Array<() => void> = [];
    let calls = 0;
    const probe = new RevisionProbe({
      currentRevision: () => {
        calls++;
        const answer = revision;
        return new Promise((resolve) => pending.push(() => resolve({ revision: answer, compactedRevision: 0 })));
      },
    } as unknown as StorageClient);
    const first = probe.current();
    revision = 2; // a write acknowledged after the first call was sent
    const later = [probe.current(), probe.current(), probe.current()];
    expect(calls).to.equal(1);
    pending.shift()!();
    expect((await first).revision).to.equal(1);
    await tick();
    expect(calls).to.equal(2);
    pending.shift()!();
    for (const p of later) expect((await p).revision).to.equal(2);
  });
});
