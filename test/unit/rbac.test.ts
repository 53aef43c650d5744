import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { UnionAuthorizer, AlwaysDenyAuthorizer, verdict, type Authorizer } from '../../internal/authz/index.js';
import { aggregatedRules } from '../../internal/controllers/aggregation.js';
import { compact, compactString, escalationMessage, uncovered } from '../../internal/rbac/covers.js';
import { CONTROLLERS_WITH_ROLES, controllerRoleName, defaultPolicy } from '../../internal/rbac/policy.js';
import { reconciled } from '../../internal/rbac/reconcile.js';
import { appliesTo } from '../../internal/rbac/resolver.js';
import { ruleAllows } from '../../internal/rbac/rules.js';
import type { PolicyRule } from '../../internal/rbac/types.js';

const res = (verb: string, group: string, resource: string, subresource = '', name = '') => ({ resource: { verb, group, resource, subresource, name } });
const path = (verb: string, p: string) => ({ nonResource: { verb, path: p } });

describe('RBAC rules', () => {
  it('match verbs, groups and resources exactly or by *', () => {
    const rule: PolicyRule = { apiGroups: ['', 'apps'], resources: ['pods', 'deployments'], verbs: ['get', 'list'] };
    expect(ruleAllows(rule, res('get', '', 'pods'))).to.equal(true);
    expect(ruleAllows(rule, res('list', 'apps', 'deployments'))).to.equal(true);
    expect(ruleAllows(rule, res('delete', '', 'pods'))).to.equal(false);
    expect(ruleAllows(rule, res('get', 'batch', 'pods'))).to.equal(false);
    expect(ruleAllows({ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }, res('escalate', 'x.svc.io', 'things', 'status', 'n'))).to.equal(true);
  });

  it('match sub-resources as resource/subresource or */subresource, never by the parent alone', () => {
    expect(ruleAllows({ apiGroups: [''], resources: ['pods'], verbs: ['get'] }, res('get', '', 'pods', 'log'))).to.equal(false);
    expect(ruleAllows({ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }, res('get', '', 'pods', 'log'))).to.equal(true);
    expect(ruleAllows({ apiGroups: [''], resources: ['*/log'], verbs: ['get'] }, res('get', '', 'pods', 'log'))).to.equal(true);
    expect(ruleAllows({ apiGroups: [''], resources: ['*/log'], verbs: ['get'] }, res('get', '', 'pods'))).to.equal(false);
  });

  it('match resourceNames when given; none means any name', () => {
    const rule: PolicyRule = { apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'], verbs: ['get'] };
    expect(ruleAllows(rule, res('get', '', 'configmaps', '', 'a'))).to.equal(true);
    expect(ruleAllows(rule, res('get', '', 'configmaps', '', 'b'))).to.equal(false);
    expect(ruleAllows(rule, res('get', '', 'configmaps'))).to.equal(false);
  });

  it('match paths exactly, by *, or by a * suffix', () => {
    const rule: PolicyRule = { nonResourceURLs: ['/healthz', '/apis/*'], verbs: ['get'] };
    expect(ruleAllows(rule, path('get', '/healthz'))).to.equal(true);
    expect(ruleAllows(rule, path('get', '/healthz/etcd'))).to.equal(false);
    expect(ruleAllows(rule, path('get', '/apis/apps/v1'))).to.equal(true);
    expect(ruleAllows(rule, path('post', '/healthz'))).to.equal(false);
    expect(ruleAllows({ nonResourceURLs: ['*'], verbs: ['*'] }, path('delete', '/anything'))).to.equal(true);
    expect(ruleAllows(rule, res('get', '', 'healthz'))).to.equal(false);
  });

  it('subjects: users and groups by name, service accounts by namespace and name', () => {
    const user = { username: 'system:serviceaccount:ns:robot', groups: ['system:serviceaccounts'] };
    expect(appliesTo(user, { kind: 'ServiceAccount', name: 'robot', namespace: 'ns' }, '')).to.equal(true);
    expect(appliesTo(user, { kind: 'ServiceAccount', name: 'robot' }, 'ns')).to.equal(true);
    expect(appliesTo(user, { kind: 'ServiceAccount', name: 'robot' }, '')).to.equal(false);
    expect(appliesTo(user, { kind: 'Group', name: 'system:serviceaccounts' }, '')).to.equal(true);
    expect(appliesTo(user, { kind: 'User', name: 'robot' }, '')).to.equal(false);
  });
});

describe('RBAC escalation checks', () => {
  const held: PolicyRule[] = [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['secrets'], resourceNames: ['s1'], verbs: ['get'] },
    { apiGroups: ['apps'], resources: ['*/scale'], verbs: ['get'] },
    { nonResourceURLs: ['/apis/*'], verbs: ['get'] },
  ];

  it('covers what is held, including */sub and path prefixes', () => {
    expect(uncovered(held, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }])).to.deep.equal([]);
    expect(uncovered(held, [{ apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['get'] }])).to.deep.equal([]);
    expect(uncovered(held, [{ nonResourceURLs: ['/apis/apps'], verbs: ['get'] }])).to.deep.equal([]);
    expect(uncovered(held, [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['s1'], verbs: ['get'] }])).to.deep.equal([]);
  });

  it('finds each missing permission: verbs, wildcards, widened names', () => {
    expect(uncovered(held, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'delete', 'update'] }]))
      .to.deep.equal([{ apiGroups: [''], resources: ['configmaps'], verbs: ['delete'] }, { apiGroups: [''], resources: ['configmaps'], verbs: ['update'] }]);
    expect(uncovered(held, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }])).to.have.length(1);
    expect(uncovered(held, [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }])).to.deep.equal([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    expect(uncovered(held, [{ nonResourceURLs: ['/api'], verbs: ['get'] }])).to.deep.equal([{ nonResourceURLs: ['/api'], verbs: ['get'] }]);
  });

  it('merges missing permissions per group and resource and words the refusal as upstream', () => {
    const missing = compact(uncovered(held, [{ apiGroups: [''], resources: ['configmaps', 'pods'], verbs: ['delete', 'update'] }]));
    expect(missing.map(compactString)).to.deep.equal([
      '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete" "update"]}', '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "update"]}',
    ]);
    expect(escalationMessage('bob', ['dev', 'system:authenticated'], [...missing, { nonResourceURLs: ['/x'], verbs: ['get'] }], [])).to.equal(
      'user "bob" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
      + '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete" "update"]}\n{APIGroups:[""], Resources:["pods"], Verbs:["delete" "update"]}\n'
      + '{NonResourceURLs:["/x"], Verbs:["get"]}');
  });
});

