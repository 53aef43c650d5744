import { expect } from 'chai';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { Decoder, Encoder } from 'cbor-x';
import { Cluster, waitFor } from '../lib/cluster.js';
import { group } from '../../internal/names/index.js';
import { pkiPaths } from '../../internal/pki/index.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7]);
const cbor = new Encoder({ useRecords: false, mapsAsObjects: true, variableMapSize: true });
const encode = (v: unknown) => Buffer.concat([SELF_DESCRIBED, cbor.encode(v)]);
const decode = (b: Buffer) => new Decoder({ useRecords: false, mapsAsObjects: true }).decode(b.subarray(3));

function raw(c: Cluster, method: string, path: string, headers: Record<string, string>, body?: Buffer, untilBytes = 0):
  Promise<{ status: number; type: string; body: Buffer }> {
  const p = pkiPaths(c.dataDir);
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port: c.port, method, path, headers, ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) }, (res) => {
      const chunks: Buffer[] = [];
      const done = () => { clearTimeout(timer); req.destroy(); resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks) }); };
      const timer = setTimeout(done, 10_000);
      res.on('data', (d) => { chunks.push(d); if (untilBytes && Buffer.concat(chunks).length >= untilBytes) done(); });
      res.on('end', done);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('CBOR (gate CBORServingAndStorage)', function () {
  this.timeout(60_000);

  describe('with the gate on', () => {
    let c: Cluster;
    before(async () => { c = await new Cluster({ flags: { gateway: ['--feature-gates=CBORServingAndStorage=true'] } }).start(); });
    after(async () => { await c?.stop(); });

    it('accepts a CBOR body and answers self-described CBOR', async () => {
      const res = await raw(c, 'POST', CMS, { 'Content-Type': 'application/cbor', Accept: 'application/cbor' },
        encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cbor1' }, data: { k: 'v' } }));
      expect(res.status).to.equal(201);
      expect(res.type).to.equal('application/cbor');
      expect(res.body.subarray(0, 3).equals(SELF_DESCRIBED)).to.equal(true);
      expect(decode(res.body)).to.deep.include({ kind: 'ConfigMap', data: { k: 'v' } });
    });

    it('accepts a server-side apply in CBOR', async () => {
      const config = encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cbor-applied' }, data: { k: 'applied' } });
      const res = await raw(c, 'PATCH', `${CMS}/cbor-applied?fieldManager=cbor-client`, { 'Content-Type': 'application/apply-patch+cbor', Accept: 'application/json' }, config);
      expect(res.status).to.equal(201);
      const obj = JSON.parse(res.body.toString('utf8'));
      expect(obj.data).to.deep.equal({ k: 'applied' });
      expect(obj.metadata.managedFields[0]).to.include({ manager: 'cbor-client', operation: 'Apply' });
    });

    it('serves a custom kind in CBOR: a CBOR body and apply, a CBOR answer', async () => {
      const crd = {
        apiVersion: `${group('apiextensions')}/v1`, kind: 'CustomResourceDefinition', metadata: { name: 'knobs.cbor.example.com' },
        spec: {
          group: 'cbor.example.com', scope: 'Namespaced', names: { plural: 'knobs', singular: 'knob', kind: 'Knob', listKind: 'KnobList' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { turn: { type: 'integer' } } } } } } }],
        },
      };
      expect((await c.request('POST', `/apis/${group('apiextensions')}/v1/customresourcedefinitions`, { body: crd })).status).to.equal(201);
      const KNOBS = '/apis/cbor.example.com/v1/namespaces/default/knobs';
      expect(await waitFor(async () => (await c.request('GET', KNOBS)).status === 200, 10_000)).to.equal(true);
      const created = await raw(c, 'POST', KNOBS, { 'Content-Type': 'application/cbor', Accept: 'application/cbor' },
        encode({ apiVersion: 'cbor.example.com/v1', kind: 'Knob', metadata: { name: 'k1' }, spec: { turn: 3 } }));
      expect(created.status).to.equal(201);
      expect(created.type).to.equal('application/cbor');
      expect(decode(created.body)).to.deep.include({ kind: 'Knob', spec: { turn: 3 } });
      const applied = await raw(c, 'PATCH', `${KNOBS}/k2?fieldManager=cbor-client`, { 'Content-Type': 'application/apply-patch+cbor', Accept: 'application/json' },
        encode({ apiVersion: 'cbor.example.com/v1', kind: 'Knob', metadata: { name: 'k2' }, spec: { turn: 5 } }));
      expect(applied.status).to.equal(201);
      expect(JSON.parse(applied.body.toString('utf8')).spec).to.deep.equal({ turn: 5 });
    });

    it('streams a watch as a CBOR sequence', async () => {
      const rv = (await c.request('GET', CMS)).body.metadata.resourceVersion;
      const watching = raw(c, 'GET', `${CMS}?watch=1&resourceVersion=${rv}`, { Accept: 'application/cbor' }, undefined, 50);
      await new Promise((r) => setTimeout(r, 300));
      await c.request('POST', CMS, { body: { metadata: { name: 'cbor-watched' } } });
      const res = await watching;
      expect(res.type).to.equal('application/cbor-seq');
      const event = decode(res.body);
      expect(event.type).to.equal('ADDED');
      expect(event.object.metadata.name).to.equal('cbor-watched');
    });

    it('answers through an upstream group name in that spelling', async () => {
      const CR = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
      const created = await raw(c, 'POST', CR, { 'Content-Type': 'application/cbor', Accept: 'application/cbor' },
        encode({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'cbor-aliased' }, rules: [{ apiGroups: ['storage.k8s.io'], resources: ['csidrivers'], verbs: ['get'] }] }));
      expect(created.status).to.equal(201);
      const obj = decode(created.body);
      expect(obj.apiVersion).to.equal('rbac.authorization.k8s.io/v1');
      expect(obj.rules[0].apiGroups).to.deep.equal(['storage.k8s.io']);
      const missing = await raw(c, 'GET', `${CR}/missing`, { Accept: 'application/cbor' });
      expect(missing.status).to.equal(404);
      expect(decode(missing.body).details.group).to.equal('rbac.authorization.k8s.io');
    });

    it('answers metadata only in CBOR: one object, a list and watch events', async () => {
      const as = (view: string) => ({ Accept: `application/cbor;as=${view};g=meta.k8s.io;v=v1` });
      const one = await raw(c, 'GET', `${CMS}/cbor1`, as('PartialObjectMetadata'));
      expect(one.status).to.equal(200);
      expect(one.type).to.equal('application/cbor');
      const obj = decode(one.body);
      expect(obj).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
      expect(obj.metadata.name).to.equal('cbor1');
      expect(obj).to.not.have.property('data');
      const list = decode((await raw(c, 'GET', CMS, as('PartialObjectMetadataList'))).body);
      expect(list).to.include({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1' });
      expect(list.items.map((o: any) => o.metadata.name)).to.include('cbor1');
      const rv = list.metadata.resourceVersion;
      const watching = raw(c, 'GET', `${CMS}?watch=1&resourceVersion=${rv}`, as('PartialObjectMetadata'), undefined, 50);
      await new Promise((r) => setTimeout(r, 300));
      await c.request('POST', CMS, { body: { metadata: { name: 'cbor-meta-watched' }, data: { k: 'v' } } });
      const event = decode((await watching).body);
      expect(event.type).to.equal('ADDED');
      expect(event.object).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
      expect(event.object.metadata.name).to.equal('cbor-meta-watched');
      expect(event.object).to.not.have.property('data');
    });
  });

  describe('with the gate off (default)', () => {
    let c: Cluster;
    before(async () => { c = await new Cluster().start(); });
    after(async () => { await c?.stop(); });

    it('answers 406 to a client that accepts only CBOR and 415 to a CBOR body', async () => {
      const get = await c.request('GET', CMS, { headers: { Accept: 'application/cbor' } });
      expect(get.status).to.equal(406);
      expect(get.body.reason).to.equal('NotAcceptable');
      const post = await c.request('POST', CMS, { body: encode({ metadata: { name: 'x' } }), headers: { 'Content-Type': 'application/cbor' } });
      expect(post.status).to.equal(415);
      expect(post.body.reason).to.equal('UnsupportedMediaType');
      const apply = await c.request('PATCH', `${CMS}/x?fieldManager=m`, { body: encode({ metadata: { name: 'x' } }), headers: { 'Content-Type': 'application/apply-patch+cbor' } });
      expect(apply.status).to.equal(415);
      const view = await c.request('GET', CMS, { headers: { Accept: 'application/cbor;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' } });
      expect(view.status).to.equal(406);
    });
  });
});
