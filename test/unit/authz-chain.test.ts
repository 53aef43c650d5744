// The authorizers beyond RBAC, without processes: ABAC policies, the node graph
// and the Node authorizer's rules, match conditions and failure policies of
// remote authorizers, and how long a chain's verdict stays true.
import { expect } from 'chai';
import { compile } from '../../internal/cel/index.js';
import {
  AbacAuthorizer, AuthzMetrics, NodeAuthorizer, NodeGraph, UnionAuthorizer, parsePolicies, verdict, type Attributes, type Verdict,
} from '../../internal/authz/index.js';
import { GuardedAuthorizer, TimeoutError, type RemoteOptions } from '../../internal/authz/remote/guarded.js';
import { subjectAccessReview } from '../../internal/authz/remote/sar.js';
import { podEdges, pvEdges } from '../../internal/authz/node/references.js';
import { vertex } from '../../internal/authz/node/graph.js';

const user = (username: string, groups: string[] = ['system:authenticated']) => ({ username, uid: '', groups, extra: {} });
const resource = (verb: string, res: string, fields: Partial<Attributes['resource'] & object> = {}) => ({
  namespace: 'default', verb, group: '', version: 'v1', resource: res, subresource: '', name: '', fieldSelector: '', labelSelector: '', ...fields,
});
const asUser = (name: string, r: ReturnType<typeof resource>, groups?: string[]): Attributes => ({ user: user(name, groups), resource: r });

