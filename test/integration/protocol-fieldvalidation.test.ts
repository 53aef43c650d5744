// Document 1, "Field validation": fieldValidation=Ignore|Warn|Strict with unknown and
// duplicate fields in JSON and YAML bodies; types and required fields always validated.
import { expect } from 'chai';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { Cluster } from '../lib/cluster.js';
import { pkiPaths } from '../../internal/pki/index.js';

const NS = 'fv';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

interface Answer {
  status: number;
  text: string;
  body: any;
  /** Each Warning header as sent. */
  warningHeaders: string[];
  /** The warning texts, unquoted, of every Warning header. */
  warnings: string[];
}

/** Splits Warning header values (RFC 7234: `code agent "text"`, possibly comma-joined) into their texts. */
function warningTexts(headers: string[]): string[] {
  const out: string[] = [];
  for (const h of headers) {
    for (const m of h.matchAll(/(\d{3}) (\S+) "((?:[^"\\]|\\.)*)"/g)) out.push(m[3].replace(/\\(.)/g, '$1'));
  }
  return out;
}

/** One HTTPS request as admin, with a raw string body and every Warning header kept apart. */
function send(c: Cluster, method: string, path: string, body: string, contentType: string): Promise<Answer> {
  const p = pkiPaths(c.dataDir);
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port: c.port, method, path, ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey),
      headers: { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)), Accept: 'application/json' }, timeout: 15_000,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: any;
        try { parsed = JSON.parse(text); } catch { parsed = undefined; }
        const warningHeaders: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) if (res.rawHeaders[i].toLowerCase() === 'warning') warningHeaders.push(res.rawHeaders[i + 1]);
        resolve({ status: res.statusCode ?? 0, text, body: parsed, warningHeaders, warnings: warningTexts(warningHeaders) });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