describe('rules reviews through the chain', () => {
  it('an authorizer that cannot list rules makes the answer incomplete', async () => {
    const opaque: Authorizer = { authorize: async () => verdict('NO_OPINION') };
    expect((await new UnionAuthorizer([new AlwaysDenyAuthorizer()]).rulesFor({ username: 'u', uid: '', groups: [], extra: {} }, 'ns')).incomplete).to.equal(false);
    expect((await new UnionAuthorizer([new AlwaysDenyAuthorizer(), opaque]).rulesFor({ username: 'u', uid: '', groups: [], extra: {} }, 'ns')).incomplete).to.equal(true);
  });
});

type Obj = Record<string, any>;
const testdata = (name: string): Obj[] =>
  YAML.parse(readFileSync(fileURLToPath(new URL(`../../../test/unit/testdata/bootstrappolicy/${name}.yaml`, import.meta.url)), 'utf8')).items;
const normalized = (rules: PolicyRule[] | null | undefined): string[] =>
  (rules ?? []).map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => [k, [...(v as string[])].sort()])))).sort();
const keyOf = (o: Obj) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

describe('the default RBAC policy matches upstream', () => {
  const ours = defaultPolicy();
  const byKey = (list: Obj[]) => new Map(list.map((o) => [keyOf(o), o]));

  function compareRoles(file: string, mine: Obj[], only?: (o: Obj) => boolean): void {
    const theirs = testdata(file).filter((o) => !only || only(o));
    const found = byKey(mine);
    expect(theirs.length).to.be.greaterThan(0);
    for (const upstream of theirs) {
      const role = found.get(keyOf(upstream));
      expect(role, `${file}: ${keyOf(upstream)}`).to.not.equal(undefined);
      expect(normalized(role!.rules), keyOf(upstream)).to.deep.equal(normalized(upstream.rules));
      expect(role!.metadata.labels).to.deep.equal(upstream.metadata.labels);
      expect(role!.metadata.annotations).to.deep.equal(upstream.metadata.annotations);
      expect(role!.aggregationRule, keyOf(upstream)).to.deep.equal(upstream.aggregationRule);
    }
  }

  function compareBindings(file: string, mine: Obj[], only?: (o: Obj) => boolean): void {
    const found = byKey(mine);
    for (const upstream of testdata(file).filter((o) => !only || only(o))) {
      const binding = found.get(keyOf(upstream));
      expect(binding, `${file}: ${keyOf(upstream)}`).to.not.equal(undefined);
      expect(binding!.roleRef).to.deep.equal(upstream.roleRef);
      expect(binding!.metadata.labels).to.deep.equal(upstream.metadata.labels);
      // Upstream's subjects, and the controller-manager's own identity where it runs the controller.
      expect(binding!.subjects).to.deep.include.members(upstream.subjects ?? []);
      const extra = (binding!.subjects as Obj[]).filter((s) => !(upstream.subjects ?? []).some((u: Obj) => u.name === s.name && u.kind === s.kind));
      expect(extra.every((s) => s.kind === 'User' && s.name === 'system:kube-controller-manager'), keyOf(upstream)).to.equal(true);
    }
  }

  const controllerRole = (o: Obj) => CONTROLLERS_WITH_ROLES.map(controllerRoleName).includes(o.metadata.name);
  const isController = (o: Obj) => String(o.metadata.name).startsWith('system:controller:');

  it('cluster roles, rule by rule, and nothing more', () => {
    compareRoles('cluster-roles', ours.clusterroles);
    expect(ours.clusterroles.filter((o) => !isController(o)).map(keyOf).sort()).to.deep.equal(testdata('cluster-roles').map(keyOf).sort());
  });

  it('cluster role bindings', () => compareBindings('cluster-role-bindings', ours.clusterrolebindings));

  it('the roles and bindings of the controllers the controller-manager runs', () => {
    expect(CONTROLLERS_WITH_ROLES).to.include.members(['namespace-controller', 'generic-garbage-collector', 'clusterrole-aggregation-controller']);
    compareRoles('controller-roles', ours.clusterroles, controllerRole);
    compareBindings('controller-role-bindings', ours.clusterrolebindings, controllerRole);
    expect(ours.clusterroles.filter(isController)).to.have.length(CONTROLLERS_WITH_ROLES.length);
  });

  it('roles and bindings in svc-system and svc-public', () => {
    compareRoles('namespace-roles', ours.roles);
    expect(ours.roles.map(keyOf).sort()).to.deep.equal(testdata('namespace-roles').map(keyOf).sort());
    compareBindings('namespace-role-bindings', ours.rolebindings);
  });
});

