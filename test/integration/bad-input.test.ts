import { expect } from 'chai';
import { Cluster } from '../lib/cluster.js';

const CMS = '/api/v1/namespaces/default/configmaps';
/** Malformed paths, bodies, parameters and field types: each must get a 4xx Status, never a 5xx or a crash. */
const cases: Array<[string, string, string?, string?]> = [
  ['GET', '/api/v1/namespaces/%ZZ'], ['GET', '/api/v1/namespaces/default/configmaps/%E0%A4%A'],
  ['POST', CMS, '{"metadata":{"name":5}}'], ['POST', CMS, '{"metadata":"x"}'], ['POST', CMS, '[1,2]'], ['POST', CMS, 'null'], ['POST', CMS, '"str"'],
  ['POST', CMS, '{"metadata":{"name":"a","labels":{"k":5}}}'], ['POST', CMS, '{"metadata":{"name":"a","labels":"x"}}'], ['POST', CMS, '{"metadata":{"name":"a","annotations":[1]}}'],
  ['POST', CMS, '{"metadata":{"name":"a","finalizers":"x"}}'], ['POST', CMS, '{"metadata":{"name":"b","finalizers":[1]}}'], ['POST', CMS, '{"metadata":{"name":"c"},"data":{"k":5}}'], ['POST', CMS, '{"metadata":{"name":"d"},"data":[1]}'],
  ['POST', CMS, '{"apiVersion":5,"metadata":{"name":"e"}}'], ['POST', CMS, '{"kind":{},"metadata":{"name":"f"}}'], ['POST', CMS, '{"metadata":{"name":"' + 'x'.repeat(300) + '"}}'],
  ['POST', CMS, '{"metadata":{"generateName":5}}'], ['POST', CMS, '{"metadata":{"namespace":7,"name":"g"}}'], ['POST', CMS, '{"metadata":{"name":"h","resourceVersion":5}}'],
  ['PUT', CMS + '/nope', '{"metadata":{"name":"nope","resourceVersion":"abc"}}'], ['PUT', CMS + '/nope', '{"metadata":{"name":"nope","resourceVersion":{}}}'],
  ['POST', CMS, '{' + '"a":{'.repeat(5000) + '}'.repeat(5001)], ['POST', CMS, '['.repeat(100000) + ']'.repeat(100000)],
  ['GET', CMS + '?limit=abc'], ['GET', CMS + '?limit=-1'], ['GET', CMS + '?resourceVersion=abc'], ['GET', CMS + '?labelSelector=%28%28'], ['GET', CMS + '?fieldSelector=metadata.name'],
  ['GET', CMS + '?continue=%%%'], ['GET', CMS + '?watch=1&timeoutSeconds=abc'], ['GET', CMS + '?watch=1&resourceVersion=99999999999999999999'],
  ['DELETE', CMS + '/x', '{"preconditions":"x"}'], ['DELETE', CMS + '/x', '[1]'], ['DELETE', CMS + '/x?gracePeriodSeconds=abc'],
  ['PATCH', CMS + '/x', '{"a":1}', 'application/merge-patch+json'], ['PATCH', CMS + '/x', 'not json', 'application/json-patch+json'], ['PATCH', CMS + '/x', '{}', 'application/apply-patch+yaml'],
  ['POST', '/apis/apps/v1/namespaces/default/deployments', '{"metadata":{"name":"d"},"spec":{"replicas":"x","selector":5,"template":[]}}'],
  ['POST', '/apis/batch/v1/namespaces/default/jobs', '{"metadata":{"name":"j"},"spec":{"template":{"spec":{"containers":"x"}}}}'],
  ['POST', '/api/v1/namespaces/default/pods', '{"metadata":{"name":"p"},"spec":{"containers":[{"name":5,"image":[]}]}}'],
  ['POST', '/api/v1/namespaces/default/pods', '{"metadata":{"name":"p2"},"spec":null}'],
  ['POST', '/apis/networking.svc.io/v1/namespaces/default/networkpolicies', '{"metadata":{"name":"n"},"spec":{"podSelector":{},"ingress":[{"from":[{"ipBlock":{"cidr":"999.1.1.1/99","except":5}}]}]}}'],
  ['POST', '/api/v1/namespaces/default/services', '{"metadata":{"name":"s"},"spec":{"ports":[{"port":"abc"}]}}'],
  ['GET', '/api/v1/namespaces/default/configmaps/x/y/z/w'], ['GET', '/apis/' + 'a'.repeat(10000)], ['GET', '/api/v1/namespaces/default/pods/x/log?follow=true'],
];

