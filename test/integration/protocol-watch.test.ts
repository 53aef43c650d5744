// Document 1, "Watching and paging behavior" 4 and 5 and issue 3 point 3: bookmarks,
// streaming lists (sendInitialEvents), selector transitions, slow watchers.
import { expect } from 'chai';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';
import { pkiPaths } from '../../internal/pki/index.js';

const INITIAL_EVENTS_END = 'svc.io/initial-events-end';
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const label = (e: any) => `${e.type} ${e.object?.metadata?.name ?? ''}`.trim();
const isEndBookmark = (e: any) => e.type === 'BOOKMARK' && e.object?.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true';

function expectStatus(res: Response, code: number, reason: string): void {
  expect(res.status, res.text).to.equal(code);
  expect(res.body, res.text).to.include({ kind: 'Status', status: 'Failure', code, reason });
}

/** A BOOKMARK holds an object of the watched kind with only metadata.resourceVersion (plus the end annotation). */
function expectBookmarkShape(e: any, kind: string, initialEnd: boolean): void {
  expect(e.type).to.equal('BOOKMARK');
  expect(e.object).to.include({ kind, apiVersion: 'v1' });
  expect(e.object.metadata.resourceVersion).to.match(/^\d+$/);
  expect(Object.keys(e.object.metadata).sort()).to.deep.equal(initialEnd ? ['annotations', 'resourceVersion'] : ['resourceVersion']);
  if (initialEnd) expect(e.object.metadata.annotations).to.deep.equal({ [INITIAL_EVENTS_END]: 'true' });
}

