import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, type Response } from '../lib/cluster.js';

const RBAC = '/apis/rbac.authorization.svc.io/v1';
const GROUP = 'rbac.authorization.svc.io';

/** Polls `check` until it holds, at most `attempts` times (bounded). */
async function eventually(check: () => Promise<boolean>, attempts = 50, everyMs = 100): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return true;
    await sleep(everyMs);
  }
  return false;
}

describe('RBAC authorization', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-rbac-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, [
    'alice-token,alice,u-1', 'bob-token,bob,u-2', 'carol-token,carol,u-3,"readers,team-c"',
    'robot-token,system:serviceaccount:rbac-a:robot,u-4',
  ].join('\n') + '\n');
  let c: Cluster;
  const as = (token: string, method: string, path: string, body?: unknown, contentType?: string): Promise<Response> =>
    c.request(method, path, { anonymous: true, body, headers: { Authorization: `Bearer ${token}`, ...(contentType ? { 'Content-Type': contentType } : {}) } });
  const admin = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const res = await c.request(method, path, { body });
    expect(res.status, `${method} ${path}: ${res.text}`).to.be.oneOf([200, 201]);
    return res;
  };
  const role = (ns: string, name: string, rules: unknown[]) => admin('POST', `${RBAC}/namespaces/${ns}/roles`, { metadata: { name }, rules });
  const clusterRole = (name: string, rules: unknown[]) => admin('POST', `${RBAC}/clusterroles`, { metadata: { name }, rules });
  const subject = (kind: string, name: string, namespace?: string) =>
    (kind === 'ServiceAccount' ? { kind, name, namespace } : { kind, name, apiGroup: GROUP });
  const bind = (ns: string, name: string, roleKind: string, roleName: string, subjects: unknown[]) =>
    admin('POST', `${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name }, roleRef: { apiGroup: GROUP, kind: roleKind, name: roleName }, subjects });
  const clusterBind = (name: string, roleName: string, subjects: unknown[]) =>
    admin('POST', `${RBAC}/clusterrolebindings`, { metadata: { name }, roleRef: { apiGroup: GROUP, kind: 'ClusterRole', name: roleName }, subjects });
  /** Waits until the user's request gets `status` (the policy is taken in from the change stream). */
  const until = (token: string, method: string, path: string, status: number) =>
    eventually(async () => (await as(token, method, path)).status === status);

  before(async () => {
    c = await new Cluster({ flags: { authn: [`--token-auth-file=${tokens}`, '--authorization-mode=Node,RBAC'], authz: ['--authorization-mode=Node,RBAC'] } }).start();
    for (const ns of ['rbac-a', 'esc']) await admin('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    for (const name of ['one', 'two']) await admin('POST', '/api/v1/namespaces/rbac-a/configmaps', { metadata: { name }, data: { k: 'v' } });
  });
  after(async () => {
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('decisions', () => {
    it('denies a user without bindings, in the platform words', async () => {
      const res = await as('alice-token', 'GET', '/api/v1/namespaces/rbac-a/configmaps');
      expect(res.status).to.equal(403);
      expect(res.body.reason).to.equal('Forbidden');
      expect(res.body.message).to.equal('configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "rbac-a"');
    });

    it('a Role bound by a RoleBinding allows its verbs on its resources in its namespace only', async () => {
      await role('rbac-a', 'cm-reader', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }]);
      await bind('rbac-a', 'alice-cm', 'Role', 'cm-reader', [subject('User', 'alice')]);
      expect(await until('alice-token', 'GET', '/api/v1/namespaces/rbac-a/configmaps', 200)).to.equal(true);
      expect((await as('alice-token', 'GET', '/api/v1/namespaces/rbac-a/configmaps/one')).status).to.equal(200);
      expect((await as('alice-token', 'DELETE', '/api/v1/namespaces/rbac-a/configmaps/one')).status).to.equal(403);
      expect((await as('alice-token', 'GET', '/api/v1/namespaces/esc/configmaps')).status).to.equal(403);
      expect((await as('alice-token', 'GET', '/api/v1/namespaces/rbac-a/secrets')).status).to.equal(403);
    });

    it('resourceNames limit a rule to the named objects', async () => {
      await role('rbac-a', 'cm-one', [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['one'], verbs: ['get', 'update'] }]);
      await bind('rbac-a', 'carol-one', 'Role', 'cm-one', [subject('Group', 'readers')]);
      expect(await until('carol-token', 'GET', '/api/v1/namespaces/rbac-a/configmaps/one', 200)).to.equal(true);
      expect((await as('carol-token', 'GET', '/api/v1/namespaces/rbac-a/configmaps/two')).status).to.equal(403);
      expect((await as('carol-token', 'GET', '/api/v1/namespaces/rbac-a/configmaps')).status).to.equal(403);
    });

    it('sub-resources are named resource/subresource, and */subresource covers any resource', async () => {
      await clusterRole('ns-status', [{ apiGroups: [''], resources: ['namespaces/status'], verbs: ['get'] }]);
      await clusterBind('carol-ns-status', 'ns-status', [subject('User', 'carol')]);
      expect(await until('carol-token', 'GET', '/api/v1/namespaces/rbac-a/status', 200)).to.equal(true);
      expect((await as('carol-token', 'GET', '/api/v1/namespaces/rbac-a')).status).to.equal(403);
      await clusterRole('any-status', [{ apiGroups: ['*'], resources: ['*/status'], verbs: ['get'] }]);
      await bind('rbac-a', 'robot-status', 'ClusterRole', 'any-status', [subject('ServiceAccount', 'robot')]);
      expect(await until('robot-token', 'GET', '/api/v1/namespaces/rbac-a/configmaps/one/status', 404)).to.equal(true, 'a served check of configmaps/status');
    });

    it('nonResourceURLs match exactly or by a * suffix', async () => {
      expect((await as('bob-token', 'GET', '/metrics')).status).to.equal(403);
      await clusterRole('metrics-reader', [{ nonResourceURLs: ['/metr*'], verbs: ['get'] }]);
      await clusterBind('bob-metrics', 'metrics-reader', [subject('User', 'bob')]);
      expect(await until('bob-token', 'GET', '/metrics', 200)).to.equal(true);
      expect((await as('bob-token', 'GET', '/version')).status).to.equal(200, 'system:discovery for every authenticated user');
      expect((await as('bob-token', 'POST', '/metrics')).status).to.not.equal(200);
    });

    it('* in groups, resources and verbs; a ServiceAccount subject without namespace is of the binding namespace', async () => {
      await clusterRole('read-all', [{ apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list'] }]);
      await bind('rbac-a', 'robot-read', 'ClusterRole', 'read-all', [{ kind: 'ServiceAccount', name: 'robot' }]);
      expect(await until('robot-token', 'GET', '/api/v1/namespaces/rbac-a/secrets', 200)).to.equal(true);
      expect((await as('robot-token', 'GET', '/apis/apps/v1/namespaces/rbac-a/deployments')).status).to.equal(200);
      expect((await as('robot-token', 'GET', '/api/v1/namespaces/esc/secrets')).status).to.equal(403);
      expect((await as('robot-token', 'DELETE', '/api/v1/namespaces/rbac-a/configmaps/two')).status).to.equal(403);
    });

    it('a binding to a missing role says so in the reason', async () => {
      await bind('rbac-a', 'alice-missing', 'ClusterRole', 'no-such-role', [subject('User', 'alice')]);
      expect(await eventually(async () => {
        const res = await as('alice-token', 'GET', '/api/v1/namespaces/rbac-a/pods');
        return res.status === 403 && String(res.body.message).endsWith(`: RBAC: clusterrole.${GROUP} "no-such-role" not found`);
      })).to.equal(true);
    });

    it('a deleted binding stops allowing', async () => {
      await role('rbac-a', 'pod-lister', [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }]);
      await bind('rbac-a', 'bob-pods', 'Role', 'pod-lister', [subject('User', 'bob')]);
      expect(await until('bob-token', 'GET', '/api/v1/namespaces/rbac-a/pods', 200)).to.equal(true);
      await admin('DELETE', `${RBAC}/namespaces/rbac-a/rolebindings/bob-pods`);
      expect(await until('bob-token', 'GET', '/api/v1/namespaces/rbac-a/pods', 403)).to.equal(true);
    });
  });

  describe('escalation prevention', () => {
    const ROLES = `${RBAC}/namespaces/esc/roles`;
    const BINDINGS = `${RBAC}/namespaces/esc/rolebindings`;
    const cmRole = (name: string, verbs: string[], extra: Record<string, unknown> = {}) =>
      ({ apiVersion: `${GROUP}/v1`, kind: 'Role', metadata: { name }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs, ...extra }] });
    const expectEscalation = (res: Response, resource: string, name: string, missing: string) => {
      expect(res.status, res.text).to.equal(403);
      expect(res.body.reason).to.equal('Forbidden');
      expect(res.body.message).to.equal(`${resource}.${GROUP} "${name}" is forbidden: user "bob" (groups=["system:authenticated"]) `
        + `is attempting to grant RBAC permissions not currently held:\n${missing}`);
    };

    before(async () => {
      await role('esc', 'rbac-writer', [
        { apiGroups: [GROUP], resources: ['roles', 'rolebindings'], verbs: ['get', 'list', 'create', 'update', 'patch'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
        { apiGroups: [''], resources: ['secrets'], resourceNames: ['s1'], verbs: ['get'] },
      ]);
      await bind('esc', 'bob-writer', 'Role', 'rbac-writer', [subject('User', 'bob')]);
      expect(await until('bob-token', 'GET', ROLES, 200)).to.equal(true);
    });

    it('a role within what the writer holds is created', async () => {
      expect((await as('bob-token', 'POST', ROLES, cmRole('held', ['get']))).status).to.equal(201);
      expect((await as('bob-token', 'POST', ROLES, { metadata: { name: 'named' }, rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['s1'], verbs: ['get'] }] })).status).to.equal(201);
    });

    it('more verbs, a wildcard or wider resourceNames are refused (POST)', async () => {
      expectEscalation(await as('bob-token', 'POST', ROLES, cmRole('more', ['get', 'delete'])), 'roles', 'more', '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}');
      expectEscalation(await as('bob-token', 'POST', ROLES, cmRole('wild', ['*'])), 'roles', 'wild', '{APIGroups:[""], Resources:["configmaps"], Verbs:["*"]}');
      expectEscalation(await as('bob-token', 'POST', ROLES, { metadata: { name: 'wider' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] }),
        'roles', 'wider', '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}');
    });

    it('updates by PUT and every patch kind are refused when they add permissions', async () => {
      const path = `${ROLES}/held`;
      const current = (await as('bob-token', 'GET', path)).body;
      const wider = { ...current, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'delete'] }] };
      const missing = '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}';
      expectEscalation(await as('bob-token', 'PUT', path, wider), 'roles', 'held', missing);
      expectEscalation(await as('bob-token', 'PATCH', path, { rules: wider.rules }, 'application/merge-patch+json'), 'roles', 'held', missing);
      expectEscalation(await as('bob-token', 'PATCH', path, { rules: wider.rules }, 'application/strategic-merge-patch+json'), 'roles', 'held', missing);
      expectEscalation(await as('bob-token', 'PATCH', path, [{ op: 'add', path: '/rules/0/verbs/-', value: 'delete' }], 'application/json-patch+json'), 'roles', 'held', missing);
      expectEscalation(await as('bob-token', 'PATCH', `${path}?fieldManager=bob&force=true`, JSON.stringify(cmRole('held', ['get', 'delete'])), 'application/apply-patch+yaml'), 'roles', 'held', missing);
      expectEscalation(await as('bob-token', 'PATCH', `${ROLES}/applied?fieldManager=bob`, JSON.stringify(cmRole('applied', ['list'])), 'application/apply-patch+yaml'),
        'roles', 'applied', '{APIGroups:[""], Resources:["configmaps"], Verbs:["list"]}');
      expect((await as('bob-token', 'GET', path)).body.rules[0].verbs).to.deep.equal(['get']);
    });

    it('a binding to a role with more than the writer holds is refused (cluster-admin, POST and apply)', async () => {
      const binding = { apiVersion: `${GROUP}/v1`, kind: 'RoleBinding', metadata: { name: 'to-admin' }, roleRef: { apiGroup: GROUP, kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [subject('User', 'bob')] };
      const missing = '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n{NonResourceURLs:["*"], Verbs:["*"]}';
      expectEscalation(await as('bob-token', 'POST', BINDINGS, binding), 'rolebindings', 'to-admin', missing);
      expectEscalation(await as('bob-token', 'PATCH', `${BINDINGS}/to-admin?fieldManager=bob`, JSON.stringify(binding), 'application/apply-patch+yaml'), 'rolebindings', 'to-admin', missing);
      const ok = await as('bob-token', 'POST', BINDINGS, { ...binding, metadata: { name: 'to-held' }, roleRef: { apiGroup: GROUP, kind: 'Role', name: 'held' } });
      expect(ok.status, ok.text).to.equal(201);
      const missingRole = await as('bob-token', 'POST', BINDINGS, { ...binding, metadata: { name: 'to-nothing' }, roleRef: { apiGroup: GROUP, kind: 'Role', name: 'nothing' } });
      expect(missingRole.status).to.equal(404);
      expect(missingRole.body.message).to.equal(`roles.${GROUP} "nothing" not found`);
    });

    it('roleRef cannot change (422)', async () => {
      const path = `${BINDINGS}/to-held`;
      const res = await as('bob-token', 'PATCH', path, { roleRef: { apiGroup: GROUP, kind: 'Role', name: 'named' } }, 'application/merge-patch+json');
      expect(res.status, res.text).to.equal(422);
      expect(res.body.reason).to.equal('Invalid');
      expect(res.body.message).to.include('roleRef: Invalid value');
    });

    it('escalate on roles and bind on a role allow what the writer does not hold', async () => {
      await role('esc', 'escalator', [
        { apiGroups: [GROUP], resources: ['roles'], verbs: ['escalate'] },
        { apiGroups: [GROUP], resources: ['clusterroles'], resourceNames: ['cluster-admin'], verbs: ['bind'] },
      ]);
      await bind('esc', 'bob-escalator', 'Role', 'escalator', [subject('User', 'bob')]);
      expect(await eventually(async () => (await as('bob-token', 'POST', ROLES, cmRole('more', ['get', 'delete']))).status === 201)).to.equal(true);
      const binding = { metadata: { name: 'to-admin' }, roleRef: { apiGroup: GROUP, kind: 'ClusterRole', name: 'cluster-admin' }, subjects: [subject('User', 'carol')] };
      expect((await as('bob-token', 'POST', BINDINGS, binding)).status).to.equal(201);
      const view = await as('bob-token', 'POST', BINDINGS, { ...binding, metadata: { name: 'to-view' }, roleRef: { apiGroup: GROUP, kind: 'ClusterRole', name: 'admin' } });
      expect(view.status, 'bind is on cluster-admin only').to.equal(403);
    });

    it('system:masters writes anything', async () => {
      await admin('POST', ROLES, cmRole('by-admin', ['*']));
    });
  });
});
