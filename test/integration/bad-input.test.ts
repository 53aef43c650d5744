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