describe('bad input: a clear 4xx Status, nothing changes, no service dies', function () {
  this.timeout(120_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  for (const [method, path, body, type] of cases) {
    it(`${method} ${path.slice(0, 70)} ${String(body ?? '').slice(0, 50)}`, async () => {
      const res = await c.request(method, path, { body, headers: type ? { 'Content-Type': type } : {}, timeoutMs: 10_000 });
      expect(res.status, res.text.slice(0, 300)).to.be.within(200, 499);
      if (res.status >= 400) expect(res.body).to.include({ kind: 'Status', status: 'Failure', code: res.status });
    });
  }

  it('every service is still running, and nothing was stored by the refused creates', async () => {
    for (const [name, proc] of c.procs) expect(proc.exitCode, name).to.equal(null);
    const names = (await c.request('GET', CMS)).body.items.map((i: { metadata: { name: string } }) => i.metadata.name);
    expect(names).to.deep.equal([]);
  });
});

describe('bad input on the internal gRPC APIs: a status code, never a crash', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('answers INVALID_ARGUMENT (or the proper code) to malformed calls and every service lives on', async () => {
    const { api, grpc } = await import('../../internal/rpc/index.js');
    const insecure = grpc.credentials.createInsecure();
    const clients = {
      storage: new api.svc.storage.v1.Storage(c.addresses.storage, insecure),
      authn: new api.svc.authn.v1.Authentication(c.addresses.authn, insecure),
      authz: new api.svc.authz.v1.Authorization(c.addresses.authz, insecure),
      admission: new api.svc.admission.v1.Admission(c.addresses.admission, insecure),
    } as Record<string, any>;
    const call = (service: string, method: string, req: object) => new Promise<number>((resolve) =>
      clients[service][method](req, { deadline: Date.now() + 5000 }, (err: { code: number } | null) => resolve(err ? err.code : grpc.status.OK)));
    const INVALID = grpc.status.INVALID_ARGUMENT;
    const expectations: Array<[string, string, object, number]> = [
      ['storage', 'Get', {}, INVALID], ['storage', 'Get', { key: 'a\u0000b' }, INVALID], ['storage', 'Get', { key: 'x', revision: -5 }, INVALID],
      ['storage', 'List', { prefix: 'no-slash' }, INVALID], ['storage', 'List', { prefix: 'a/', limit: -1 }, INVALID],
      ['storage', 'Create', { key: '' }, INVALID], ['storage', 'Update', { key: 'nope' }, grpc.status.NOT_FOUND],
      ['storage', 'Delete', { key: 'nope', preconditions: { modRevision: -1 } }, INVALID], ['storage', 'Compact', { revision: -3 }, INVALID],
      ['storage', 'Compact', { revision: 1e15 }, grpc.status.OUT_OF_RANGE],
      ['admission', 'Admit', { object: Buffer.from('{bad'), namespace: 'x', operation: 'CREATE' }, INVALID],
      ['authn', 'Authenticate', { peerCertificates: [Buffer.from('garbage')] }, grpc.status.OK],
    ];
    for (const [service, method, req, code] of expectations) {
      expect(await call(service, method, req), `${service}.${method} ${JSON.stringify(req)}`).to.equal(code);
    }
    for (const client of Object.values(clients)) client.close();
    for (const [name, proc] of c.procs) expect(proc.exitCode, name).to.equal(null);
  });
});

