// Document 1, "Media types and content negotiation" and "Table representation": Accept
// lists with q-values, 406, JSON/YAML bodies, Tables, pretty, gzip, 415 and 413.
import { expect } from 'chai';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import YAML from 'yaml';
import { Cluster } from '../lib/cluster.js';
import { pkiPaths } from '../../internal/pki/index.js';
import { builtinRegistry } from '../../internal/registry/index.js';
import { decodeEnvelope, decodeWatchEvents } from '../../internal/apimachinery/protobuf/index.js';

const NS = 'media';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const TABLE = 'application/json;as=Table;g=meta.svc.io;v=v1';
const MiB = 1024 * 1024;

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
}

/** One HTTPS request as admin returning the undecoded bytes. */
function raw(c: Cluster, method: string, path: string, opts: { body?: Buffer | string; headers?: Record<string, string> } = {}): Promise<RawAnswer> {
  const p = pkiPaths(c.dataDir);
  const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = https.request({
      host: '127.0.0.1', port: c.port, method, path, ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey),
      headers: { ...(body ? { 'Content-Length': String(body.length) } : {}), ...opts.headers }, timeout: 30_000,
    }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, raw: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    // A server may stop reading a body it refuses; the answer it already sent still counts.
    req.on('error', (err) => { if (!answered) reject(err); });
    req.end(body);
  });
}

const contentType = (h: RawAnswer['headers'] | Record<string, unknown>) => String(h['content-type'] ?? '').split(';')[0].trim();

