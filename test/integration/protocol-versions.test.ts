// Document 1, "Resource versions": the get, list and watch tables row by row.
import { expect } from 'chai';
import { Cluster, type Response } from '../lib/cluster.js';
import { StorageClient } from '../../internal/storage/client.js';

const NS = 'rv';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const cm = (name: string, v = '1') => ({ metadata: { name }, data: { v } });
const names = (res: Response) => res.body.items.map((i: any) => i.metadata.name);

function expectStatus(res: Response, code: number, reason: string): void {
  expect(res.status, res.text).to.equal(code);
  expect(res.body, res.text).to.include({ kind: 'Status', status: 'Failure', code, reason });
}

/** 400 BadRequest whose message names every parameter given (case-insensitive, spaces allowed). */
function expectBadParams(res: Response, ...params: string[]): void {
  expectStatus(res, 400, 'BadRequest');
  for (const p of params) {
    const spaced = p.replace(/([a-z])([A-Z])/g, '$1 ?$2');
    expect(res.body.message, `message names ${p}`).to.match(new RegExp(spaced, 'i'));
  }
}

/** 504 with `Too large resource version` and a Retry-After header, answered after a short wait. */
async function expectTooLarge(send: () => Promise<Response>): Promise<void> {
  const started = Date.now();
  const res = await send();
  expect(Date.now() - started, 'answered after a short wait').to.be.lessThan(12_000);
  expect(res.status, res.text).to.equal(504);
  expect(res.body).to.include({ kind: 'Status', code: 504 });
  expect(res.body.message).to.contain('Too large resource version');
  expect(res.headers['retry-after'], 'Retry-After header').to.match(/^\d+$/);
}

