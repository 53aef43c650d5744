import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, type Response } from '../lib/cluster.js';

const GROUP = 'rbac.authorization.svc.io';
const RBAC = `/apis/${GROUP}/v1`;
const AUTOUPDATE = `${GROUP}/autoupdate`;

async function eventually(check: () => Promise<boolean>, attempts = 100, everyMs = 100): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return true;
    await sleep(everyMs);
  }
  return false;
}

const hasRule = (rules: any[] | undefined, group: string, resource: string, verb: string) =>
  (rules ?? []).some((r) => (r.apiGroups ?? []).includes(group) && (r.resources ?? []).includes(resource) && (r.verbs ?? []).includes(verb));

describe('RBAC default policy, reconciliation, aggregation and rules reviews', function () {
  this.timeout(180_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-rbacp-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'dana-token,dana,u-1\nerin-token,erin,u-2\n');
  let c: Cluster;
  const admin = async (method: string, path: string, body?: unknown, contentType?: string): Promise<Response> => {
    const res = await c.request(method, path, { body, ...(contentType ? { headers: { 'Content-Type': contentType } } : {}) });
    expect(res.status, `${method} ${path}: ${res.text}`).to.be.oneOf([200, 201]);
    return res;
  };
  const get = async (path: string) => (await admin('GET', path)).body;

  before(async () => {
    c = await new Cluster({ flags: { authn: [`--token-auth-file=${tokens}`, '--authorization-mode=Node,RBAC'], authz: ['--authorization-mode=Node,RBAC'] } }).start();
  });
  after(async () => {
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('bootstrap', () => {
    it('/readyz waits for the default policy', async () => {
      const res = await c.request('GET', '/readyz?verbose');
      expect(res.status).to.equal(200);
      expect(res.text).to.contain('[+]poststarthook/rbac/bootstrap-roles ok');
    });

    it('the default roles and bindings carry the bootstrapping label and autoupdate annotation', async () => {
      for (const path of [`${RBAC}/clusterroles/cluster-admin`, `${RBAC}/clusterrolebindings/system:discovery`,
        `${RBAC}/namespaces/svc-system/roles/system:controller:token-cleaner`, `${RBAC}/namespaces/svc-public/rolebindings/system:controller:bootstrap-signer`,
        `${RBAC}/clusterroles/system:controller:namespace-controller`]) {
        const obj = await get(path);
        expect(obj.metadata.labels, path).to.deep.include({ 'svc.io/bootstrapping': 'rbac-defaults' });
        expect(obj.metadata.annotations, path).to.deep.include({ [AUTOUPDATE]: 'true' });
      }
      const admins = await get(`${RBAC}/clusterrolebindings/cluster-admin`);
      expect(admins.subjects).to.deep.equal([{ kind: 'Group', apiGroup: GROUP, name: 'system:masters' }]);
    });

    it('admin, edit and view are aggregated: view reads no Secrets, edit writes no roles or bindings', async () => {
      expect(await eventually(async () => hasRule((await get(`${RBAC}/clusterroles/admin`)).rules, GROUP, 'rolebindings', 'create'))).to.equal(true);
      const [admins, edit, view] = await Promise.all(['admin', 'edit', 'view'].map((n) => get(`${RBAC}/clusterroles/${n}`)));
      expect(hasRule(view.rules, '', 'pods', 'get')).to.equal(true);
      expect(hasRule(view.rules, '', 'secrets', 'get')).to.equal(false);
      expect(hasRule(edit.rules, '', 'secrets', 'get')).to.equal(true);
      expect(hasRule(edit.rules, '', 'configmaps', 'create')).to.equal(true);
      expect(edit.rules.some((r: any) => r.apiGroups.includes(GROUP))).to.equal(false);
      expect(hasRule(admins.rules, '', 'pods', 'get')).to.equal(true);
    });

    it('the controller-manager works under Node,RBAC with its own identity: a namespace is emptied and removed', async () => {
      await admin('POST', '/api/v1/namespaces', { metadata: { name: 'doomed' } });
      await admin('POST', '/api/v1/namespaces/doomed/configmaps', { metadata: { name: 'cm' } });
      await admin('DELETE', '/api/v1/namespaces/doomed');
      expect(await eventually(async () => (await c.request('GET', '/api/v1/namespaces/doomed')).status === 404, 150)).to.equal(true);
    });

    it('garbage collection across resources: a dependent of a deleted owner goes', async () => {
      const owner = (await admin('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'owner' } })).body;
      await admin('POST', `${RBAC}/namespaces/default/roles`, {
        metadata: { name: 'dependent', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }] }, rules: [],
      });
      await admin('DELETE', '/api/v1/namespaces/default/configmaps/owner');
      expect(await eventually(async () => (await c.request('GET', `${RBAC}/namespaces/default/roles/dependent`)).status === 404, 150)).to.equal(true);
    });
  });

  describe('reconciliation at start', () => {
    it('a rule removed from a default role comes back when authz restarts; autoupdate "false" (in either spelling) keeps a change', async () => {
      const path = `${RBAC}/clusterroles/system:aggregate-to-view`;
      const view = await get(path);
      const trimmed = view.rules.filter((r: any) => !(r.resources ?? []).includes('pods'));
      await admin('PUT', path, { ...view, rules: trimmed });
      const discovery = await get(`${RBAC}/clusterroles/system:discovery`);
      await admin('PUT', `${RBAC}/clusterroles/system:discovery`, {
        ...discovery, metadata: { ...discovery.metadata, annotations: { [AUTOUPDATE]: 'false' } }, rules: [{ nonResourceURLs: ['/version'], verbs: ['get'] }],
      });
      const delegator = await get(`${RBAC}/clusterroles/system:auth-delegator`);
      await admin('PUT', `${RBAC}/clusterroles/system:auth-delegator`, {
        ...delegator, metadata: { ...delegator.metadata, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } }, rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }],
      });
      const viewBinding = await get(`${RBAC}/clusterrolebindings/system:basic-user`);
      await admin('PUT', `${RBAC}/clusterrolebindings/system:basic-user`, { ...viewBinding, subjects: [] });
      expect(hasRule((await get(path)).rules, '', 'pods', 'get')).to.equal(false);

      await c.kill('authz', 'SIGTERM');
      await c.startService('authz');
      await c.kill('gateway', 'SIGTERM');
      await c.startService('gateway');

      expect(await eventually(async () => hasRule((await get(path)).rules, '', 'pods', 'get'))).to.equal(true);
      expect((await get(`${RBAC}/clusterrolebindings/system:basic-user`)).subjects).to.deep.equal([{ kind: 'Group', apiGroup: GROUP, name: 'system:authenticated' }]);
      const kept = await get(`${RBAC}/clusterroles/system:discovery`);
      expect(kept.rules).to.deep.equal([{ nonResourceURLs: ['/version'], verbs: ['get'] }]);
      expect((await get(`${RBAC}/clusterroles/system:auth-delegator`)).rules).to.deep.equal([{ nonResourceURLs: ['/healthz'], verbs: ['get'] }]);
      expect(await eventually(async () => hasRule((await get(`${RBAC}/clusterroles/view`)).rules, '', 'pods', 'get'))).to.equal(true);
    });
  });

  describe('aggregation', () => {
    it('a ClusterRole with an aggregationRule holds the rules of the roles it selects, kept current', async () => {
      await admin('POST', `${RBAC}/clusterroles`, { metadata: { name: 'team-all' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { team: 'x' } }] } });
      await admin('POST', `${RBAC}/clusterroles`, { metadata: { name: 'team-a', labels: { team: 'x' } }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] });
      await admin('POST', `${RBAC}/clusterroles`, { metadata: { name: 'team-b', labels: { team: 'x' } }, rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] }] });
      await admin('POST', `${RBAC}/clusterroles`, { metadata: { name: 'other', labels: { team: 'y' } }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] });
      const expected = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }, { apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] }];
      expect(await eventually(async () => JSON.stringify((await get(`${RBAC}/clusterroles/team-all`)).rules) === JSON.stringify(expected))).to.equal(true);
      await admin('PATCH', `${RBAC}/clusterroles/team-b`, { rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['watch'] }] }, 'application/merge-patch+json');
      await admin('DELETE', `${RBAC}/clusterroles/team-a`);
      expect(await eventually(async () => JSON.stringify((await get(`${RBAC}/clusterroles/team-all`)).rules)
        === JSON.stringify([{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['watch'] }]))).to.equal(true);
    });
  });

  describe('SelfSubjectRulesReview', () => {
    const review = (token: string, namespace: string, version = 'v1') => c.request('POST', `/apis/authorization.svc.io/${version}/selfsubjectrulesreviews`, {
      anonymous: true, headers: { Authorization: `Bearer ${token}` }, body: { spec: { namespace } },
    });

    it('is served at v1 only (v1beta1 of the group is gone, as upstream)', async () => {
      expect((await c.request('POST', '/apis/authorization.svc.io/v1beta1/selfsubjectrulesreviews', { body: { spec: { namespace: 'default' } } })).status).to.equal(404);
    });

    it('returns the RBAC rules of the user in the namespace, complete under Node,RBAC', async () => {
      await admin('POST', `${RBAC}/namespaces/default/rolebindings`, {
        metadata: { name: 'dana-view' }, roleRef: { apiGroup: GROUP, kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', apiGroup: GROUP, name: 'dana' }],
      });
      for (const version of ['v1']) {
        let res = await review('dana-token', 'default', version);
        expect(await eventually(async () => {
          res = await review('dana-token', 'default', version);
          return hasRule(res.body?.status?.resourceRules, '', 'pods', 'list');
        }), res.text).to.equal(true);
        expect(res.status).to.equal(201);
        expect(res.body.status.incomplete).to.equal(false);
        expect(res.body.status.resourceRules).to.deep.include({ verbs: ['create'], apiGroups: ['authorization.svc.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] });
        expect(res.body.status.nonResourceRules).to.deep.include({ verbs: ['get'], nonResourceURLs: ['/livez', '/readyz', '/healthz', '/version', '/version/'] });
      }
      const elsewhere = await review('dana-token', 'kube-nothing');
      expect(hasRule(elsewhere.body.status.resourceRules, '', 'pods', 'list')).to.equal(false);
      const noNamespace = await review('dana-token', '');
      expect(noNamespace.status).to.equal(400);
      expect(noNamespace.body.message).to.equal('no namespace on request');
    });
  });
});
