import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';

describe('reviews and bindings: answered, never stored', function () {
  this.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-reviews-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'secret-token,alice,u-1,"dev,ops"\n');
  let c: Cluster;
  before(async () => { c = await new Cluster({ flags: { authn: [`--token-auth-file=${tokens}`] } }).start(); });
  after(async () => { await c?.stop(); rmSync(dir, { recursive: true, force: true }); });

  it('SelfSubjectReview answers who the caller is', async () => {
    const res = await c.request('POST', '/apis/authentication.svc.io/v1/selfsubjectreviews', { body: { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' } });
    expect(res.status).to.equal(201);
    expect(res.body.status.userInfo.username).to.equal('admin');
    expect(res.body.status.userInfo.groups).to.include('system:masters');
  });

  it('TokenReview authenticates a token through the authentication service', async () => {
    const good = await c.request('POST', '/apis/authentication.svc.io/v1/tokenreviews', { body: { spec: { token: 'secret-token' } } });
    expect(good.status).to.equal(201);
    expect(good.body.status).to.deep.include({ authenticated: true });
    expect(good.body.status.user).to.deep.include({ username: 'alice', uid: 'u-1' });
    expect(good.body.status.user.groups).to.include.members(['dev', 'ops']);
    const bad = await c.request('POST', '/apis/authentication.svc.io/v1/tokenreviews', { body: { spec: { token: 'wrong' } } });
    expect(bad.status).to.equal(201);
    expect(bad.body.status).to.deep.equal({ authenticated: false, user: {}, error: 'invalid bearer token' });
    expect(bad.body.spec).to.not.have.property('token');
  });

  it('access reviews ask the authorizer about their subject and attributes', async () => {
    const self = await c.request('POST', '/apis/authorization.svc.io/v1/selfsubjectaccessreviews', { body: { spec: { resourceAttributes: { verb: 'create', resource: 'pods', namespace: 'default' } } } });
    expect(self.status).to.equal(201);
    expect(self.body.status.allowed).to.equal(true);
    const other = await c.request('POST', '/apis/authorization.svc.io/v1/subjectaccessreviews', { body: { spec: { user: 'alice', nonResourceAttributes: { path: '/version', verb: 'get' } } } });
    expect(other.status).to.equal(201);
    expect(other.body.status).to.have.property('allowed');
    const invalid = await c.request('POST', '/apis/authorization.svc.io/v1/subjectaccessreviews', { body: { spec: { resourceAttributes: { verb: 'get' } } } });
    expect(invalid.status).to.equal(422);
    expect(invalid.body.reason).to.equal('Invalid');
    expect((await c.request('GET', '/apis/authorization.svc.io/v1/subjectaccessreviews')).status).to.equal(405);
  });

  it('a Binding posted to the bindings collection assigns the pod', async () => {
    await c.request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: 'bound' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } });
    const res = await c.request('POST', '/api/v1/namespaces/default/bindings', { body: { metadata: { name: 'bound' }, target: { kind: 'Node', name: 'node-x' } } });
    expect(res.status).to.equal(201);
    expect((await c.request('GET', '/api/v1/namespaces/default/pods/bound')).body.spec.nodeName).to.equal('node-x');
  });

  it('kubectl auth can-i and auth whoami work', async () => {
    const can = await kubectl(c.kubeconfig, ['auth', 'can-i', 'create', 'pods']);
    expect(can.code, can.stderr).to.equal(0);
    expect(can.stdout.trim()).to.equal('yes');
    const who = await kubectl(c.kubeconfig, ['auth', 'whoami']);
    expect(who.code, who.stderr).to.equal(0);
    expect(who.stdout).to.match(/Username\s+admin/);
  });
});
