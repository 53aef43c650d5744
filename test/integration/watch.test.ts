import { expect } from 'chai';
import https from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, waitFor } from '../lib/cluster.js';
import { pkiPaths } from '../../internal/pki/index.js';

const cm = (name: string, v = '1') => ({ metadata: { name }, data: { v } });
const CMS = '/api/v1/namespaces/default/configmaps';

describe('watch: chunked events fed by NATS', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('streams ADDED, MODIFIED and DELETED after a resourceVersion, with objects of the kind', async () => {
    const list = await c.request('GET', CMS);
    const rv = list.body.metadata.resourceVersion;
    const watching = c.watch(`${CMS}?watch=1&resourceVersion=${rv}`, { until: (e) => e.length >= 3 });
    await new Promise((r) => setTimeout(r, 200));
    const created = await c.request('POST', CMS, { body: cm('w1') });
    await c.request('PUT', `${CMS}/w1`, { body: { ...created.body, data: { v: '2' } } });
    await c.request('DELETE', `${CMS}/w1`);
    const { status, events } = await watching;
    expect(status).to.equal(200);
    expect(events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED']);
    expect(events[0].object).to.include({ kind: 'ConfigMap', apiVersion: 'v1' });
    expect(events[1].object.data).to.deep.equal({ v: '2' });
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
    expect(rvs).to.deep.equal([...rvs].sort((a, b) => a - b));
  });

  it('resumes from a resourceVersion with every later change exactly once, in order', async () => {
    const start = (await c.request('GET', CMS)).body.metadata.resourceVersion;
    // Changes made while nobody watches come from history; later ones arrive live.
    for (let i = 0; i < 5; i++) await c.request('POST', CMS, { body: cm(`r${i}`) });
    const watching = c.watch(`${CMS}?watch=true&resourceVersion=${start}`, { until: (e) => e.length >= 10, timeoutMs: 15_000 });
    const writes = Array.from({ length: 5 }, (_, i) => c.request('POST', CMS, { body: cm(`r${i + 5}`) }));
    await Promise.all(writes);
    const { events } = await watching;
    const names = events.map((e) => e.object.metadata.name);
    expect(names.slice(0, 5)).to.deep.equal(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(new Set(names).size).to.equal(10);
    expect(names.length).to.equal(10);
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
    expect(rvs).to.deep.equal([...rvs].sort((a, b) => a - b));
  });

  it('without a resourceVersion starts with the current state as ADDED events', async () => {
    const { events } = await c.watch(`${CMS}?watch=1&labelSelector=`, { until: (e) => e.length >= 10 });
    expect(events.every((e) => e.type === 'ADDED')).to.equal(true);
    expect(events.map((e) => e.object.metadata.name)).to.include.members(['r0', 'r9']);
  });

  it('watches a single object through fieldSelector=metadata.name', async () => {
    const rv = (await c.request('GET', CMS)).body.metadata.resourceVersion;
    const watching = c.watch(`${CMS}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dr3`, { until: (e) => e.length >= 1 });
    await new Promise((r) => setTimeout(r, 200));
    await c.request('DELETE', `${CMS}/r2`);
    await c.request('DELETE', `${CMS}/r3`);
    const { events } = await watching;
    expect(events).to.have.length(1);
    expect(events[0]).to.deep.include({ type: 'DELETED' });
    expect(events[0].object.metadata.name).to.equal('r3');
  });

  it('as PartialObjectMetadata: initial state, bookmark and live changes carry metadata only, in each watcher\'s spelling', async () => {
    const accept = (g: string) => ({ Accept: `application/json;as=PartialObjectMetadata;g=${g};v=v1` });
    const path = `${CMS}?watch=1&labelSelector=view%3Dmeta&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`;
    await c.request('POST', CMS, { body: { metadata: { name: 'm0', labels: { view: 'meta' } }, data: { v: '0' } } });
    // Two watchers of the same changes in the two spellings: each event is encoded once per form, not shared across them.
    const done = (e: any[]) => e.some((x) => x.type === 'DELETED');
    const watchers = ['meta.svc.io', 'meta.k8s.io'].map((g) => c.watch(path, { headers: accept(g), until: done, timeoutMs: 15_000 }));
    await new Promise((r) => setTimeout(r, 300));
    const created = await c.request('POST', CMS, { body: { metadata: { name: 'm1', labels: { view: 'meta' } }, data: { v: '1' } } });
    await c.request('PUT', `${CMS}/m1`, { body: { ...created.body, data: { v: '2' } } });
    await c.request('DELETE', `${CMS}/m1`);
    for (const [i, g] of ['meta.svc.io', 'meta.k8s.io'].entries()) {
      const { status, events } = await watchers[i];
      expect(status).to.equal(200);
      expect(events.map((e) => [e.type, e.object.metadata.name ?? ''])).to.deep.equal([
        ['ADDED', 'm0'], ['BOOKMARK', ''], ['ADDED', 'm1'], ['MODIFIED', 'm1'], ['DELETED', 'm1']]);
      for (const e of events) expect(e.object).to.include({ kind: 'PartialObjectMetadata', apiVersion: `${g}/v1` }).and.not.have.property('data');
      expect(events[1].object.metadata.annotations).to.deep.equal({ 'svc.io/initial-events-end': 'true' });
    }
  });

  it('without a selector, sends the objects and their metadata as a write answers them, byte for byte', async () => {
    const rv = (await c.request('GET', CMS)).body.metadata.resourceVersion;
    const metadata = { Accept: 'application/json;as=PartialObjectMetadata;g=meta.svc.io;v=v1' };
    const until = (e: any[]) => e.length >= 2;
    const [objects, metas] = [{}, metadata].map((headers) => c.watch(`${CMS}?watch=1&resourceVersion=${rv}`, { headers, until, timeoutMs: 15_000 }));
    await new Promise((r) => setTimeout(r, 300));
    // Characters the platform's encoder escapes, and others beyond ASCII, before the metadata, in it and after it.
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'text', annotations: { a: '<é&>\u2028' } }, data: { k: 'é>' } };
    const created = await c.request('POST', CMS, { body });
    const updated = await c.request('PUT', `${CMS}/text`, { body: { ...created.body, data: { k: '<ü' } } });
    const asMetadata = await c.request('GET', `${CMS}/text`, { headers: metadata });
    const [o, m] = await Promise.all([objects, metas]);
    expect(o.lines).to.deep.equal([`{"type":"ADDED","object":${created.text.trimEnd()}}`, `{"type":"MODIFIED","object":${updated.text.trimEnd()}}`]);
    expect(m.lines[1]).to.equal(`{"type":"MODIFIED","object":${asMetadata.text.trimEnd()}}`);
    expect(m.events[0].object.metadata).to.deep.equal(created.body.metadata);
    // A new watch's initial state: the object as it is now.
    const named = (e: any) => e.object?.metadata?.name === 'text';
    const initial = await c.watch(`${CMS}?watch=1`, { until: (e) => e.some(named), timeoutMs: 15_000 });
    expect(initial.lines[initial.events.findIndex(named)]).to.equal(`{"type":"ADDED","object":${updated.text.trimEnd()}}`);
    await c.request('DELETE', `${CMS}/text`);
  });

  it('ends the stream after timeoutSeconds', async () => {
    const started = Date.now();
    const { ended, status } = await c.watch(`${CMS}?watch=1&timeoutSeconds=1`, { timeoutMs: 10_000 });
    expect(status).to.equal(200);
    expect(ended).to.equal(true);
    expect(Date.now() - started).to.be.lessThan(8000);
  });

  it('ends a watcher that stops reading with a 410 ERROR event, while another keeps receiving every event', async function () {
    this.timeout(120_000);
    const rv = (await c.request('GET', CMS)).body.metadata.resourceVersion;
    const stalled = await openUnread(c, `${CMS}?watch=1&resourceVersion=${rv}`);
    const healthy = c.watch(`${CMS}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dstall`, { until: (e) => e.at(-1)?.object.data.n === 'last', timeoutMs: 90_000 });
    const ended = async () => /apiserver_terminated_watchers_total\{resource="configmaps"\} [1-9]/.test((await c.request('GET', '/metrics')).text);
    // Events of 200 kB fill what the sockets hold within a few MB; the watcher is let go within seconds after.
    const big = 'x'.repeat(200_000);
    let writes = 0;
    const deadline = Date.now() + 60_000;
    while (writes < 200 && Date.now() < deadline && !(await ended())) {
      const res = writes === 0 ? await c.request('POST', CMS, { body: { metadata: { name: 'stall' }, data: { v: big } } })
        : await c.request('PUT', `${CMS}/stall`, { body: { metadata: { name: 'stall' }, data: { v: big, n: String(writes) } } });
      expect(res.status).to.be.oneOf([200, 201]);
      writes++;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await ended(), `the stalled watcher is ended within ${writes} writes`).to.equal(true);
    await c.request('PUT', `${CMS}/stall`, { body: { metadata: { name: 'stall' }, data: { n: 'last' } } });
    const received = await healthy;
    expect(received.ended).to.equal(false);
    expect(received.events.map((e) => e.object.data.n ?? '0')).to.deep.equal([...Array.from({ length: writes }, (_, i) => String(i)), 'last']);
    const last = await stalled.readToEnd(20_000);
    expect(last).to.deep.include({ type: 'ERROR' });
    expect(last.object).to.include({ kind: 'Status', code: 410, reason: 'Expired' });
  });

  it('answers 410 Gone with reason Expired for a compacted resourceVersion', async () => {
    const { revision } = await compactNow(c);
    expect(revision).to.be.greaterThan(2);
    const res = await c.request('GET', `${CMS}?watch=1&resourceVersion=1`);
    expect(res.status).to.equal(410);
    expect(res.body).to.include({ kind: 'Status', reason: 'Expired', code: 410 });
  });
});

