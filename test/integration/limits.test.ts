import { expect } from 'chai';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { Encoder } from 'cbor-x';
import { Cluster, type Response } from '../lib/cluster.js';
import { pkiPaths } from '../../internal/pki/index.js';
import { encodeEnvelope } from '../../internal/apimachinery/protobuf/index.js';
import { MAX_NESTING_DEPTH } from '../../internal/apimachinery/depth.js';

const REVISIONS = '/apis/apps/v1/namespaces/default/controllerrevisions';
const PODS = '/api/v1/namespaces/default/pods';
const CMS = '/api/v1/namespaces/default/configmaps';
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const APPLY = 'application/apply-patch+yaml';
const MiB = 1024 * 1024;

/** JSON text of objects nested `depth` deep. */
const nested = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
/** A ControllerRevision whose data (free-form) makes the whole object `depth` deep. */
const revision = (name: string, depth: number) =>
  `{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{"name":"${name}"},"revision":1,"data":${nested(depth - 1)}}`;
const nestedValue = (depth: number): unknown => JSON.parse(nested(depth));
const DEVICE_CLASSES = '/apis/resource.svc.io/v1/deviceclasses';
/** The spec of a DeviceClass whose opaque parameters (free-form, mutable) make the whole object `depth` deep. */
const deviceClassSpec = (depth: number) => `{"config":[{"opaque":{"driver":"x.example.com","parameters":${nested(depth - 5)}}}]}`;