const JSON_TYPE = 'application/json';
const YAML_TYPE = 'application/yaml';
const nsBody = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, bar: 'x' }, spec: { foo: 'x' } });
const dupJson = (name: string) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"a":"1"},"data":{"b":"2"}}`;
const unknownYaml = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\nfoo: bar\ndata:\n  a: "1"\n`;
const dupYaml = (name: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\ndata:\n  b: "2"\n`;

function expectBadRequest(res: Answer): void {
  expect(res.status, res.text).to.equal(400);
  expect(res.body, res.text).to.include({ kind: 'Status', reason: 'BadRequest', code: 400 });
}

describe('protocol: field validation', function () {
  this.timeout(60_000);
  let c: Cluster;
  const get = (path: string) => c.request('GET', path);

  before(async () => {
    c = await new Cluster().start();
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).to.equal(201);
  });
  after(async () => { await c?.stop(); });

  describe('unknown fields in a JSON body', () => {
    for (const [title, query] of [['Warn by default', ''], ['Warn', '?fieldValidation=Warn']]) {
      it(`${title}: created without them, one Warning: 299 header per field`, async () => {
        const name = `fv-warn${query ? '-explicit' : ''}`;
        const res = await send(c, 'POST', `/api/v1/namespaces${query}`, nsBody(name), JSON_TYPE);
        expect(res.status, res.text).to.equal(201);
        expect(res.warnings.sort()).to.deep.equal(['unknown field "metadata.bar"', 'unknown field "spec.foo"']);
        expect(res.warningHeaders).to.have.length(2);
        expect(res.warningHeaders).to.include('299 - "unknown field \\"spec.foo\\""');
        const stored = (await get(`/api/v1/namespaces/${name}`)).body;
        expect(stored.spec).not.to.have.property('foo');
        expect(stored.metadata).not.to.have.property('bar');
      });
    }

    it('Ignore: created without them, no warning', async () => {
      const res = await send(c, 'POST', '/api/v1/namespaces?fieldValidation=Ignore', nsBody('fv-ignore'), JSON_TYPE);
      expect(res.status, res.text).to.equal(201);
      expect(res.warningHeaders).to.deep.equal([]);
      expect((await get('/api/v1/namespaces/fv-ignore')).body.spec).not.to.have.property('foo');
    });

    it('Strict: one 400 listing every unknown field, nothing created', async () => {
      const res = await send(c, 'POST', '/api/v1/namespaces?fieldValidation=Strict', nsBody('fv-strict'), JSON_TYPE);
      expectBadRequest(res);
      expect(res.body.message).to.contain('unknown field "spec.foo"').and.contain('unknown field "metadata.bar"');
      expect((await get('/api/v1/namespaces/fv-strict')).status).to.equal(404);
    });
  });

  describe('duplicate fields in a JSON body', () => {
    it('Warn: created, one warning naming the duplicate field', async () => {
      const res = await send(c, 'POST', `${CMS}?fieldValidation=Warn`, dupJson('dup-warn'), JSON_TYPE);
      expect(res.status, res.text).to.equal(201);
      expect(res.warnings).to.deep.equal(['duplicate field "data"']);
    });

    it('Ignore: created, no warning', async () => {
      const res = await send(c, 'POST', `${CMS}?fieldValidation=Ignore`, dupJson('dup-ignore'), JSON_TYPE);
      expect(res.status, res.text).to.equal(201);
      expect(res.warningHeaders).to.deep.equal([]);
    });

    it('Strict: 400 naming the duplicate field, nothing created', async () => {
      const res = await send(c, 'POST', `${CMS}?fieldValidation=Strict`, dupJson('dup-strict'), JSON_TYPE);
      expectBadRequest(res);
      expect(res.body.message).to.contain('duplicate field "data"');
      expect((await get(`${CMS}/dup-strict`)).status).to.equal(404);
    });

    it('Strict lists unknown and duplicate fields together', async () => {
      const body = '{"metadata":{"name":"both"},"foo":1,"data":{"a":"1"},"data":{"b":"2"}}';
      const res = await send(c, 'POST', `${CMS}?fieldValidation=Strict`, body, JSON_TYPE);
      expectBadRequest(res);
      expect(res.body.message).to.contain('unknown field "foo"').and.contain('duplicate field "data"');
    });
  });

  describe('a YAML body', () => {
    it('Warn: an unknown field is dropped with a warning', async () => {
      const res = await send(c, 'POST', CMS, unknownYaml('y-warn'), YAML_TYPE);
      expect(res.status, res.text).to.equal(201);
      expect(res.warnings).to.deep.equal(['unknown field "foo"']);
      const stored = (await get(`${CMS}/y-warn`)).body;
      expect(stored).not.to.have.property('foo');
      expect(stored.data).to.deep.equal({ a: '1' });
    });

    it('Strict: an unknown field is 400', async () => {
      const res = await send(c, 'POST', `${CMS}?fieldValidation=Strict`, unknownYaml('y-strict'), YAML_TYPE);
      expectBadRequest(res);
      expect(res.body.message).to.contain('unknown field "foo"');
    });

    it('Ignore: an unknown field is dropped silently', async () => {
      const res = await send(c, 'POST', `${CMS}?fieldValidation=Ignore`, unknownYaml('y-ignore'), YAML_TYPE);
      expect(res.status, res.text).to.equal(201);
      expect(res.warningHeaders).to.deep.equal([]);
    });

    it('Warn: a duplicate key is accepted with one warning naming it', async () => {
      const res = await send(c, 'POST', CMS, dupYaml('y-dup-warn'), YAML_TYPE);
      expect(res.status, res.text).to.equal(201);
      expect(res.warnings).to.have.length(1);
      expect(res.warnings[0]).to.contain('"data"').and.match(/duplicate|already set/);
    });

    it('Strict: a duplicate key is 400 naming it', async () => {
      const res = await send(c, 'POST', `${CMS}?fieldValidation=Strict`, dupYaml('y-dup-strict'), YAML_TYPE);
      expectBadRequest(res);
      expect(res.body.message).to.contain('"data"').and.match(/duplicate|already set/);
    });
  });

  describe('PUT and PATCH', () => {
    let current: any;
    before(async () => {
      current = (await c.request('POST', CMS, { body: { metadata: { name: 'target' }, data: { a: '1' } } })).body;
    });

    it('PUT: Warn warns, Strict refuses', async () => {
      const body = JSON.stringify({ ...current, foo: 'x', data: { a: '2' } });
      const strict = await send(c, 'PUT', `${CMS}/target?fieldValidation=Strict`, body, JSON_TYPE);
      expectBadRequest(strict);
      expect(strict.body.message).to.contain('unknown field "foo"');
      const warn = await send(c, 'PUT', `${CMS}/target?fieldValidation=Warn`, body, JSON_TYPE);
      expect(warn.status, warn.text).to.equal(200);
      expect(warn.warnings).to.deep.equal(['unknown field "foo"']);
      expect(warn.body.data).to.deep.equal({ a: '2' });
      expect(warn.body).not.to.have.property('foo');
    });

    it('PATCH (merge): Warn warns, Strict refuses, Ignore is silent', async () => {
      const patch = JSON.stringify({ foo: 'x', data: { a: '3' } });
      const strict = await send(c, 'PATCH', `${CMS}/target?fieldValidation=Strict`, patch, 'application/merge-patch+json');
      expectBadRequest(strict);
      expect(strict.body.message).to.contain('unknown field "foo"');
      expect((await get(`${CMS}/target`)).body.data).to.deep.equal({ a: '2' });
      const warn = await send(c, 'PATCH', `${CMS}/target?fieldValidation=Warn`, patch, 'application/merge-patch+json');
      expect(warn.status, warn.text).to.equal(200);
      expect(warn.warnings).to.deep.equal(['unknown field "foo"']);
      expect(warn.body).not.to.have.property('foo');
      const ignore = await send(c, 'PATCH', `${CMS}/target?fieldValidation=Ignore`, JSON.stringify({ bar: 'x' }), 'application/merge-patch+json');
      expect(ignore.status, ignore.text).to.equal(200);
      expect(ignore.warningHeaders).to.deep.equal([]);
    });

    it('an unknown fieldValidation value: 400', async () => {
      const res = await send(c, 'POST', `${CMS}?fieldValidation=Loose`, JSON.stringify({ metadata: { name: 'loose' } }), JSON_TYPE);
      expectBadRequest(res);
      expect(res.body.message).to.contain('fieldValidation');
    });
  });

  describe('always validated', () => {
    for (const level of ['Ignore', 'Warn', 'Strict']) {
      it(`a missing required field is 422 Invalid with a cause per field (${level})`, async () => {
        const body = JSON.stringify({ data: { 'not a key!': 'x' } });
        const res = await send(c, 'POST', `${CMS}?fieldValidation=${level}`, body, JSON_TYPE);
        expect(res.status, res.text).to.equal(422);
        expect(res.body).to.include({ kind: 'Status', reason: 'Invalid', code: 422 });
        const causes = res.body.details?.causes ?? [];
        const required = causes.find((x: any) => x.field === 'metadata.name');
        expect(required, res.text).to.include({ reason: 'FieldValueRequired' });
        expect(causes.some((x: any) => String(x.field).startsWith('data')), 'a cause for the bad data key').to.equal(true);
        for (const cause of causes) expect(cause.field, JSON.stringify(cause)).to.be.a('string').and.not.equal('');
      });

      it(`a field of the wrong type is refused (${level})`, async () => {
        for (const [kind, body] of [['num-value', { data: { a: 1 } }], ['str-labels', { metadata: { labels: 'x' } }], ['list-data', { data: ['a'] }]] as const) {
          const name = `${kind}-${level.toLowerCase()}`;
          const full = { ...body, metadata: { name, ...(body as any).metadata } };
          const res = await send(c, 'POST', `${CMS}?fieldValidation=${level}`, JSON.stringify(full), JSON_TYPE);
          expect([400, 422], `${name}: ${res.status} ${res.text}`).to.include(res.status);
          expect(res.body?.kind, res.text).to.equal('Status');
          expect(res.body.message, name).to.match(kind === 'str-labels' ? /labels/ : /data/);
          expect((await get(`${CMS}/${name}`)).status, `${name} not stored`).to.equal(404);
        }
      });
    }
  });
});