describe('protocol: watch bookmarks, initial events, selector transitions and slow watchers', function () {
  this.timeout(60_000);
  let c: Cluster;
  const rvOf = async (path: string) => (await c.request('GET', path)).body.metadata.resourceVersion as string;
  const create = async (ns: string, name: string, labels: Record<string, string> = {}, data: Record<string, string> = { v: '1' }) => {
    const res = await c.request('POST', cms(ns), { body: { metadata: { name, labels }, data } });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const update = async (ns: string, name: string, change: (obj: any) => void) => {
    const obj = (await c.request('GET', `${cms(ns)}/${name}`)).body;
    change(obj);
    const res = await c.request('PUT', `${cms(ns)}/${name}`, { body: obj });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };

  // Opened at the start, checked at the end: an idle watch gets a BOOKMARK within a minute.
  let idleOpened = 0;
  let idleStartRv = 0;
  let idleWithBookmarks: Promise<{ status: number; events: any[]; ended: boolean } | Error>;
  let idleWithout: Promise<{ status: number; events: any[]; ended: boolean } | Error>;

  before(async () => {
    c = await new Cluster().start();
    for (const ns of ['w-idle', 'w-init', 'w-sel', 'w-slow']) {
      expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status).to.equal(201);
    }
    idleStartRv = Number(await rvOf(cms('w-idle')));
    idleOpened = Date.now();
    idleWithBookmarks = c.watch(`${cms('w-idle')}?watch=1&allowWatchBookmarks=true&resourceVersion=${idleStartRv}`, {
      until: (evs) => evs.some((e) => e.type === 'BOOKMARK'), timeoutMs: 62_000,
    }).catch((err: Error) => err);
    // Watched as long as the other one took to get its BOOKMARK, and 2 s more: a bookmark timer on this one, opened
    // just after, would have fired by then.
    const enough = new AbortController();
    void idleWithBookmarks.then(() => setTimeout(() => enough.abort(), 2_000));
    idleWithout = c.watch(`${cms('w-idle')}?watch=1&resourceVersion=${idleStartRv}`, { timeoutMs: 62_000, signal: enough.signal }).catch((err: Error) => err);
  });
  after(async () => { await c?.stop(); });

  describe('sendInitialEvents=true with resourceVersionMatch=NotOlderThan', () => {
    before(async () => {
      for (const n of ['i1', 'i2', 'i3']) await create('w-init', n, n === 'i2' ? { pick: 'yes' } : {});
    });

    it('resourceVersion unset: synthetic ADDED, then the initial-events-end BOOKMARK, then live events', async () => {
      const before = Number(await rvOf(cms('w-init')));
      let wrote = false;
      const { status, events } = await c.watch(
        `${cms('w-init')}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`, {
          timeoutMs: 10_000,
          until: (evs) => {
            if (!wrote && evs.some(isEndBookmark)) { wrote = true; void create('w-init', 'i4'); }
            return evs.some((e) => label(e) === 'ADDED i4');
          },
        });
      expect(status).to.equal(200);
      const end = events.findIndex(isEndBookmark);
      expect(end, `events: ${events.map(label)}`).to.equal(3);
      expect(events.slice(0, 3).map(label).sort()).to.deep.equal(['ADDED i1', 'ADDED i2', 'ADDED i3']);
      expectBookmarkShape(events[3], 'ConfigMap', true);
      const synced = Number(events[3].object.metadata.resourceVersion);
      expect(synced, 'synced at least to the start of the read').to.be.at.least(before);
      for (const e of events.slice(0, 3)) expect(Number(e.object.metadata.resourceVersion)).to.be.at.most(synced);
      const live = events.slice(4).filter((e) => e.type !== 'BOOKMARK');
      expect(live.map(label)).to.deep.equal(['ADDED i4']);
      expect(Number(live[0].object.metadata.resourceVersion)).to.be.greaterThan(synced);
    });

    it('a given resourceVersion: the bookmark is sent once state reaches it', async () => {
      const rv = Number(await rvOf(cms('w-init')));
      const { events } = await c.watch(
        `${cms('w-init')}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rv}`,
        { timeoutMs: 10_000, until: (evs) => evs.some(isEndBookmark) });
      const end = events.findIndex(isEndBookmark);
      expect(end, `events: ${events.map(label)}`).to.equal(4);
      expect(events.slice(0, 4).map(label).sort()).to.deep.equal(['ADDED i1', 'ADDED i2', 'ADDED i3', 'ADDED i4']);
      expect(Number(events[end].object.metadata.resourceVersion)).to.be.at.least(rv);
    });

    it('resourceVersion=0 and a label selector: synthetic ADDED of the matching objects only, then the bookmark', async () => {
      const { events } = await c.watch(
        `${cms('w-init')}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=0&labelSelector=pick%3Dyes`,
        { timeoutMs: 10_000, until: (evs) => evs.some(isEndBookmark) });
      expect(events.map(label)).to.deep.equal(['ADDED i2', 'BOOKMARK']);
      expectBookmarkShape(events[1], 'ConfigMap', true);
    });

    it('without resourceVersionMatch=NotOlderThan: 400 naming both parameters', async () => {
      for (const q of ['sendInitialEvents=true&allowWatchBookmarks=true', 'sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=Exact&resourceVersion=1']) {
        const res = await c.request('GET', `${cms('w-init')}?watch=1&${q}`);
        expectStatus(res, 400, 'BadRequest');
        expect(res.body.message).to.contain('sendInitialEvents').and.contain('resourceVersionMatch');
      }
    });
  });

  describe('label and field selectors filter the stream', () => {
    it('an object that starts matching arrives as ADDED, one that stops matching as DELETED', async () => {
      const rv = await rvOf(cms('w-sel'));
      const watching = c.watch(`${cms('w-sel')}?watch=1&resourceVersion=${rv}&labelSelector=tier%3Dweb`, {
        timeoutMs: 15_000, until: (evs) => evs.some((e) => label(e) === 'ADDED t3'),
      });
      await create('w-sel', 't1', { tier: 'web' }); // ADDED
      await create('w-sel', 't2', { tier: 'db' }); // not seen
      await update('w-sel', 't1', (o) => { o.data = { v: '2' }; }); // MODIFIED
      const moved = await update('w-sel', 't1', (o) => { o.metadata.labels.tier = 'db'; }); // DELETED
      await update('w-sel', 't1', (o) => { o.data = { v: '3' }; }); // not seen
      await update('w-sel', 't2', (o) => { o.metadata.labels.tier = 'web'; }); // ADDED
      expect((await c.request('DELETE', `${cms('w-sel')}/t2`)).status).to.equal(200); // DELETED
      await create('w-sel', 't3', { tier: 'web' }); // ADDED, the end marker
      const { status, events } = await watching;
      expect(status).to.equal(200);
      expect(events.map(label)).to.deep.equal(['ADDED t1', 'MODIFIED t1', 'DELETED t1', 'ADDED t2', 'DELETED t2', 'ADDED t3']);
      expect(events[1].object.data).to.deep.equal({ v: '2' });
      expect(events[2].object.metadata.resourceVersion, 'DELETED carries the version of the change').to.equal(moved.metadata.resourceVersion);
      expect(events[3].object.metadata.labels).to.deep.equal({ tier: 'web' });
    });

    it('a field selector (namespace status.phase) turns the Active -> Terminating transition into DELETED / ADDED', async () => {
      const rv = await rvOf('/api/v1/namespaces');
      const mine = (evs: any[]) => evs.filter((e) => e.object?.metadata?.name === 'fs-x');
      const active = c.watch(`/api/v1/namespaces?watch=1&resourceVersion=${rv}&fieldSelector=status.phase%3DActive`, {
        timeoutMs: 20_000, until: (evs) => mine(evs).some((e) => e.type === 'DELETED'),
      });
      const terminating = c.watch(`/api/v1/namespaces?watch=1&resourceVersion=${rv}&fieldSelector=status.phase%3DTerminating`, {
        timeoutMs: 20_000, until: (evs) => mine(evs).some((e) => e.type === 'DELETED'),
      });
      // A finalizer of our own keeps the namespace Terminating until we remove it.
      const ns = await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'fs-x', finalizers: ['example.com/hold'] } } });
      expect(ns.status, ns.text).to.equal(201);
      const del = await c.request('DELETE', '/api/v1/namespaces/fs-x');
      expect(del.status, del.text).to.equal(200);
      expect(del.body.status.phase).to.equal('Terminating');
      const held = await waitFor(async () => {
        const got = await c.request('GET', '/api/v1/namespaces/fs-x');
        return got.status === 200 && !(got.body.spec?.finalizers ?? []).length;
      }, 10_000);
      expect(held, 'namespace contents finalized, our finalizer keeps it').to.equal(true);
      const got = (await c.request('GET', '/api/v1/namespaces/fs-x')).body;
      const released = await c.request('PUT', '/api/v1/namespaces/fs-x', { body: { ...got, metadata: { ...got.metadata, finalizers: [] } } });
      expect(released.status, released.text).to.equal(200);
      expect(await waitFor(async () => (await c.request('GET', '/api/v1/namespaces/fs-x')).status === 404, 10_000)).to.equal(true);

      const a = mine((await active).events);
      expect(a.map((e) => e.type)).to.deep.equal(['ADDED', 'DELETED']);
      const t = mine((await terminating).events);
      expect(t[0]?.type, `events: ${t.map(label)}`).to.equal('ADDED');
      expect(t[0].object.status.phase).to.equal('Terminating');
      expect(t.at(-1)?.type).to.equal('DELETED');
      expect(t.slice(1, -1).every((e) => e.type === 'MODIFIED'), `events: ${t.map(label)}`).to.equal(true);
    });
  });

  describe('a slow watcher', () => {
    it('is closed past its buffer while writers and other watchers go on', async function () {
      this.timeout(120_000);
      const N = 60;
      const blob = 'x'.repeat(600_000);
      const rv = await rvOf(cms('w-slow'));
      const path = `${cms('w-slow')}?watch=1&resourceVersion=${rv}`;
      const slow = pausedWatch(c, path);
      try {
        await slow.opened;
        const healthy = c.watch(path, { timeoutMs: 90_000, until: (evs) => evs.length >= N });
        const started = Date.now();
        for (let i = 0; i < N; i++) {
          const res = await c.request('POST', cms('w-slow'), { body: { metadata: { name: `big-${i}` }, data: { blob } }, timeoutMs: 20_000 });
          expect(res.status, res.text.slice(0, 300)).to.equal(201);
        }
        const writeMs = Date.now() - started;
        const { events } = await healthy;
        expect(events.length, 'the healthy watcher gets every event').to.equal(N);
        expect(events.every((e) => e.type === 'ADDED')).to.equal(true);
        slow.resume();
        const closed = await waitFor(() => slow.done, 30_000);
        expect(closed, 'the slow watcher is closed').to.equal(true);
        expect(slow.events(), 'the slow watcher did not get the whole stream').to.be.lessThan(N);
        expect(writeMs / N, 'ms per write').to.be.lessThan(2_000);
        // The client re-lists and sees everything.
        const list = await c.request('GET', cms('w-slow'));
        expect(list.body.items).to.have.length(N);
      } finally {
        slow.close();
      }
    });
  });

  describe('bookmarks', () => {
    it('allowWatchBookmarks: an idle watch gets a BOOKMARK at least once a minute; without it none', async function () {
      this.timeout(90_000);
      const withBookmarks = await idleWithBookmarks;
      if (withBookmarks instanceof Error) throw withBookmarks;
      const bookmark = withBookmarks.events.find((e) => e.type === 'BOOKMARK');
      expect(bookmark, `no BOOKMARK within ${Math.round((Date.now() - idleOpened) / 1000)} s`).to.not.equal(undefined);
      expectBookmarkShape(bookmark, 'ConfigMap', false);
      expect(Number(bookmark.object.metadata.resourceVersion)).to.be.at.least(idleStartRv);
      expect(withBookmarks.events.filter((e) => e.type !== 'BOOKMARK')).to.deep.equal([]);
      const without = await idleWithout;
      if (without instanceof Error) throw without;
      expect(without.status).to.equal(200);
      expect(without.events.map(label)).to.deep.equal([]);
    });
  });
});

/** A watch whose response is not read until resume(); counts complete lines once reading. */
function pausedWatch(c: Cluster, path: string) {
  const p = pkiPaths(c.dataDir);
  let lines = 0;
  let done = false;
  let resolveOpened: () => void;
  let rejectOpened: (err: Error) => void;
  const opened = new Promise<void>((resolve, reject) => { resolveOpened = resolve; rejectOpened = reject; });
  let response: import('node:http').IncomingMessage | undefined;
  const req = https.request({
    host: '127.0.0.1', port: c.port, method: 'GET', path,
    ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey),
  }, (res) => {
    response = res;
    res.pause();
    res.on('data', (chunk: Buffer) => { for (const b of chunk) if (b === 10) lines++; });
    res.on('end', () => { done = true; });
    res.on('close', () => { done = true; });
    res.on('error', () => { done = true; });
    resolveOpened();
  });
  req.on('error', (err) => { done = true; rejectOpened(err); });
  req.end();
  return {
    opened: opened.then(() => new Promise((r) => setTimeout(r, 300))),
    resume: () => response?.resume(),
    events: () => lines,
    close: () => req.destroy(),
    get done() { return done; },
  };
}
