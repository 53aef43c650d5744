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

  describe('refused (Node,RBAC without bindings: only system:masters may act)', () => {
    let c: Cluster;
    before(async () => {
      c = await new Cluster({ flags: { authn: [`--token-auth-file=${tokens}`] } }).start();
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