describe('protocol: resource versions of get, list and watch', function () {
  this.timeout(60_000);
  let c: Cluster;
  /** List version when a, b and c existed with v=1. */
  let r1 = 0;
  /** List version after a was changed to v=2 and c deleted. */
  let r2 = 0;
  let aV2 = '';
  let future = 0;
  const get = (path: string) => c.request('GET', path);

  before(async () => {
    c = await new Cluster().start();
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).to.equal(201);
    for (const n of ['a', 'b', 'c']) expect((await c.request('POST', CMS, { body: cm(n) })).status).to.equal(201);
    r1 = Number((await get(CMS)).body.metadata.resourceVersion);
    const a = (await get(`${CMS}/a`)).body;
    const updated = await c.request('PUT', `${CMS}/a`, { body: { ...a, data: { v: '2' } } });
    expect(updated.status).to.equal(200);
    aV2 = updated.body.metadata.resourceVersion;
    expect((await c.request('DELETE', `${CMS}/c`)).status).to.equal(200);
    r2 = Number((await get(CMS)).body.metadata.resourceVersion);
    expect(r2).to.be.greaterThan(r1);
    future = r2 + 1_000_000;
  });
  after(async () => { await c?.stop(); });

  describe('get', () => {
    it('resourceVersion unset: Most Recent', async () => {
      const res = await get(`${CMS}/a`);
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({ v: '2' });
      expect(res.body.metadata.resourceVersion).to.equal(aV2);
    });

    it('resourceVersion=0: Any', async () => {
      const res = await get(`${CMS}/a?resourceVersion=0`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ kind: 'ConfigMap', apiVersion: 'v1' });
      expect(res.body.metadata.name).to.equal('a');
      expect(Number(res.body.metadata.resourceVersion)).to.be.at.most(r2);
    });

    it('non-zero resourceVersion: NotOlderThan (an older version answers a state at least that new)', async () => {
      const older = await get(`${CMS}/a?resourceVersion=${r1}`);
      expect(older.status, older.text).to.equal(200);
      expect(Number(older.body.metadata.resourceVersion)).to.be.at.least(r1);
      const exact = await get(`${CMS}/a?resourceVersion=${aV2}`);
      expect(exact.status, exact.text).to.equal(200);
      expect(exact.body.metadata.resourceVersion).to.equal(aV2);
      expect(exact.body.data).to.deep.equal({ v: '2' });
    });

    it('a version newer than the store: 504 Too large resource version with Retry-After', async () => {
      await expectTooLarge(() => get(`${CMS}/a?resourceVersion=${future}`));
    });

    it('a malformed version: 400', async () => {
      expectStatus(await get(`${CMS}/a?resourceVersion=abc`), 400, 'BadRequest');
    });
  });

  describe('list, resourceVersionMatch unset, limit unset', () => {
    it('unset: Most Recent', async () => {
      const res = await get(CMS);
      expect(res.status).to.equal(200);
      expect(names(res)).to.deep.equal(['a', 'b']);
      expect(res.body.items[0].data).to.deep.equal({ v: '2' });
      expect(Number(res.body.metadata.resourceVersion)).to.be.at.least(r2);
    });

    it('0: Any', async () => {
      const res = await get(`${CMS}?resourceVersion=0`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.kind).to.equal('ConfigMapList');
      expect(Number(res.body.metadata.resourceVersion)).to.be.greaterThan(0);
    });

    it('non-zero: NotOlderThan (metadata.resourceVersion not older than asked)', async () => {
      const res = await get(`${CMS}?resourceVersion=${r1}`);
      expect(res.status, res.text).to.equal(200);
      expect(Number(res.body.metadata.resourceVersion)).to.be.at.least(r1);
    });

    it('non-zero newer than the store: 504', async () => {
      await expectTooLarge(() => get(`${CMS}?resourceVersion=${future}`));
    });

    it('non-zero one ahead of the store: answered as soon as a write commits it, not at the next look at storage', async () => {
      const storage = new StorageClient(c.addresses.storage);
      const ahead = (await storage.currentRevision().finally(() => storage.close())).revision + 1;
      let answeredAt = 0;
      const read = get(`${CMS}?resourceVersion=${ahead}`).then((res) => { answeredAt = Date.now(); return res; });
      // Past the first look at storage (1 s): without the change stream the next one would come a second later.
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect(answeredAt, 'still waiting for the revision').to.equal(0);
      expect((await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('rv-ahead') })).status).to.equal(201);
      const written = Date.now();
      const res = await read;
      expect(res.status, res.text).to.equal(200);
      expect(Number(res.body.metadata.resourceVersion)).to.be.at.least(ahead);
      expect(answeredAt - written, 'ms from the write to the read').to.be.lessThan(500);
    });
  });

  describe('list, resourceVersionMatch unset, limit=n without continue', () => {
    it('unset: Most Recent', async () => {
      const res = await get(`${CMS}?limit=10`);
      expect(res.status).to.equal(200);
      expect(names(res)).to.deep.equal(['a', 'b']);
      expect(Number(res.body.metadata.resourceVersion)).to.be.at.least(r2);
    });

    it('0: Any', async () => {
      const res = await get(`${CMS}?resourceVersion=0&limit=1`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.items.length).to.be.at.most(1);
    });

    it('non-zero: Exact (the collection as it was at that version)', async () => {
      const res = await get(`${CMS}?resourceVersion=${r1}&limit=10`);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.metadata.resourceVersion).to.equal(String(r1));
      expect(names(res)).to.deep.equal(['a', 'b', 'c']);
      expect(res.body.items[0].data).to.deep.equal({ v: '1' });
    });

    it('non-zero newer than the store: 504', async () => {
      await expectTooLarge(() => get(`${CMS}?resourceVersion=${future}&limit=10`));
    });
  });

  describe('list, resourceVersionMatch unset, limit=n with continue', () => {
    let token = '';
    before(async () => {
      const first = await get(`${CMS}?resourceVersion=${r1}&limit=2`);
      expect(names(first)).to.deep.equal(['a', 'b']);
      token = first.body.metadata.continue;
      expect(token).to.be.a('string').and.not.equal('');
    });

    it('unset: Continue Token, Exact (the next chunk at the token\'s version)', async () => {
      const res = await get(`${CMS}?limit=2&continue=${encodeURIComponent(token)}`);
      expect(res.status, res.text).to.equal(200);
      expect(names(res)).to.deep.equal(['c']);
      expect(res.body.metadata.resourceVersion).to.equal(String(r1));
    });

    it('0: invalid but treated as Continue Token, Exact', async () => {
      const res = await get(`${CMS}?resourceVersion=0&limit=2&continue=${encodeURIComponent(token)}`);
      expect(res.status, res.text).to.equal(200);
      expect(names(res)).to.deep.equal(['c']);
      expect(res.body.metadata.resourceVersion).to.equal(String(r1));
    });

    it('non-zero: 400 naming continue and resourceVersion', async () => {
      expectBadParams(await get(`${CMS}?resourceVersion=${r1}&limit=2&continue=${encodeURIComponent(token)}`), 'continue', 'resourceVersion');
    });

    it('resourceVersionMatch with continue: 400 naming both', async () => {
      expectBadParams(await get(`${CMS}?resourceVersionMatch=NotOlderThan&resourceVersion=0&limit=2&continue=${encodeURIComponent(token)}`),
        'resourceVersionMatch', 'continue');
    });
  });

  for (const limit of ['', '&limit=2']) {
    describe(`list, resourceVersionMatch=Exact, ${limit ? 'limit=n' : 'limit unset'}`, () => {
      it('unset: 400 naming resourceVersionMatch and resourceVersion', async () => {
        expectBadParams(await get(`${CMS}?resourceVersionMatch=Exact${limit}`), 'resourceVersionMatch', 'resourceVersion');
      });

      it('0: 400 naming resourceVersionMatch and resourceVersion', async () => {
        expectBadParams(await get(`${CMS}?resourceVersionMatch=Exact&resourceVersion=0${limit}`), 'resourceVersionMatch', 'resourceVersion');
      });

      it('non-zero: Exact', async () => {
        const res = await get(`${CMS}?resourceVersionMatch=Exact&resourceVersion=${r1}${limit}`);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.metadata.resourceVersion).to.equal(String(r1));
        expect(res.body.items[0].data).to.deep.equal({ v: '1' });
        if (limit) {
          expect(names(res)).to.deep.equal(['a', 'b']);
          expect(res.body.metadata.continue).to.be.a('string').and.not.equal('');
          expect(res.body.metadata.remainingItemCount).to.equal(1);
        } else {
          expect(names(res)).to.deep.equal(['a', 'b', 'c']);
          expect(res.body.metadata.continue ?? '').to.equal('');
        }
      });

      it('non-zero newer than the store: 504', async () => {
        await expectTooLarge(() => get(`${CMS}?resourceVersionMatch=Exact&resourceVersion=${future}${limit}`));
      });
    });

    describe(`list, resourceVersionMatch=NotOlderThan, ${limit ? 'limit=n' : 'limit unset'}`, () => {
      it('unset: 400 naming resourceVersionMatch and resourceVersion', async () => {
        expectBadParams(await get(`${CMS}?resourceVersionMatch=NotOlderThan${limit}`), 'resourceVersionMatch', 'resourceVersion');
      });

      it('0: Any', async () => {
        const res = await get(`${CMS}?resourceVersionMatch=NotOlderThan&resourceVersion=0${limit}`);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.kind).to.equal('ConfigMapList');
        if (limit) expect(res.body.items.length).to.be.at.most(2);
      });

      it('non-zero: NotOlderThan', async () => {
        const res = await get(`${CMS}?resourceVersionMatch=NotOlderThan&resourceVersion=${r1}${limit}`);
        expect(res.status, res.text).to.equal(200);
        expect(Number(res.body.metadata.resourceVersion)).to.be.at.least(r1);
        if (limit) expect(res.body.items.length).to.be.at.most(2);
      });

      it('non-zero newer than the store: 504', async () => {
        await expectTooLarge(() => get(`${CMS}?resourceVersionMatch=NotOlderThan&resourceVersion=${future}${limit}`));
      });
    });
  }

  describe('list parameters that are malformed', () => {
    it('an unknown resourceVersionMatch: 400 naming it', async () => {
      expectBadParams(await get(`${CMS}?resourceVersionMatch=Newest&resourceVersion=${r1}`), 'resourceVersionMatch');
    });

    it('a non-numeric resourceVersion or limit: 400', async () => {
      expectStatus(await get(`${CMS}?resourceVersion=abc`), 400, 'BadRequest');
      expectStatus(await get(`${CMS}?limit=abc`), 400, 'BadRequest');
    });
  });

  describe('watch', () => {
    it('non-zero: Start at Exact, no synthetic ADDED, only the changes after that version', async () => {
      const { status, events } = await c.watch(`${CMS}?watch=1&resourceVersion=${r1}&timeoutSeconds=2`, { timeoutMs: 10_000 });
      expect(status).to.equal(200);
      expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(['MODIFIED a', 'DELETED c']);
      expect(events[0].object.data).to.deep.equal({ v: '2' });
      expect(events[0].object.metadata.resourceVersion).to.equal(aV2);
    });

    it('0: Get State and Start at Any (synthetic ADDED; replaying the stream gives the current state)', async () => {
      const { status, events } = await c.watch(`${CMS}?watch=1&resourceVersion=0&timeoutSeconds=2`, { timeoutMs: 10_000 });
      expect(status).to.equal(200);
      expect(events[0]?.type).to.equal('ADDED');
      const state = new Map<string, any>();
      for (const e of events) {
        if (e.type === 'DELETED') state.delete(e.object.metadata.name);
        else state.set(e.object.metadata.name, e.object);
      }
      expect([...state.keys()].sort()).to.deep.equal(['a', 'b']);
      expect(state.get('a').data).to.deep.equal({ v: '2' });
    });

    it('unset: Get State and Start at Most Recent (synthetic ADDED of the current state, then live events)', async () => {
      let wrote = false;
      const { status, events } = await c.watch(`${CMS}?watch=1`, {
        timeoutMs: 10_000,
        until: (evs) => {
          if (evs.length === 2 && !wrote) { wrote = true; void c.request('POST', CMS, { body: cm('d') }); }
          return evs.length >= 3;
        },
      });
      expect(status).to.equal(200);
      expect(events.slice(0, 2).map((e) => `${e.type} ${e.object.metadata.name}`).sort()).to.deep.equal(['ADDED a', 'ADDED b']);
      expect(events[0].object.metadata.resourceVersion === aV2 || events[1].object.metadata.resourceVersion === aV2).to.equal(true);
      expect(`${events[2].type} ${events[2].object.metadata.name}`).to.equal('ADDED d');
      expect(Number(events[2].object.metadata.resourceVersion)).to.be.greaterThan(r2);
    });

    it('resourceVersionMatch without sendInitialEvents: 400 naming both', async () => {
      const res = await get(`${CMS}?watch=1&resourceVersionMatch=NotOlderThan&resourceVersion=${r1}`);
      expectBadParams(res, 'resourceVersionMatch', 'sendInitialEvents');
    });
  });

  describe('reads answered from the gateway\'s cache', () => {
    it('a consistent get and list see a write committed by another path (straight to storage) the moment it is acknowledged', async () => {
      expect((await get(CMS)).status).to.equal(200); // the collection is cached from its first read on
      await new Promise((resolve) => setTimeout(resolve, 300));
      const storage = new StorageClient(c.addresses.storage);
      try {
        for (let i = 0; i < 5; i++) {
          const name = `direct-${i}`;
          const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS, uid: `uid-${i}`, creationTimestamp: '2024-01-01T00:00:00Z' }, data: { i: String(i) } };
          const written = await storage.create(`core/configmaps/${NS}/${name}`, Buffer.from(JSON.stringify(obj)), obj.metadata.uid);
          const one = await get(`${CMS}/${name}`);
          expect(one.status, one.text).to.equal(200);
          expect(one.body.metadata.resourceVersion).to.equal(String(written.kv!.modRevision));
          const list = await get(CMS);
          expect(names(list)).to.include(name);
          expect(Number(list.body.metadata.resourceVersion)).to.be.at.least(written.kv!.modRevision);
        }
      } finally {
        storage.close();
      }
    });

    it('a consistent read does not answer from memory while the change stream lags: it reads storage', async () => {
      expect((await get(CMS)).status).to.equal(200);
      const storage = new StorageClient(c.addresses.storage);
      process.kill(c.pids().get('nats-server')!, 'SIGSTOP');
      try {
        const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'unpublished', namespace: NS, uid: 'uid-u', creationTimestamp: '2024-01-01T00:00:00Z' } };
        await storage.create(`core/configmaps/${NS}/unpublished`, Buffer.from(JSON.stringify(obj)), obj.metadata.uid);
        expect((await get(`${CMS}/unpublished`)).status).to.equal(200);
        expect(names(await get(CMS))).to.include('unpublished');
      } finally {
        process.kill(c.pids().get('nats-server')!, 'SIGCONT');
        storage.close();
      }
    });

    it('Exact at a version the collection changed after is the collection as it was then; at its current version, as it is', async () => {
      const before = await get(CMS);
      const rv = before.body.metadata.resourceVersion;
      expect((await c.request('POST', CMS, { body: cm('exact-later') })).status).to.equal(201);
      const then = await get(`${CMS}?resourceVersionMatch=Exact&resourceVersion=${rv}`);
      expect(then.status, then.text).to.equal(200);
      expect(then.body.metadata.resourceVersion).to.equal(rv);
      expect(names(then)).to.deep.equal(names(before));
      const now = await get(CMS);
      const exactNow = await get(`${CMS}?resourceVersionMatch=Exact&resourceVersion=${now.body.metadata.resourceVersion}`);
      expect(names(exactNow)).to.deep.equal(names(now));
      expect(names(exactNow)).to.include('exact-later');
    });
  });

  describe('after the history holding a version is compacted', () => {
    before(async () => {
      const storage = new StorageClient(c.addresses.storage);
      try {
        const { revision } = await storage.currentRevision();
        expect(revision).to.be.greaterThan(r1);
        await storage.compact(revision);
      } finally {
        storage.close();
      }
    });

    it('Exact (resourceVersionMatch=Exact, or limit with a version) answers 410 Gone, reason Expired', async () => {
      expectStatus(await get(`${CMS}?resourceVersionMatch=Exact&resourceVersion=${r1}`), 410, 'Expired');
      expectStatus(await get(`${CMS}?resourceVersion=${r1}&limit=2`), 410, 'Expired');
    });

    it('NotOlderThan (get and list) still answers a newer state', async () => {
      const list = await get(`${CMS}?resourceVersion=${r1}`);
      expect(list.status, list.text).to.equal(200);
      expect(Number(list.body.metadata.resourceVersion)).to.be.at.least(r2);
      const one = await get(`${CMS}/b?resourceVersion=${r1}`);
      expect(one.status, one.text).to.equal(200);
    });

    it('a watch from the compacted version answers 410 Gone, reason Expired', async () => {
      expectStatus(await get(`${CMS}?watch=1&resourceVersion=${r1}`), 410, 'Expired');
    });
  });
});