describe('authorizers beyond RBAC', () => {
  describe('ABAC', () => {
    const policies = parsePolicies([
      '# comments and blank lines are skipped',
      '',
      '{"apiVersion": "abac.authorization.svc.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "*", "resource": "*", "apiGroup": "*"}}',
      '{"apiVersion": "abac.authorization.svc.io/v1beta1", "kind": "Policy", "spec": {"group": "readers", "namespace": "projectA", "resource": "pods", "apiGroup": "", "readonly": true}}',
      '{"apiVersion": "abac.authorization.svc.io/v1beta1", "kind": "Policy", "spec": {"user": "*", "nonResourcePath": "/version", "readonly": true}}',
      '{"user": "legacy"}',
    ].join('\n'));
    const abac = new AbacAuthorizer(policies);
    const decide = async (a: Attributes) => (await abac.authorize(a)).decision;

    it('allows a user everything a wildcard policy grants', async () => {
      expect(await decide(asUser('alice', resource('delete', 'secrets')))).to.equal('ALLOW');
      expect(await decide(asUser('bob', resource('get', 'secrets')))).to.equal('NO_OPINION');
      expect((await abac.authorize(asUser('bob', resource('get', 'secrets')))).reason).to.equal('No policy matched.');
    });

    it('narrows by group, namespace, resource, API group and read-only verbs', async () => {
      const reader = (verb: string, fields = {}) => asUser('carol', resource(verb, 'pods', { namespace: 'projectA', ...fields }), ['readers']);
      expect(await decide(reader('list'))).to.equal('ALLOW');
      expect(await decide(reader('create'))).to.equal('NO_OPINION');
      expect(await decide(reader('get', { namespace: 'projectB' }))).to.equal('NO_OPINION');
      expect(await decide(reader('get', { group: 'apps' }))).to.equal('NO_OPINION');
    });

    it('a * user means every authenticated user, not the anonymous one', async () => {
      const version = (groups: string[]) => ({ user: user('someone', groups), nonResource: { path: '/version', verb: 'get' } });
      expect(await decide(version(['system:authenticated']))).to.equal('ALLOW');
      expect(await decide(version(['system:unauthenticated']))).to.equal('NO_OPINION');
    });

    it('reads the unversioned legacy form: empty fields match every namespace, resource and path', async () => {
      expect(await decide(asUser('legacy', resource('create', 'configmaps', { group: 'apps' })))).to.equal('ALLOW');
      expect(await decide({ user: user('legacy'), nonResource: { path: '/healthz', verb: 'get' } })).to.equal('ALLOW');
    });

    it('names the bad line of a policy file', () => {
      expect(() => parsePolicies('{"user":"a"}\n{"apiVersion":"abac.authorization.svc.io/v2","kind":"Policy"}', 'p.jsonl'))
        .to.throw('error reading policy file p.jsonl, line 2: unknown apiVersion');
      expect(() => parsePolicies('not json')).to.throw('line 1');
    });
  });

  describe('Node', () => {
    const graph = new NodeGraph();
    const node = new NodeAuthorizer(graph);
    const n1 = user('system:node:n1', ['system:nodes', 'system:authenticated']);
    const decide = async (r: ReturnType<typeof resource>) => (await node.authorize({ user: n1, resource: r })).decision;
    const pod = (name: string, nodeName: string, spec: Record<string, unknown> = {}) =>
      ({ metadata: { name, namespace: 'default' }, spec: { nodeName, containers: [], ...spec } });

    it('has no opinion for users that are not nodes', async () => {
      expect((await node.authorize(asUser('system:node:n1', resource('get', 'nodes', { name: 'n1' })))).decision).to.equal('NO_OPINION');
    });

    it('relates what a bound pod uses, shared edges surviving one removal', async () => {
      graph.set('p1', podEdges(pod('p1', 'n1', {
        serviceAccountName: 'sa', imagePullSecrets: [{ name: 'pull' }],
        volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'claim' } }, { name: 'cm', projected: { sources: [{ configMap: { name: 'cfg' } }] } }],
      })));
      graph.set('p2', podEdges(pod('p2', 'n1', { imagePullSecrets: [{ name: 'pull' }] })));
      graph.set('pv', pvEdges({ metadata: { name: 'vol' }, spec: { claimRef: { namespace: 'default', name: 'claim' }, csi: { nodePublishSecretRef: { name: 'csi', namespace: 'default' } } } }));
      expect(await decide(resource('get', 'secrets', { name: 'pull' }))).to.equal('ALLOW');
      expect(await decide(resource('get', 'configmaps', { name: 'cfg' }))).to.equal('ALLOW');
      expect(await decide(resource('get', 'persistentvolumeclaims', { name: 'claim' }))).to.equal('ALLOW');
      expect(await decide(resource('get', 'persistentvolumes', { name: 'vol', namespace: '' }))).to.equal('ALLOW');
      expect(await decide(resource('get', 'secrets', { name: 'csi' }))).to.equal('ALLOW');
      expect(await decide(resource('create', 'serviceaccounts', { name: 'sa', subresource: 'token' }))).to.equal('ALLOW');
      expect(await decide(resource('get', 'serviceaccounts', { name: 'sa' }))).to.equal('NO_OPINION');
      graph.set('p1', []);
      expect(graph.hasPath(vertex('secret', 'default', 'pull'), 'n1')).to.equal(true);
      expect(await decide(resource('get', 'configmaps', { name: 'cfg' }))).to.equal('NO_OPINION');
      graph.set('p2', []);
      expect(await decide(resource('get', 'secrets', { name: 'pull' }))).to.equal('NO_OPINION');
    });

    it('grants the node rules and nothing else', async () => {
      expect(await decide(resource('create', 'events'))).to.equal('ALLOW');
      expect(await decide(resource('create', 'tokenreviews', { group: 'authentication.svc.io', namespace: '' }))).to.equal('ALLOW');
      expect(await decide(resource('list', 'services'))).to.equal('ALLOW');
      expect(await decide(resource('get', 'endpoints', { name: 'e' }))).to.equal('ALLOW');
      expect(await decide(resource('delete', 'services', { name: 's' }))).to.equal('NO_OPINION');
      expect(await decide(resource('get', 'deployments', { group: 'apps', name: 'd' }))).to.equal('NO_OPINION');
    });

    it('lists resource slices of its own only, by the nodeName selector', async () => {
      const slices = (selector: string) => resource('list', 'resourceslices', { group: 'resource.svc.io', namespace: '', fieldSelector: selector });
      expect(await decide(slices('nodeName=n1'))).to.equal('ALLOW');
      expect(await decide(slices('nodeName=n2'))).to.equal('NO_OPINION');
      expect(await decide(slices('nodeName!=n1'))).to.equal('NO_OPINION');
    });
  });

  describe('remote authorizers', () => {
    const metrics = new AuthzMetrics();
    const options = (over: Partial<RemoteOptions> = {}): RemoteOptions => ({
      type: 'Webhook', name: 'hook', authorizedTTLMs: 60_000, unauthorizedTTLMs: 1_000, timeoutMs: 1_000, failurePolicy: 'NoOpinion', matchConditions: [], ...over,
    });
    const counting = (answer: Verdict | Error) => {
      const calls: Attributes[] = [];
      return { calls, call: async (a: Attributes) => { calls.push(a); if (answer instanceof Error) throw answer; return answer; } };
    };
    const request = asUser('alice', resource('get', 'pods', { name: 'p' }));
    const conditions = (...expressions: string[]) => expressions.map((e) => compile(e, { variables: ['request'] }));

    it('keeps answers for their TTLs and says so', async () => {
      const remote = counting(verdict('ALLOW', 'ok'));
      const hook = new GuardedAuthorizer(options(), remote.call, metrics);
      expect(await hook.authorize(request)).to.deep.include({ decision: 'ALLOW', validity: { ttlMs: 60_000 } });
      const again = await hook.authorize(request);
      expect(again.decision).to.equal('ALLOW');
      expect((again.validity as { ttlMs: number }).ttlMs).to.be.within(1, 60_000);
      expect(remote.calls).to.have.length(1);
    });

    it('a false match condition skips the remote end; all true asks it', async () => {
      const remote = counting(verdict('DENY', 'no'));
      const hook = new GuardedAuthorizer(options({ matchConditions: conditions("request.user == 'alice'", "'system:authenticated' in request.groups",
        "request.resourceAttributes.namespace == 'default'") }), remote.call, metrics);
      expect((await hook.authorize(request)).decision).to.equal('DENY');
      expect((await hook.authorize(asUser('bob', resource('get', 'pods')))).decision).to.equal('NO_OPINION');
      expect(remote.calls).to.have.length(1);
    });

    it('a match condition error with no false denies under Deny and skips under NoOpinion; a false still skips', async () => {
      const failing = conditions("request.extra['missing'][0] == 'x'");
      const deny = new GuardedAuthorizer(options({ failurePolicy: 'Deny', matchConditions: failing }), counting(verdict('ALLOW')).call, metrics);
      const denied = await deny.authorize(request);
      expect(denied.decision).to.equal('DENY');
      expect(denied.reason).to.contain('match condition error');
      const skip = new GuardedAuthorizer(options({ matchConditions: failing }), counting(verdict('ALLOW')).call, metrics);
      expect((await skip.authorize(request)).decision).to.equal('NO_OPINION');
      const withFalse = new GuardedAuthorizer(options({ failurePolicy: 'Deny', matchConditions: [...failing, ...conditions("request.user == 'nobody'")] }), counting(verdict('ALLOW')).call, metrics);
      expect((await withFalse.authorize(request)).decision).to.equal('NO_OPINION');
      expect(await metrics.registry.metrics()).to.match(/apiserver_authorization_match_condition_evaluation_errors_total\{type="Webhook",name="hook"\} 2/);
    });

    it('a failed call is no opinion, or a denial under Deny, and is never kept', async () => {
      const down = counting(new TimeoutError('slow'));
      const open = await new GuardedAuthorizer(options(), down.call, metrics).authorize(request);
      expect(open).to.deep.include({ decision: 'NO_OPINION', validity: 'uncacheable' });
      const closed = new GuardedAuthorizer(options({ failurePolicy: 'Deny' }), down.call, metrics);
      expect((await closed.authorize(request)).decision).to.equal('DENY');
      expect((await closed.authorize(request)).decision).to.equal('DENY');
      expect(down.calls).to.have.length(3);
      expect(await metrics.registry.metrics()).to.contain('apiserver_authorization_webhook_evaluations_total{name="hook",result="timeout"} 3');
    });

    it('asks v1 with groups and v1beta1 with group, selectors as requirements', () => {
      const list = asUser('alice', resource('list', 'pods', { fieldSelector: 'spec.nodeName=n1', labelSelector: 'app in (a,b),!gone' }), ['dev']);
      const v1 = subjectAccessReview(list, 'v1') as any;
      expect(v1.apiVersion).to.equal('authorization.svc.io/v1');
      expect(v1.spec.groups).to.deep.equal(['dev']);
      expect(v1.spec.resourceAttributes.fieldSelector).to.deep.equal({ requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }] });
      expect(v1.spec.resourceAttributes.labelSelector.requirements).to.deep.equal([
        { key: 'app', operator: 'In', values: ['a', 'b'] }, { key: 'gone', operator: 'DoesNotExist' }]);
      const beta = subjectAccessReview(list, 'v1beta1') as any;
      expect(beta.apiVersion).to.equal('authorization.svc.io/v1beta1');
      expect(beta.spec.group).to.deep.equal(['dev']);
      expect(beta.spec).to.not.have.property('groups');
    });
  });

  describe('decisions for any name', () => {
    const fixed = (v: Verdict) => ({ authorize: async () => v });
    const a = asUser('u', resource('get', 'configmaps', { name: 'one' }));
    it('hold for any name only when every authorizer consulted says so, those with no opinion included', async () => {
      const chain = (...vs: Verdict[]) => new UnionAuthorizer(vs.map(fixed)).authorize(a);
      const any = (v: Verdict): Verdict => ({ ...v, anyName: true });
      expect((await chain(any(verdict('NO_OPINION')), any(verdict('ALLOW')))).anyName).to.equal(true);
      expect((await chain(verdict('NO_OPINION'), any(verdict('ALLOW')))).anyName).to.equal(false);
      expect((await chain(any(verdict('ALLOW')), verdict('ALLOW'))).anyName).to.equal(true);
      expect((await chain(any(verdict('NO_OPINION')), verdict('NO_OPINION'))).anyName).to.equal(false);
    });

    it('the Node authorizer looks at names for nodes only; ABAC never does', async () => {
      const node = new NodeAuthorizer(new NodeGraph());
      expect((await node.authorize(a)).anyName).to.equal(true);
      expect((await node.authorize(asUser('system:node:n1', resource('get', 'configmaps', { name: 'one' }), ['system:nodes']))).anyName).to.not.equal(true);
      const abac = new AbacAuthorizer(parsePolicies('{"user": "u"}'));
      expect((await abac.authorize(a))).to.include({ decision: 'ALLOW', anyName: true });
    });
  });

  describe('validity of a chain', () => {
    const fixed = (v: Verdict) => ({ authorize: async () => v });
    it('holds as long as the shortest-lived answer it rests on', async () => {
      const a = { user: user('u'), nonResource: { path: '/', verb: 'get' } };
      const chain = (...vs: Verdict[]) => new UnionAuthorizer(vs.map(fixed)).authorize(a);
      expect((await chain(verdict('NO_OPINION', '', undefined, 'policy'), verdict('ALLOW', '', undefined, 'process'))).validity).to.equal('policy');
      expect((await chain(verdict('NO_OPINION', '', undefined, { ttlMs: 30 }), verdict('ALLOW', '', undefined, 'process'))).validity).to.deep.equal({ ttlMs: 30 });
      expect((await chain(verdict('NO_OPINION', '', undefined, 'uncacheable'), verdict('ALLOW', '', undefined, { ttlMs: 5 }))).validity).to.equal('uncacheable');
      expect((await chain(verdict('ALLOW', '', undefined, 'process'), verdict('ALLOW', '', undefined, 'uncacheable'))).validity).to.equal('process');
    });
  });
});