describe('request limits: no single request crashes, stalls or bloats the gateway', function () {
  this.timeout(120_000);
  let c: Cluster;
  let pid: number | undefined;
  before(async () => {
    c = await new Cluster({ flags: { gateway: ['--feature-gates=CBORServingAndStorage=true'] } }).start();
    pid = c.procs.get('gateway')!.pid;
    await c.request('POST', PODS, { body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } } });
    await c.request('POST', REVISIONS, { body: revision('base', 3) });
    await c.request('POST', CMS, { body: { metadata: { name: 'cm' }, data: { k: 'v' } } });
    await c.request('POST', DEVICE_CLASSES, { body: `{"metadata":{"name":"dc"},"spec":${deviceClassSpec(6)}}` });
  });
  after(async () => { await c?.stop(); });

  /** The gateway is the same process as at the start and still answers. */
  async function expectServing(): Promise<void> {
    const gateway = c.procs.get('gateway')!;
    expect(gateway.pid).to.equal(pid);
    expect(gateway.exitCode).to.equal(null);
    expect((await c.request('GET', '/readyz', { timeoutMs: 10_000 })).status).to.equal(200);
  }

  function expectStatus(res: Response, code: number, reason: string, message?: string | RegExp): void {
    expect(res.status, res.text.slice(0, 300)).to.equal(code);
    expect(res.body).to.include({ kind: 'Status', status: 'Failure', code, reason });
    if (typeof message === 'string') expect(res.body.message).to.include(message);
    else if (message) expect(res.body.message).to.match(message);
  }

  const send = (method: string, path: string, body: string | Buffer, type = 'application/json') =>
    c.request(method, path, { body, headers: { 'Content-Type': type }, timeoutMs: 30_000 });

  describe('body size', () => {
    it('a body over 3 MiB is refused with 413 on its Content-Length, before the body is sent', async () => {
      const res = await headersOnly(c, 'POST', CMS, 4 * MiB);
      expect(res.status).to.equal(413);
      expect(JSON.parse(res.text)).to.include({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
      await expectServing();
    });

    it('a patch over 3 MiB is refused with 413', async () => {
      const res = await send('PATCH', `${CMS}/x`, `{"data":{"k":"${'x'.repeat(3 * MiB)}"}}`, MERGE);
      expectStatus(res, 413, 'RequestEntityTooLarge');
      await expectServing();
    });
  });

  describe(`nesting: ${MAX_NESTING_DEPTH} levels are served, one more is a 400 in every path`, () => {
    it('create (JSON and YAML)', async () => {
      expect((await send('POST', REVISIONS, revision('ok', MAX_NESTING_DEPTH))).status).to.equal(201);
      expectStatus(await send('POST', REVISIONS, revision('deep', MAX_NESTING_DEPTH + 1)), 400, 'BadRequest', 'exceeded max depth');
      const yaml = (depth: number) => `apiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: y${depth}\nrevision: 1\ndata:\n${
        Array.from({ length: depth - 1 }, (_, i) => `${' '.repeat(2 * i + 2)}a:`).join('\n')} 1\n`;
      expect((await send('POST', REVISIONS, yaml(MAX_NESTING_DEPTH), 'application/yaml')).status).to.equal(201);
      expectStatus(await send('POST', REVISIONS, yaml(MAX_NESTING_DEPTH + 1), 'application/yaml'), 400, 'BadRequest', 'exceeded max depth');
      await expectServing();
    });

    it('update', async () => {
      const body = (depth: number) => `{"apiVersion":"resource.svc.io/v1","kind":"DeviceClass","metadata":{"name":"dc"},"spec":${deviceClassSpec(depth)}}`;
      expect((await send('PUT', `${DEVICE_CLASSES}/dc`, body(MAX_NESTING_DEPTH))).status).to.equal(200);
      expectStatus(await send('PUT', `${DEVICE_CLASSES}/dc`, body(MAX_NESTING_DEPTH + 1)), 400, 'BadRequest', 'exceeded max depth');
      await expectServing();
    });

    it('merge and strategic merge patches', async () => {
      for (const type of [MERGE, STRATEGIC]) {
        expect((await send('PATCH', `${DEVICE_CLASSES}/dc`, `{"spec":${deviceClassSpec(MAX_NESTING_DEPTH)}}`, type)).status, type).to.equal(200);
        expectStatus(await send('PATCH', `${DEVICE_CLASSES}/dc`, `{"spec":${deviceClassSpec(MAX_NESTING_DEPTH + 1)}}`, type), 400, 'BadRequest', 'exceeded max depth');
      }
      await expectServing();
    });

    it('JSON patch: the patch and the object it makes', async () => {
      // The value sits 5 levels down in the object, 2 in the patch.
      const patch = (valueDepth: number) => `[{"op":"replace","path":"/spec/config/0/opaque/parameters","value":${nested(valueDepth)}}]`;
      expect((await send('PATCH', `${DEVICE_CLASSES}/dc`, patch(MAX_NESTING_DEPTH - 5), JSON_PATCH)).status).to.equal(200);
      const tooDeepResult = await send('PATCH', `${DEVICE_CLASSES}/dc`, patch(MAX_NESTING_DEPTH - 4), JSON_PATCH);
      expectStatus(tooDeepResult, 422, 'Invalid');
      expect(tooDeepResult.body.details.causes[0].message).to.include(`deeper than ${MAX_NESTING_DEPTH}`);
      expectStatus(await send('PATCH', `${DEVICE_CLASSES}/dc`, patch(MAX_NESTING_DEPTH - 1), JSON_PATCH), 400, 'BadRequest', 'exceeded max depth');
      await expectServing();
    });

    it('server-side apply, creating and updating, and 20,000 levels', async () => {
      expect((await send('PATCH', `${REVISIONS}/applied?fieldManager=m`, revision('applied', MAX_NESTING_DEPTH), APPLY)).status).to.equal(201);
      expect((await send('PATCH', `${REVISIONS}/applied?fieldManager=m`, revision('applied', MAX_NESTING_DEPTH), APPLY)).status).to.equal(200);
      for (const depth of [MAX_NESTING_DEPTH + 1, 20_000]) {
        expectStatus(await send('PATCH', `${REVISIONS}/applied?fieldManager=m`, revision('applied', depth), APPLY), 400, 'BadRequest', 'exceeded max depth');
      }
      const flowYaml = `data: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`;
      expectStatus(await send('PATCH', `${REVISIONS}/applied?fieldManager=m`, flowYaml, APPLY), 400, 'BadRequest', 'exceeded max depth');
      await expectServing();
    });

    it('Protobuf and CBOR bodies', async () => {
      const object = (name: string, depth: number) => ({ ...JSON.parse(revision(name, 3)), data: nestedValue(depth - 1) });
      const pb = (name: string, depth: number) => encodeEnvelope(object(name, depth));
      expect((await send('POST', REVISIONS, pb('pb', MAX_NESTING_DEPTH), 'application/vnd.svc.protobuf')).status).to.equal(201);
      expectStatus(await send('POST', REVISIONS, pb('pb2', MAX_NESTING_DEPTH + 1), 'application/vnd.svc.protobuf'), 400, 'BadRequest', 'exceeded max depth');
      const cbor = new Encoder({ useRecords: false, mapsAsObjects: true });
      expect((await send('POST', REVISIONS, cbor.encode(object('cbor', MAX_NESTING_DEPTH)), 'application/cbor')).status).to.equal(201);
      expectStatus(await send('POST', REVISIONS, cbor.encode(object('cbor2', MAX_NESTING_DEPTH + 1)), 'application/cbor'), 400, 'BadRequest', 'exceeded max depth');
      // Nesting written directly in CBOR (far deeper than the encoder above would go): refused before decoding.
      expectStatus(await send('POST', REVISIONS, Buffer.alloc(100_000, 0x81), 'application/cbor'), 400, 'BadRequest', 'exceeded max depth');
      await expectServing();
    });

    it('deep objects are listed in every format', async () => {
      for (const accept of ['application/json', 'application/yaml', 'application/vnd.svc.protobuf', 'application/cbor']) {
        const res = await c.request('GET', REVISIONS, { headers: { Accept: accept }, timeoutMs: 30_000 });
        expect(res.status, accept).to.equal(200);
      }
      await expectServing();
    });
  });

  describe('amplification', () => {
    it('YAML aliases expanding exponentially are refused with 400; many plain aliases are read', async () => {
      const levels = ['l0: &l0 [x, x, x, x, x, x, x, x, x, x]'];
      for (let i = 1; i < 9; i++) levels.push(`l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(', ')}]`);
      const laughs = `apiVersion: apps/v1\nkind: ControllerRevision\nmetadata:\n  name: laughs\nrevision: 1\ndata:\n  ${levels.join('\n  ')}\n`;
      expectStatus(await send('POST', REVISIONS, laughs, 'application/yaml'), 400, 'BadRequest', 'excessive aliasing');
      expectStatus(await send('PATCH', `${REVISIONS}/laughs?fieldManager=m`, laughs, APPLY), 400, 'BadRequest', 'excessive aliasing');
      const pairs = Array.from({ length: 8_000 }, (_, i) => `  k${i}: &a${i} v\n  l${i}: *a${i}\n`).join('');
      const res = await send('POST', CMS, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aliases\ndata:\n${pairs}`, 'application/yaml');
      expect(res.status, res.text.slice(0, 200)).to.equal(201);
      expect(res.body.data.l7999).to.equal('v');
      await expectServing();
    });

    it('a JSON patch copying a value into itself is refused with 422 once copies pass 3 MiB', async () => {
      const ops = [{ op: 'add', path: '/data/x', value: { k: 'y'.repeat(100) } },
        ...Array.from({ length: 24 }, (_, i) => ({ op: 'copy', from: '/data', path: `/data/x${i}` }))];
      const res = await send('PATCH', `${CMS}/cm`, JSON.stringify(ops), JSON_PATCH);
      expectStatus(res, 422, 'Invalid');
      expect(res.body.details.causes[0].message).to.match(/accumulated size increase of copy is \d+, exceeding the limit 3145728/);
      await expectServing();
    });

    it('a JSON patch of more than 10,000 operations is refused with 413', async () => {
      const ops = Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/revision', value: 1 }));
      expectStatus(await send('PATCH', `${REVISIONS}/base`, JSON.stringify(ops), JSON_PATCH), 413, 'RequestEntityTooLarge', '10000');
      await expectServing();
    });
  });

  describe('validation on long input', () => {
    it('a 20,000-digit quantity that is no quantity answers 422', async () => {
      const pod = (name: string, cpu: string) => JSON.stringify({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'i', resources: { limits: { cpu } } }] } });
      for (const [cpu, message] of [[`${'1'.repeat(20_000)}x`, 'quantities must match the regular expression'],
        [`${'1.'.repeat(10_000)}x`, 'quantities must match the regular expression'], [`${'1'.repeat(20_000)}e`, "unable to parse quantity's suffix"]]) {
        expectStatus(await send('POST', PODS, pod('q', cpu)), 422, 'Invalid', message);
      }
      await expectServing();
    });

    it('a field selector of 4,000 spaces and no operator answers 400', async () => {
      const res = await c.request('GET', `${CMS}?fieldSelector=${encodeURIComponent(`a${' '.repeat(4_000)}b`)}`);
      expectStatus(res, 400, 'BadRequest', 'invalid selector');
      await expectServing();
    });
  });

  describe('malformed patches are the client\'s error', () => {
    it('an unknown $patch directive and an item without its merge key answer 400', async () => {
      expectStatus(await send('PATCH', `${PODS}/p`, '{"metadata":{"labels":{"$patch":"bogus"}}}', STRATEGIC), 400, 'BadRequest', 'unknown patch type: bogus');
      expectStatus(await send('PATCH', `${PODS}/p`, '{"spec":{"containers":[{"image":"x"}]}}', STRATEGIC), 400, 'BadRequest', 'does not contain declared merge key: name');
      await expectServing();
    });

    it('an apply with metadata: null answers 400', async () => {
      const res = await send('PATCH', `${PODS}/p?fieldManager=m`, 'apiVersion: v1\nkind: Pod\nmetadata: null\n', APPLY);
      expectStatus(res, 400, 'BadRequest', 'metadata must be an object');
      await expectServing();
    });
  });
});

/** Sends only the headers of a request announcing `length` bytes, and answers what the server says without the body. */
function headersOnly(c: Cluster, method: string, path: string, length: number): Promise<{ status: number; text: string }> {
  const p = pkiPaths(c.dataDir);
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port: c.port, method, path, ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey),
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(length) }, timeout: 10_000,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('timeout', () => req.destroy(new Error('no answer before the body was sent')));
    req.on('error', reject);
    req.write('{"metadata":');
  });
}