describe('reconciliation and aggregation', () => {
  const expected = { metadata: { name: 'r', labels: { a: '1' }, annotations: { b: '2' } }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }] };

  it('adds missing rules one permission per rule, labels and annotations, and keeps what was added', () => {
    const existing = { metadata: { name: 'r', labels: { mine: 'x' } }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }, { apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] };
    const next = reconciled(existing, expected)!;
    expect(next.rules).to.deep.equal([...existing.rules, { apiGroups: [''], resources: ['pods'], verbs: ['list'] }]);
    expect(next.metadata!.labels).to.deep.equal({ a: '1', mine: 'x' });
    expect(reconciled(next, expected)).to.equal(undefined);
  });

  it('adds missing subjects of bindings', () => {
    const binding = { metadata: { name: 'b' }, roleRef: { kind: 'ClusterRole', name: 'r' }, subjects: [{ kind: 'Group', name: 'g' }] };
    const next = reconciled({ ...binding, subjects: [{ kind: 'User', name: 'u' }] }, binding)!;
    expect(next.subjects).to.deep.equal([{ kind: 'User', name: 'u' }, { kind: 'Group', name: 'g' }]);
  });

  it('an aggregated role holds each selected rule once, in role name order, never its own', () => {
    const role = (name: string, labels: Record<string, string>, rules: unknown[], extra: Obj = {}) => ({ metadata: { name, labels }, rules, ...extra });
    const all = [
      role('agg', { team: 'x' }, [{ verbs: ['own'] }], { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { team: 'x' } }] } }),
      role('b', { team: 'x' }, [{ verbs: ['b'] }, { verbs: ['a'] }]),
      role('a', { team: 'x' }, [{ verbs: ['a'] }]),
      role('c', { team: 'y' }, [{ verbs: ['c'] }]),
    ];
    expect(aggregatedRules(all[0], all)).to.deep.equal([{ verbs: ['a'] }, { verbs: ['b'] }]);
  });
});
