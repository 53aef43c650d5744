import { expect } from 'chai';
import type { IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { Cluster } from '../lib/cluster.js';
import { decodeEnvelope, decodeWatchEvents, encodeEnvelope } from '../../internal/apimachinery/protobuf/index.js';

const PB = 'application/vnd.svc.protobuf';
const UPSTREAM_PB = 'application/vnd.kubernetes.protobuf';
const CMS = '/api/v1/namespaces/default/configmaps';

describe('Protobuf through the gateway', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('accepts a Protobuf create body and answers Protobuf in the spelling asked for', async () => {
    const body = encodeEnvelope({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pb1' }, data: { k: 'v' } });
    const res = await c.request('POST', CMS, { body, headers: { 'Content-Type': UPSTREAM_PB, Accept: UPSTREAM_PB } });
    expect(res.status).to.equal(201);
    expect(res.headers['content-type']).to.equal(UPSTREAM_PB);
    const raw = await rawGet(c, `${CMS}/pb1`, PB);
    expect(raw.type).to.equal(PB);
    const obj = decodeEnvelope(raw.body);
    expect(obj).to.deep.include({ apiVersion: 'v1', kind: 'ConfigMap', data: { k: 'v' } });
  });

  it('answers errors as a Protobuf Status when Protobuf is asked for', async () => {
    const raw = await rawGet(c, `${CMS}/missing`, PB);
    expect(raw.status).to.equal(404);
    expect(decodeEnvelope(raw.body)).to.deep.include({ kind: 'Status', reason: 'NotFound', code: 404 });
  });

  it('answers 400 for a malformed Protobuf body', async () => {
    const res = await c.request('POST', CMS, { body: Buffer.from('not protobuf'), headers: { 'Content-Type': PB } });
    expect(res.status).to.equal(400);
    expect(res.body.reason).to.equal('BadRequest');
  });

  it('a kind without a Protobuf form answers 406 to Protobuf alone and JSON when JSON is accepted too', async () => {
    const only = await rawGet(c, '/apis/apiregistration.svc.io/v1/apiservices', PB);
    expect(only.status).to.equal(406);
    expect(decodeEnvelope(only.body)).to.deep.include({ kind: 'Status', reason: 'NotAcceptable', code: 406 });
    const both = await c.request('GET', '/apis/apiregistration.svc.io/v1/apiservices', { headers: { Accept: `${PB}, application/json` } });
    expect(both.status).to.equal(200);
    expect(both.headers['content-type']).to.contain('application/json');
    expect(both.body.kind).to.equal('APIServiceList');
  });

  it('streams watch events as length-prefixed WatchEvent frames', async () => {
    const rv = (await c.request('GET', CMS)).body.metadata.resourceVersion;
    const frames = rawWatch(c, `${CMS}?watch=1&resourceVersion=${rv}`, PB, 1);
    await new Promise((r) => setTimeout(r, 300));
    await c.request('POST', CMS, { body: { metadata: { name: 'pb-watched' } } });
    const { type, buffer } = await frames;
    expect(type).to.equal(`${PB};stream=watch`);
    const { events } = decodeWatchEvents(buffer);
    expect(events[0].type).to.equal('ADDED');
    expect((events[0].object as any).metadata.name).to.equal('pb-watched');
  });
  it('a list larger than a written piece is the whole list encoded at once, with its length, from the cache too, and gzip-encoded when accepted', async () => {
    const ns = '/api/v1/namespaces/pb-large';
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'pb-large' } } })).status).to.equal(201);
    // 60 ConfigMaps of ~5 KB: about 300 KB, three pieces of 128 KiB, items straddling them.
    for (let i = 0; i < 60; i++) {
      const created = await c.request('POST', `${ns}/configmaps`, { body: { metadata: { name: `big-${i}` }, data: { v: 'x'.repeat(5_000 + i) } } });
      expect(created.status, created.text).to.equal(201);
    }
    const json = await c.request('GET', `${ns}/configmaps`);
    expect(json.body.items).to.have.length(60);
    const expected = encodeEnvelope({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: json.body.metadata, items: json.body.items });
    expect(expected.length).to.be.greaterThan(2 * 128 * 1024);
    for (let round = 0; round < 2; round++) { // the second from the encoded items kept by the first
      const list = await rawGet(c, `${ns}/configmaps`, PB);
      expect(list.status).to.equal(200);
      expect(list.type).to.equal(PB);
      expect(list.headers['content-length']).to.equal(String(expected.length));
      expect(list.body.equals(expected)).to.equal(true);
    }
    const gzipped = await rawGet(c, `${ns}/configmaps`, PB, { 'Accept-Encoding': 'gzip' });
    expect(gzipped.headers['content-encoding']).to.equal('gzip');
    expect(gzipped.headers['content-length']).to.equal(undefined);
    expect(gunzipSync(gzipped.body).equals(expected)).to.equal(true);
  });
  it('answers through an upstream group name in that spelling: object, list, watch and Status', async () => {
    const CR = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'pb-aliased' }, rules: [{ apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: ['get'] }] };
    expect((await c.request('POST', CR, { body: role })).status).to.equal(201);
    const obj = decodeEnvelope((await rawGet(c, `${CR}/pb-aliased`, UPSTREAM_PB)).body) as any;
    expect(obj.apiVersion).to.equal('rbac.authorization.k8s.io/v1');
    expect(obj.rules[0].apiGroups).to.deep.equal(['networking.k8s.io']);
    const list = decodeEnvelope((await rawGet(c, CR, UPSTREAM_PB)).body) as any;
    expect(list).to.include({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleList' });
    const missing = await rawGet(c, `${CR}/missing`, UPSTREAM_PB);
    expect(missing.status).to.equal(404);
    expect((decodeEnvelope(missing.body) as any).details.group).to.equal('rbac.authorization.k8s.io');
    const { events } = decodeWatchEvents((await rawWatch(c, `${CR}?watch=1&fieldSelector=metadata.name%3Dpb-aliased`, UPSTREAM_PB, 1)).buffer);
    expect((events[0].object as any).apiVersion).to.equal('rbac.authorization.k8s.io/v1');
  });
});

async function rawGet(c: Cluster, path: string, accept: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; headers: IncomingHttpHeaders; body: Buffer }> {
  const https = await import('node:https');
  const { readFileSync } = await import('node:fs');
  const { pkiPaths } = await import('../../internal/pki/index.js');
  const p = pkiPaths(c.dataDir);
  return new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', port: c.port, path, headers: { Accept: accept, ...headers }, ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

/** Reads a Protobuf watch until `count` frames arrived (or 10 s passed). */
async function rawWatch(c: Cluster, path: string, accept: string, count: number): Promise<{ type: string; buffer: Buffer }> {
  const https = await import('node:https');
  const { readFileSync } = await import('node:fs');
  const { pkiPaths } = await import('../../internal/pki/index.js');
  const p = pkiPaths(c.dataDir);
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port: c.port, path, headers: { Accept: accept }, ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) }, (res) => {
      let buffer = Buffer.alloc(0);
      const done = () => { clearTimeout(timer); req.destroy(); resolve({ type: String(res.headers['content-type']), buffer }); };
      const timer = setTimeout(done, 10_000);
      res.on('data', (d) => {
        buffer = Buffer.concat([buffer, d]);
        if (decodeWatchEvents(buffer).events.length >= count) done();
      });
    });
    req.on('error', reject);
  });
}