describe('protocol: media types and content negotiation', function () {
  this.timeout(60_000);
  let c: Cluster;

  before(async () => {
    c = await new Cluster().start();
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).to.equal(201);
    for (const [name, data] of [['one', { a: '1' }], ['two', { a: '1', b: '2' }]] as const) {
      expect((await c.request('POST', CMS, { body: { metadata: { name, labels: { set: 'first' } }, data } })).status).to.equal(201);
    }
  });
  after(async () => { await c?.stop(); });

  describe('Accept', () => {
    const cases: Array<[string, string]> = [
      ['application/yaml;q=0.5, application/json;q=0.9', 'application/json'],
      ['application/json;q=0.1, application/yaml', 'application/yaml'],
      ['text/html, application/yaml, application/json', 'application/yaml'],
      ['text/plain;q=1, application/json;q=0.5', 'application/json'],
      ['application/json; charset=utf-8', 'application/json'],
      ['*/*', 'application/json'],
      ['application/*', 'application/json'],
      ['', 'application/json'],
    ];
    for (const [accept, expected] of cases) {
      it(`"${accept}" answers ${expected}`, async () => {
        const res = await c.request('GET', `${CMS}/one`, { headers: accept ? { Accept: accept } : {} });
        expect(res.status, res.text).to.equal(200);
        expect(contentType(res.headers)).to.equal(expected);
        const obj = expected === 'application/yaml' ? YAML.parse(res.text) : JSON.parse(res.text);
        expect(obj).to.include({ kind: 'ConfigMap', apiVersion: 'v1' });
        expect(obj.data).to.deep.equal({ a: '1' });
      });
    }

    for (const accept of ['text/csv', 'text/html, image/png', 'application/json;q=0', 'application/xml;q=1, text/plain;q=0.5']) {
      it(`"${accept}" answers 406 NotAcceptable`, async () => {
        const res = await c.request('GET', `${CMS}/one`, { headers: { Accept: accept } });
        expect(res.status, res.text).to.equal(406);
        expect(res.body).to.include({ kind: 'Status', reason: 'NotAcceptable', code: 406 });
      });
    }

    it('a list in YAML is a <Kind>List', async () => {
      const res = await c.request('GET', CMS, { headers: { Accept: 'application/yaml' } });
      expect(contentType(res.headers)).to.equal('application/yaml');
      const list = YAML.parse(res.text);
      expect(list).to.include({ kind: 'ConfigMapList', apiVersion: 'v1' });
      expect(list.items.map((i: any) => i.metadata.name)).to.deep.equal(['one', 'two']);
    });

    it('an error is a Status in the accepted type', async () => {
      const res = await c.request('GET', `${CMS}/missing`, { headers: { Accept: 'application/yaml' } });
      expect(res.status).to.equal(404);
      expect(contentType(res.headers)).to.equal('application/yaml');
      expect(YAML.parse(res.text)).to.include({ kind: 'Status', reason: 'NotFound', code: 404 });
    });
  });

  describe('request bodies', () => {
    it('a YAML body with Content-Type application/yaml, answered in JSON', async () => {
      const body = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: "v"\n';
      const res = await c.request('POST', CMS, { body, headers: { 'Content-Type': 'application/yaml', Accept: 'application/json' } });
      expect(res.status, res.text).to.equal(201);
      expect(contentType(res.headers)).to.equal('application/json');
      expect(res.body.data).to.deep.equal({ k: 'v' });
    });

    it('a JSON body answered in YAML', async () => {
      const res = await c.request('POST', CMS, { body: { metadata: { name: 'to-yaml' }, data: { k: 'v' } }, headers: { Accept: 'application/yaml' } });
      expect(res.status, res.text).to.equal(201);
      expect(contentType(res.headers)).to.equal('application/yaml');
      expect(YAML.parse(res.text).metadata.name).to.equal('to-yaml');
    });

    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
      it(`Content-Type ${type}: 415 UnsupportedMediaType`, async () => {
        const res = await c.request('POST', CMS, { body: '{"metadata":{"name":"nope"}}', headers: { 'Content-Type': type } });
        expect(res.status, res.text).to.equal(415);
        expect(res.body).to.include({ kind: 'Status', reason: 'UnsupportedMediaType', code: 415 });
        expect((await c.request('GET', `${CMS}/nope`)).status).to.equal(404);
      });
    }

    it('PATCH with a non-patch Content-Type: 415', async () => {
      const res = await c.request('PATCH', `${CMS}/one`, { body: { data: { a: '9' } }, headers: { 'Content-Type': 'application/json' } });
      expect(res.status, res.text).to.equal(415);
      expect(res.body.reason).to.equal('UnsupportedMediaType');
    });

    it('a body over 3 MiB: 413 RequestEntityTooLarge; one just under is read', async () => {
      const big = JSON.stringify({ metadata: { name: 'huge' }, data: { a: 'x'.repeat(3 * MiB + 1024) } });
      const res = await raw(c, 'POST', CMS, { body: big, headers: { 'Content-Type': 'application/json' } });
      expect(res.status, res.raw.toString().slice(0, 300)).to.equal(413);
      expect(JSON.parse(res.raw.toString())).to.include({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
      expect((await c.request('GET', `${CMS}/huge`)).status).to.equal(404);

      const object = JSON.stringify({ metadata: { name: 'padded' }, data: { a: '1' } });
      const padded = object.slice(0, -1) + ' '.repeat(3 * MiB - 4096 - object.length) + '}';
      const ok = await raw(c, 'POST', CMS, { body: padded, headers: { 'Content-Type': 'application/json' } });
      expect(ok.status, ok.raw.toString().slice(0, 300)).to.equal(201);
    });
  });

  describe('Table', () => {
    it('configmaps: meta.svc.io/v1 Table with the kind\'s columns and one row per object', async () => {
      const res = await c.request('GET', CMS, { headers: { Accept: TABLE } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ kind: 'Table', apiVersion: 'meta.svc.io/v1' });
      expect(res.body.columnDefinitions.map((d: any) => [d.name, d.type])).to.deep.equal([['Name', 'string'], ['Data', 'integer'], ['Age', 'string']]);
      const rows = res.body.rows.filter((r: any) => ['one', 'two'].includes(r.cells[0]));
      expect(rows.map((r: any) => r.cells.slice(0, 2))).to.deep.equal([['one', 1], ['two', 2]]);
      expect(res.body.metadata.resourceVersion).to.match(/^\d+$/);
    });

    it('a single object as a one-row Table', async () => {
      const res = await c.request('GET', `${CMS}/two`, { headers: { Accept: TABLE } });
      expect(res.body.kind).to.equal('Table');
      expect(res.body.rows).to.have.length(1);
      expect(res.body.rows[0].cells[0]).to.equal('two');
    });

    it('every served kind: the columns the registry declares, else Name and Created At', async () => {
      const registry = builtinRegistry();
      const groupVersions = ['/api/v1'];
      const groups = (await c.request('GET', '/apis')).body.groups ?? [];
      // The upstream spellings of renamed groups serve the same kinds: ours are checked.
      for (const g of groups.filter((x: { name: string }) => !x.name.endsWith('.k8s.io'))) for (const v of g.versions) groupVersions.push(`/apis/${v.groupVersion}`);
      let checked = 0;
      for (const gv of groupVersions) {
        const list = (await c.request('GET', gv)).body;
        const [group, version] = gv === '/api/v1' ? ['', 'v1'] : gv.slice('/apis/'.length).split('/');
        for (const r of list.resources ?? []) {
          if (r.name.includes('/') || !r.verbs.includes('list')) continue;
          const def = registry.lookup(group, version, r.name);
          expect(def, `${gv}/${r.name} in the registry`).to.not.equal(undefined);
          const res = await c.request('GET', `${gv}/${r.name}`, { headers: { Accept: `${TABLE}, application/json` } });
          expect(res.status, `${gv}/${r.name}: ${res.text.slice(0, 200)}`).to.equal(200);
          expect(res.body.kind, `${gv}/${r.name}`).to.equal('Table');
          const expected = def!.tableColumns ? def!.tableColumns.map((col) => [col.name, col.type]) : [['Name', 'string'], ['Created At', 'date']];
          expect(res.body.columnDefinitions.map((d: any) => [d.name, d.type]), `${gv}/${r.name}`).to.deep.equal(expected);
          for (const row of res.body.rows) {
            expect(row.cells, `${gv}/${r.name}`).to.have.length(expected.length);
            if (!def!.tableColumns) {
              expect(row.cells[0]).to.equal(row.object.metadata.name);
              expect(row.cells[1]).to.equal(row.object.metadata.creationTimestamp);
            }
          }
          checked++;
        }
      }
      expect(checked).to.be.at.least(3);
    });

    it('an unsupported Table version falls back to the next Accept entry, alone it is 406', async () => {
      const fallback = await c.request('GET', CMS, { headers: { Accept: 'application/json;as=Table;g=meta.svc.io;v=v9, application/json' } });
      expect(fallback.status).to.equal(200);
      expect(fallback.body.kind).to.equal('ConfigMapList');
      const alone = await c.request('GET', CMS, { headers: { Accept: 'application/json;as=Table;g=meta.svc.io;v=v9' } });
      expect(alone.status).to.equal(406);
      expect(alone.body.reason).to.equal('NotAcceptable');
    });
  });

  describe('metadata only (PartialObjectMetadata)', () => {
    const meta = (as: string, g = 'meta.svc.io', v = 'v1', type = 'application/json') => `${type};as=${as};g=${g};v=${v}`;
    const PROTOBUFS = ['application/vnd.svc.protobuf', 'application/vnd.kubernetes.protobuf'];
    /** The two objects made first (the file's other tests add more). */
    const FIRST = `${CMS}?labelSelector=set%3Dfirst`;
    const ROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles';

    for (const g of ['meta.svc.io', 'meta.k8s.io']) {
      it(`get and list as JSON in ${g}: metadata only, in the spelling asked for`, async () => {
        const one = await c.request('GET', `${CMS}/one`, { headers: { Accept: meta('PartialObjectMetadata', g) } });
        expect(one.status, one.text).to.equal(200);
        expect(one.body).to.include({ kind: 'PartialObjectMetadata', apiVersion: `${g}/v1` });
        expect(one.body.metadata).to.include({ name: 'one', namespace: NS });
        expect(one.body).to.not.have.property('data');
        const list = await c.request('GET', FIRST, { headers: { Accept: meta('PartialObjectMetadataList', g) } });
        expect(list.status, list.text).to.equal(200);
        expect(list.body).to.include({ kind: 'PartialObjectMetadataList', apiVersion: `${g}/v1` });
        expect(list.body.metadata.resourceVersion).to.match(/^\d+$/);
        expect(list.body.items.map((i: any) => [i.kind, i.apiVersion, i.metadata.name])).to.deep.equal([
          ['PartialObjectMetadata', `${g}/v1`, 'one'], ['PartialObjectMetadata', `${g}/v1`, 'two']]);
        expect(list.body.items.some((i: any) => 'data' in i)).to.equal(false);
      });
    }

    it('v1beta1 is served too; a page of a list keeps its continue token', async () => {
      const one = await c.request('GET', `${CMS}/one`, { headers: { Accept: meta('PartialObjectMetadata', 'meta.k8s.io', 'v1beta1') } });
      expect(one.body).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1beta1' });
      const page = await c.request('GET', `${FIRST}&limit=1`, { headers: { Accept: meta('PartialObjectMetadataList', 'meta.svc.io', 'v1beta1') } });
      expect(page.body).to.include({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.svc.io/v1beta1' });
      expect(page.body.items).to.have.length(1);
      expect(page.body.metadata.continue).to.be.a('string').and.not.equal('');
    });

    for (const type of PROTOBUFS) {
      it(`get, list and watch as ${type}`, async () => {
        const one = await raw(c, 'GET', `${CMS}/one`, { headers: { Accept: meta('PartialObjectMetadata', 'meta.k8s.io', 'v1', type) } });
        expect(one.status, one.raw.toString()).to.equal(200);
        expect(contentType(one.headers)).to.equal(type);
        const obj = decodeEnvelope(one.raw);
        expect(obj).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
        expect((obj.metadata as any).name).to.equal('one');
        const list = await raw(c, 'GET', FIRST, { headers: { Accept: meta('PartialObjectMetadataList', 'meta.svc.io', 'v1', type) } });
        expect(list.status).to.equal(200);
        const decoded = decodeEnvelope(list.raw);
        expect(decoded).to.include({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.svc.io/v1' });
        expect((decoded.items as any[]).map((i) => i.metadata.name)).to.deep.equal(['one', 'two']);
        const watch = await raw(c, 'GET', `${FIRST}&watch=1&timeoutSeconds=1`, { headers: { Accept: meta('PartialObjectMetadata', 'meta.k8s.io', 'v1', type) } });
        expect(watch.status).to.equal(200);
        expect(String(watch.headers['content-type'])).to.equal(`${type};stream=watch`);
        const { events } = decodeWatchEvents(watch.raw);
        expect(events.map((e) => [e.type, e.object.kind, e.object.apiVersion, (e.object.metadata as any).name])).to.deep.equal([
          ['ADDED', 'PartialObjectMetadata', 'meta.k8s.io/v1', 'one'], ['ADDED', 'PartialObjectMetadata', 'meta.k8s.io/v1', 'two']]);
      });
    }

    it('a watch as JSON: every event is the object\'s metadata', async () => {
      const watch = await raw(c, 'GET', `${FIRST}&watch=1&timeoutSeconds=1`, { headers: { Accept: meta('PartialObjectMetadata') } });
      expect(watch.status).to.equal(200);
      const events = watch.raw.toString().trim().split('\n').map((l) => JSON.parse(l));
      expect(events.map((e) => [e.type, e.object.kind, e.object.apiVersion, e.object.metadata.name])).to.deep.equal([
        ['ADDED', 'PartialObjectMetadata', 'meta.svc.io/v1', 'one'], ['ADDED', 'PartialObjectMetadata', 'meta.svc.io/v1', 'two']]);
      expect(events.some((e) => 'data' in e.object)).to.equal(false);
    });

    it('through an upstream group name: object, list and watch', async () => {
      const created = await c.request('POST', ROLES, { body: { metadata: { name: 'metadata-view' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] } });
      expect(created.status, created.text).to.equal(201);
      const one = await c.request('GET', `${ROLES}/metadata-view`, { headers: { Accept: meta('PartialObjectMetadata', 'meta.k8s.io') } });
      expect(one.status, one.text).to.equal(200);
      expect(one.body).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
      expect(one.body.metadata.name).to.equal('metadata-view');
      expect(one.body).to.not.have.property('rules');
      const list = await c.request('GET', `${ROLES}?fieldSelector=metadata.name%3Dmetadata-view`, { headers: { Accept: meta('PartialObjectMetadataList', 'meta.k8s.io') } });
      expect(list.body.items.map((i: any) => [i.kind, i.metadata.name])).to.deep.equal([['PartialObjectMetadata', 'metadata-view']]);
      const watch = await raw(c, 'GET', `${ROLES}?watch=1&timeoutSeconds=1&fieldSelector=metadata.name%3Dmetadata-view`,
        { headers: { Accept: meta('PartialObjectMetadata', 'meta.k8s.io', 'v1', PROTOBUFS[1]) } });
      const { events } = decodeWatchEvents(watch.raw);
      expect(events.map((e) => [e.type, e.object.apiVersion, (e.object.metadata as any).name])).to.deep.equal([['ADDED', 'meta.k8s.io/v1', 'metadata-view']]);
    });

    it('a view that does not fit the answer is 406: a list for one object, one object for a list or a watch', async () => {
      const get = await c.request('GET', `${CMS}/one`, { headers: { Accept: meta('PartialObjectMetadataList') } });
      expect(get.status, get.text).to.equal(406);
      expect(get.body).to.include({ kind: 'Status', reason: 'NotAcceptable', code: 406 });
      expect(get.body.message).to.match(/^you requested PartialObjectMetadataList, but the requested object is not a list/);
      const list = await c.request('GET', CMS, { headers: { Accept: meta('PartialObjectMetadata') } });
      expect(list.status, list.text).to.equal(406);
      expect(list.body.message).to.match(/^you requested PartialObjectMetadata, but the requested object is a list/);
      const watch = await c.request('GET', `${CMS}?watch=1&timeoutSeconds=1`, { headers: { Accept: meta('PartialObjectMetadataList') } });
      expect(watch.status, watch.text).to.equal(406);
      expect(watch.body.reason).to.equal('NotAcceptable');
    });

    for (const accept of [meta('PartialObjectMetadata', 'meta.example.io'), meta('PartialObjectMetadata', 'meta.svc.io', 'v2'),
      meta('PartialObject'), 'application/json;g=meta.svc.io;v=v1', meta('Table', 'meta.svc.io', 'v1', PROTOBUFS[0])]) {
      it(`"${accept}" is not served: 406 alone, the next entry of the list otherwise`, async () => {
        const alone = await c.request('GET', `${CMS}/one`, { headers: { Accept: accept } });
        expect(alone.status, alone.text).to.equal(406);
        expect(alone.body).to.include({ reason: 'NotAcceptable', code: 406 });
        const next = await c.request('GET', `${CMS}/one`, { headers: { Accept: `${accept}, ${meta('PartialObjectMetadata', 'meta.k8s.io')}, application/json` } });
        expect(next.status, next.text).to.equal(200);
        expect(next.body).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
      });
    }

    it('the metadata client\'s Accept list (Protobuf first, then JSON views, then plain JSON) answers Protobuf metadata', async () => {
      const accept = `${meta('PartialObjectMetadataList', 'meta.k8s.io', 'v1', PROTOBUFS[1])},${meta('PartialObjectMetadataList', 'meta.k8s.io')},application/json`;
      const list = await raw(c, 'GET', CMS, { headers: { Accept: accept } });
      expect(contentType(list.headers)).to.equal(PROTOBUFS[1]);
      expect(decodeEnvelope(list.raw)).to.include({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1' });
    });
  });

  describe('pretty and compression', () => {
    it('pretty=true indents the JSON, the default is compact', async () => {
      const pretty = await c.request('GET', `${CMS}/one?pretty=true`);
      expect(pretty.text).to.match(/^\{\n\s+"/);
      expect(pretty.text.split('\n').length).to.be.greaterThan(5);
      expect(JSON.parse(pretty.text).metadata.name).to.equal('one');
      const compact = await c.request('GET', `${CMS}/one`);
      expect(compact.text.trim()).not.to.contain('\n');
    });

    it('a large list is gzip-encoded when the client accepts gzip, and plain otherwise', async () => {
      expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'media-big' } } })).status).to.equal(201);
      for (let i = 0; i < 50; i++) {
        const res = await c.request('POST', '/api/v1/namespaces/media-big/configmaps', { body: { metadata: { name: `big-${i}` }, data: { blob: 'y'.repeat(4096) } } });
        expect(res.status).to.equal(201);
      }
      const zipped = await raw(c, 'GET', '/api/v1/namespaces/media-big/configmaps', { headers: { 'Accept-Encoding': 'gzip' } });
      expect(zipped.status).to.equal(200);
      expect(zipped.headers['content-encoding']).to.equal('gzip');
      const list = JSON.parse(gunzipSync(zipped.raw).toString('utf8'));
      expect(list.kind).to.equal('ConfigMapList');
      expect(list.items).to.have.length(50);
      expect(zipped.raw.length).to.be.lessThan(50 * 4096 / 4);

      const plain = await raw(c, 'GET', '/api/v1/namespaces/media-big/configmaps');
      expect(plain.headers['content-encoding']).to.equal(undefined);
      expect(JSON.parse(plain.raw.toString('utf8')).items).to.have.length(50);
    });
  });
});

describe('protocol: response compression switched off (APIResponseCompression=false)', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => {
    c = await new Cluster({ flags: { gateway: ['--feature-gates=APIResponseCompression=false'] } }).start();
    for (let i = 0; i < 50; i++) {
      const res = await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: `big-${i}` }, data: { blob: 'y'.repeat(4096) } } });
      expect(res.status).to.equal(201);
    }
  });
  after(async () => { await c?.stop(); });

  it('a large list is not compressed even when the client accepts gzip', async () => {
    const res = await raw(c, 'GET', '/api/v1/namespaces/default/configmaps', { headers: { 'Accept-Encoding': 'gzip' } });
    expect(res.status).to.equal(200);
    expect(res.headers['content-encoding']).to.equal(undefined);
    expect(JSON.parse(res.raw.toString('utf8')).items).to.have.length(50);
  });
});
