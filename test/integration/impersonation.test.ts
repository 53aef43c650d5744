import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';

const WHOAMI = '/apis/authentication.svc.io/v1/selfsubjectreviews';

describe('impersonation', function () {
  this.timeout(90_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-imp-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'alice-token,alice,u-1,dev\n');
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('allowed (AlwaysAllow)', () => {
    let c: Cluster;
    before(async () => { c = await new Cluster({ flags: { authn: ['--authorization-mode=AlwaysAllow'], authz: ['--authorization-mode=AlwaysAllow'] } }).start(); });
    after(async () => { await c?.stop(); });

    it('the caller acts as the impersonated user, groups and extra', async () => {
      const res = await c.request('POST', WHOAMI, { body: {}, headers: { 'Impersonate-User': 'bob', 'Impersonate-Group': 'dev', 'Impersonate-Extra-Scopes': 'view' } });
      expect(res.status).to.equal(201);
      expect(res.body.status.userInfo).to.deep.equal({ username: 'bob', groups: ['dev', 'system:authenticated'], extra: { scopes: ['view'] } });
    });

    const whoami = async (headers: Record<string, string | string[]>) => {
      const res = await c.request('POST', WHOAMI, { body: {}, headers: headers as Record<string, string> });
      expect(res.status, res.text).to.equal(201);
      return res.body.status.userInfo;
    };

    it('an impersonated service account gets its groups (unless groups are named)', async () => {
      expect(await whoami({ 'Impersonate-User': 'system:serviceaccount:ns1:builder' })).to.deep.equal({
        username: 'system:serviceaccount:ns1:builder', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'],
      });
      expect((await whoami({ 'Impersonate-User': 'system:serviceaccount:ns1:builder', 'Impersonate-Group': 'ops' })).groups).to.deep.equal(['ops', 'system:authenticated']);
    });

    it('system:anonymous is in system:unauthenticated only; a named system:unauthenticated suppresses system:authenticated', async () => {
      expect(await whoami({ 'Impersonate-User': 'system:anonymous' })).to.deep.equal({ username: 'system:anonymous', groups: ['system:unauthenticated'] });
      expect((await whoami({ 'Impersonate-User': 'bob', 'Impersonate-Group': 'system:unauthenticated' })).groups).to.deep.equal(['system:unauthenticated']);
    });

    it('each Impersonate-Group line is one group, commas included', async () => {
      expect((await whoami({ 'Impersonate-User': 'bob', 'Impersonate-Group': ['dev,ops', 'qa'] })).groups).to.deep.equal(['dev,ops', 'qa', 'system:authenticated']);
    });

    it('extra keys are lower-cased and percent-decoded, every value line kept; a broken escape is a 400', async () => {
      const info = await whoami({ 'Impersonate-User': 'bob', 'Impersonate-Extra-Example.com%2FScopes': ['a,b', 'c'] });
      expect(info.extra).to.deep.equal({ 'example.com/scopes': ['a,b', 'c'] });
      const bad = await c.request('GET', '/api/v1/namespaces', { headers: { 'Impersonate-User': 'bob', 'Impersonate-Extra-Bad%zzKey': 'x' } });
      expect(bad.status).to.equal(400);
      expect(bad.body).to.deep.include({ kind: 'Status', reason: 'BadRequest', code: 400 });
      expect((await c.request('GET', '/readyz')).status).to.equal(200);
    });

    it('Impersonate-Uid sets the uid and needs Impersonate-User', async () => {
      expect(await whoami({ 'Impersonate-User': 'bob', 'Impersonate-Uid': 'uid-7' })).to.deep.equal({ username: 'bob', uid: 'uid-7', groups: ['system:authenticated'] });
      const alone = await c.request('GET', '/api/v1/namespaces', { headers: { 'Impersonate-Uid': 'uid-7' } });
      expect(alone.status).to.equal(400);
      expect(alone.body.reason).to.equal('BadRequest');
    });

    it('kubectl --as a service account shows its groups', async () => {
      const who = await kubectl(c.kubeconfig, ['auth', 'whoami', '--as=system:serviceaccount:ns1:builder', '-o', 'json']);
      expect(who.code, who.stderr).to.equal(0);
      expect(JSON.parse(who.stdout).status.userInfo.groups).to.deep.equal(['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated']);
    });

    it('impersonation headers without Impersonate-User are a 400', async () => {
      const res = await c.request('GET', '/api/v1/namespaces', { headers: { 'Impersonate-Group': 'dev' } });
      expect(res.status).to.equal(400);
      expect(res.body.reason).to.equal('BadRequest');
    });

    it('kubectl --as and --as-group are honoured', async () => {
      const who = await kubectl(c.kubeconfig, ['auth', 'whoami', '--as=carol', '--as-group=ops']);
      expect(who.code, who.stderr).to.equal(0);
      expect(who.stdout).to.match(/Username\s+carol/).and.match(/ops/);
    });
  });

  describe('refused (RBAC: alice and bob are granted nothing)', () => {
    let c: Cluster;
    before(async () => {
      c = await new Cluster({ flags: { authn: [`--token-auth-file=${tokens}`, '--authorization-mode=RBAC'], authz: ['--authorization-mode=RBAC'] } }).start();
    });
    after(async () => { await c?.stop(); });

    it('an impersonated request is authorized as the impersonated user', async () => {
      const res = await c.request('GET', '/api/v1/namespaces', { headers: { 'Impersonate-User': 'bob' } });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.contain('User "bob" cannot list resource "namespaces"');
    });

    it('a caller not allowed to impersonate gets 403 naming the impersonation', async () => {
      const res = await c.request('GET', '/api/v1/namespaces', { anonymous: true, headers: { Authorization: 'Bearer alice-token', 'Impersonate-User': 'bob' } });
      expect(res.status).to.equal(403);
      expect(res.body.message).to.contain('users "bob" is forbidden: User "alice" cannot impersonate resource "users"');
    });
  });
});