/** A watch whose events are left unread until readToEnd, which reads them all and resolves with the last one
 * once the server ends the stream (undefined if it does not within timeoutMs). */
function openUnread(c: Cluster, path: string): Promise<{ readToEnd(timeoutMs: number): Promise<any> }> {
  const p = pkiPaths(c.dataDir);
  const tls = { ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) };
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: c.port, method: 'GET', path, ...tls }, (res) => {
      res.pause();
      resolve({
        readToEnd: (timeoutMs) => new Promise((done) => {
          let tail = '';
          const timer = setTimeout(() => { req.destroy(); done(undefined); }, timeoutMs);
          res.on('data', (chunk: Buffer) => { tail = (tail + chunk.toString()).slice(-4096); });
          res.on('end', () => {
            clearTimeout(timer);
            const lines = tail.trim().split('\n');
            done(JSON.parse(lines[lines.length - 1]));
          });
          res.resume();
        }),
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Compacts storage history up to its current revision through the storage gRPC API. */
async function compactNow(c: Cluster): Promise<{ revision: number }> {
  const { StorageClient } = await import('../../internal/storage/client.js');
  const storage = new StorageClient(c.addresses.storage);
  try {
    const { revision } = await storage.currentRevision();
    await storage.compact(revision);
    return { revision };
  } finally {
    storage.close();
  }
}

describe('failure and restart', function () {
  this.timeout(90_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('killing storage ends open watches with an ERROR event, requests get 503 until it is back', async () => {
    await c.request('POST', CMS, { body: cm('before-crash') });
    const rv = (await c.request('GET', CMS)).body.metadata.resourceVersion;
    const watching = c.watch(`${CMS}?watch=1&resourceVersion=${rv}`, { timeoutMs: 15_000 });
    await new Promise((r) => setTimeout(r, 300));
    await c.kill('storage');
    const { events, ended } = await watching;
    expect(ended).to.equal(true);
    expect(events.at(-1)?.type).to.equal('ERROR');
    expect(events.at(-1)?.object).to.include({ kind: 'Status', code: 503 });
    const down = await c.request('GET', `${CMS}/before-crash`);
    expect(down.status).to.equal(503);
    expect(down.body.reason).to.equal('ServiceUnavailable');
    await c.startService('storage');
    expect(await waitFor(async () => (await c.request('GET', `${CMS}/before-crash`)).status === 200, 15_000)).to.equal(true);
    // Watches are refused (503) until the gateway trusts the event stream again, then resume from the last version.
    expect(await waitFor(async () => (await c.watch(`${CMS}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`)).status === 200, 15_000)).to.equal(true);
    const resumed = c.watch(`${CMS}?watch=1&resourceVersion=${rv}`, { until: (e) => e.length >= 1, timeoutMs: 15_000 });
    await new Promise((r) => setTimeout(r, 200));
    expect((await c.request('POST', CMS, { body: cm('after-crash') })).status).to.equal(201);
    const { status, events: later } = await resumed;
    expect(status).to.equal(200);
    expect(later[0]?.type).to.equal('ADDED');
    expect(later[0]?.object.metadata.name).to.equal('after-crash');
  });

});

describe('full restart', function () {
  this.timeout(90_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-restart-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('keeps every object and continues the revision sequence', async () => {
    const first = await new Cluster({ dataDir }).start();
    let created: any;
    let listRv = 0;
    try {
      created = (await first.request('POST', CMS, { body: cm('persist') })).body;
      listRv = Number((await first.request('GET', CMS)).body.metadata.resourceVersion);
    } finally {
      await first.stop();
    }
    const second = await new Cluster({ dataDir }).start();
    try {
      const got = await second.request('GET', `${CMS}/persist`);
      expect(got.status).to.equal(200);
      expect(got.body.metadata.uid).to.equal(created.metadata.uid);
      expect(got.body.metadata.resourceVersion).to.equal(created.metadata.resourceVersion);
      const next = await second.request('POST', CMS, { body: cm('after-restart') });
      expect(Number(next.body.metadata.resourceVersion)).to.be.greaterThan(listRv);
    } finally {
      await second.stop();
    }
  });
});