describe('bad input found by fuzzing: the code and reason upstream gives', function () {
  this.timeout(60_000);
  let c: Cluster;
  let token = '';
  const forged = (start: string) => Buffer.from(JSON.stringify({ v: 'meta.svc.io/v1', rv: 1, start })).toString('base64url');
  before(async () => {
    c = await new Cluster().start();
    for (const name of ['a', 'b']) expect((await c.request('POST', CMS, { body: { metadata: { name } } })).status).to.equal(201);
    token = (await c.request('GET', `${CMS}?limit=1`)).body.metadata.continue;
  });
  after(async () => { await c?.stop(); });

  const expectStatus = (res: { status: number; body: any; text: string }, code: number, reason: string) => {
    expect(res.status, res.text.slice(0, 300)).to.equal(code);
    expect(res.body).to.include({ kind: 'Status', code, reason });
  };

  it('a limit beyond 64 bits is a 400; one beyond 2^53 lists everything', async () => {
    expectStatus(await c.request('GET', `${CMS}?limit=99999999999999999999`), 400, 'BadRequest');
    const all = await c.request('GET', `${CMS}?limit=9007199254740993`);
    expect(all.status).to.equal(200);
    expect(all.body.items).to.have.length(2);
    expect(all.body.metadata.continue).to.equal(undefined);
  });

  it('a bad timeoutSeconds is a 400 with or without a continue token', async () => {
    expectStatus(await c.request('GET', `${CMS}?timeoutSeconds=abc&continue=${token}`), 400, 'BadRequest');
    expectStatus(await c.request('GET', `${CMS}?timeoutSeconds=abc`), 400, 'BadRequest');
  });

  it('a continue token naming a key outside the collection is not valid (400)', async () => {
    for (const start of ['zzz/other/key', '/', 'core/secrets/default/x']) {
      const res = await c.request('GET', `${CMS}?continue=${forged(start)}`);
      expectStatus(res, 400, 'BadRequest');
      expect(res.body.message).to.include('continue key is not valid');
    }
  });

  it('a NUL in a name addresses no object (404); "/", "%", "." and ".." are not valid names (400)', async () => {
    expectStatus(await c.request('GET', `${CMS}/a%00b`), 404, 'NotFound');
    expectStatus(await c.request('DELETE', `${CMS}/a%00b`), 404, 'NotFound');
    expectStatus(await c.request('GET', '/api/v1/namespaces/de%00fault/configmaps/a'), 404, 'NotFound');
    for (const name of ['a%2Fb', '%2E', '%2E%2E', 'a%25b']) {
      const res = await c.request('GET', `${CMS}/${name}`);
      expectStatus(res, 400, 'BadRequest');
      expect(res.body.message).to.match(/^Name parameter invalid/);
    }
  });

  it('a broken escape in a health check name or an impersonated extra key is a 400; an unknown check a 404 Status', async () => {
    expectStatus(await c.request('GET', '/livez/%ZZ'), 400, 'BadRequest');
    expectStatus(await c.request('GET', '/readyz/%E0'), 400, 'BadRequest');
    expectStatus(await c.request('GET', '/readyz/nope'), 404, 'NotFound');
    expectStatus(await c.request('GET', CMS, { headers: { 'Impersonate-User': 'u', 'Impersonate-Extra-%ZZ': 'v' } }), 400, 'BadRequest');
  });

  it('an unknown field named with U+2028 or a control character comes back in a Warning header as UTF-8, controls replaced', async () => {
    const res = await c.request('PATCH', `${CMS}/a`, {
      body: '{"bad\u2028field":1,"ctl\\u0001x":2,"q\\"uote":3}', headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
    });
    expect(res.status, res.text).to.equal(200);
    const warnings = ([] as string[]).concat(res.headers.warning ?? []).map((w) => Buffer.from(w, 'latin1').toString('utf8'));
    expect(warnings.join('\n')).to.include('299 - "unknown field \\"bad\u2028field\\""');
    expect(warnings.join('\n')).to.include('299 - "unknown field \\"ctl\ufffdx\\""');
    expect(warnings.join('\n')).to.include('299 - "unknown field \\"q\\"uote\\""');
  });

  it('DeleteOptions fields of the wrong type are a 400, and nothing is deleted', async () => {
    for (const body of ['{"dryRun":"18446744073709551616"}', '{"dryRun":[1]}', '{"gracePeriodSeconds":"5"}', '{"gracePeriodSeconds":1.5}',
      '{"preconditions":"x"}', '{"preconditions":{"uid":5}}', '{"propagationPolicy":7}', '{"orphanDependents":"true"}', '{"kind":{}}']) {
      expectStatus(await c.request('DELETE', `${CMS}/b`, { body }), 400, 'BadRequest');
    }
    expect((await c.request('DELETE', `${CMS}/b`, { body: '{"dryRun":null,"gracePeriodSeconds":null,"preconditions":null}', headers: { 'Content-Type': 'application/json' } })).status).to.equal(200);
    expect((await c.request('POST', CMS, { body: { metadata: { name: 'b' } } })).status).to.equal(201);
  });

  it('random bytes as a DELETE body answer a Status in every content type', async () => {
    const bytes = Buffer.from([1, 2, 3, 250, 0, 9, 0xff, 0x7b]);
    const expected: Array<[string, number, string]> = [
      ['application/json', 400, 'BadRequest'], ['application/yaml', 400, 'BadRequest'],
      ['application/vnd.kubernetes.protobuf', 400, 'BadRequest'], ['application/vnd.svc.protobuf', 400, 'BadRequest'],
      ['application/cbor', 415, 'UnsupportedMediaType'], ['application/apply-patch+yaml', 415, 'UnsupportedMediaType'],
    ];
    for (const [type, code, reason] of expected) {
      for (const body of [bytes, Buffer.concat([Buffer.from('k8s\0', 'latin1'), bytes])]) {
        expectStatus(await c.request('DELETE', `${CMS}/b`, { body, headers: { 'Content-Type': type } }), code, reason);
      }
    }
    expect((await c.request('GET', `${CMS}/b`)).status, 'b is still there').to.equal(200);
  });
});
