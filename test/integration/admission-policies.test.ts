import { expect } from 'chai';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';
import { AdmissionWebhook } from '../lib/admissionwebhook.js';
import { sampleSum } from '../lib/metrics.js';
import { group, labelKey } from '../../internal/names/index.js';
import { api, clientOptions, grpc, unary } from '../../internal/rpc/index.js';
import type { AdmitResponse__Output } from '../../internal/rpc/gen/svc/admission/v1/AdmitResponse.js';

const AR = `/apis/${group('admissionregistration')}/v1`;
const AR_BETA = `/apis/${group('admissionregistration')}/v1beta1`;
const NS = 'pol-a';
const PARAMS_NS = 'pol-params';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

type Obj = Record<string, any>;

/** A policy on ConfigMaps of namespaces labelled policies=on. */
function policy(name: string, spec: Obj): Obj {
  return {
    apiVersion: `${group('admissionregistration')}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name },
    spec: {
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE', 'UPDATE'] }],
        namespaceSelector: { matchLabels: { policies: 'on' } },
      },
      ...spec,
    },
  };
}

/** A binding of a policy to the ConfigMaps labelled app=<app>. */
function binding(name: string, policyName: string, app: string, spec: Obj = {}): Obj {
  return {
    metadata: { name },
    spec: { policyName, validationActions: ['Deny'], matchResources: { objectSelector: { matchLabels: { app } } }, ...spec },
  };
}

const cm = (name: string, app: string, data: Record<string, string> = {}, extra: Obj = {}): Obj =>
  ({ metadata: { name, labels: { app, ...extra.labels }, annotations: extra.annotations }, data });

/** A mutating policy on ConfigMaps of namespaces labelled policies=on. */
function mutatingPolicy(name: string, spec: Obj): Obj {
  const { spec: base } = policy(name, {});
  return { apiVersion: `${group('admissionregistration')}/v1beta1`, kind: 'MutatingAdmissionPolicy', metadata: { name }, spec: { ...base, reinvocationPolicy: 'Never', ...spec } };
}

/** A binding of a mutating policy to the ConfigMaps labelled app=<app>. */
const mutatingBinding = (name: string, policyName: string, app: string, spec: Obj = {}): Obj =>
  ({ metadata: { name }, spec: { policyName, matchResources: { objectSelector: { matchLabels: { app } } }, ...spec } });

describe('admission policies: ValidatingAdmissionPolicy and its bindings', function () {
  this.timeout(120_000);
  let c: Cluster;
  let serial = 0;

  /** Creates an object; answers the response (the object is deleted again when it was created). */
  async function tryCreate(obj: Obj): Promise<Response> {
    const body = { ...obj, metadata: { ...obj.metadata, name: `${obj.metadata.name}-${++serial}` } };
    const res = await c.request('POST', CMS, { body });
    if (res.status === 201) await c.request('DELETE', `${CMS}/${body.metadata.name}`);
    return res;
  }

  /** Creates objects until the answer has the status (a new policy or binding takes a moment); answers the last. */
  async function createUntil(obj: Obj, status: number): Promise<Response> {
    let last!: Response;
    await waitFor(async () => (last = await tryCreate(obj)).status === status, 10_000, 50);
    return last;
  }

  async function apply(path: string, obj: Obj): Promise<void> {
    const res = await c.request('POST', path, { body: obj });
    expect(res.status, res.text).to.equal(201);
  }

  before(async () => {
    // The MutatingAdmissionPolicy gate and its API version on; validating policies do not depend on either.
    const gate = '--feature-gates=MutatingAdmissionPolicy=true';
    c = await new Cluster({ flags: { gateway: [gate, `--runtime-config=${group('admissionregistration')}/v1beta1=true`], admission: [gate] } }).start();
    for (const [name, labels] of [[NS, { policies: 'on', tier: 'gold' }], [PARAMS_NS, {}]] as const) {
      expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name, labels } } })).status).to.equal(201);
    }
  });
  after(async () => { await c?.stop(); });

  describe('parameters', () => {
    before(async () => {
      await apply(`/api/v1/namespaces/${PARAMS_NS}/configmaps`, { metadata: { name: 'limits' }, data: { max: '2' } });
      await apply(`/api/v1/namespaces/${PARAMS_NS}/configmaps`, { metadata: { name: 'sel-a', labels: { limit: 'set' } }, data: { max: '5' } });
      await apply(`/api/v1/namespaces/${PARAMS_NS}/configmaps`, { metadata: { name: 'sel-b', labels: { limit: 'set' } }, data: { max: '1' } });
      await apply(`${AR}/validatingadmissionpolicies`, policy('max-keys', {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        validations: [{ expression: '!has(object.data) || object.data.size() <= int(params.data.max)', message: 'too many keys' }],
      }));
      const ref = (r: Obj) => ({ namespace: PARAMS_NS, parameterNotFoundAction: 'Deny', ...r });
      await apply(`${AR}/validatingadmissionpolicybindings`, binding('max-keys-named', 'max-keys', 'named', { paramRef: ref({ name: 'limits' }) }));
      await apply(`${AR}/validatingadmissionpolicybindings`, binding('max-keys-selected', 'max-keys', 'selected', { paramRef: ref({ selector: { matchLabels: { limit: 'set' } } }) }));
      await apply(`${AR}/validatingadmissionpolicybindings`, binding('max-keys-deny', 'max-keys', 'missing-deny', { paramRef: ref({ name: 'absent' }) }));
      await apply(`${AR}/validatingadmissionpolicybindings`, binding('max-keys-allow', 'max-keys', 'missing-allow', { paramRef: ref({ name: 'absent', parameterNotFoundAction: 'Allow' }) }));
    });

    it('a ConfigMap named by the binding is the policy\'s params', async () => {
      const refused = await createUntil(cm('named', 'named', { a: '1', b: '2', c: '3' }), 422);
      expect(refused.status).to.equal(422);
      expect(refused.body.reason).to.equal('Invalid');
      expect(refused.body.message).to.match(/^configmaps "named-\d+" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-named' denied request: too many keys$/);
      expect((await tryCreate(cm('named', 'named', { a: '1', b: '2' }))).status).to.equal(201);
    });

    it('each ConfigMap a selector finds is evaluated, and all must pass', async () => {
      expect((await createUntil(cm('sel', 'selected', { a: '1', b: '2' }), 422)).body.message).to.include("binding 'max-keys-selected' denied request: too many keys");
      expect((await tryCreate(cm('sel', 'selected', { a: '1' }))).status).to.equal(201);
    });

    it('missing params refuse under parameterNotFoundAction Deny and pass under Allow', async () => {
      const refused = await createUntil(cm('miss', 'missing-deny'), 422);
      expect(refused.body.message).to.include("ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-deny' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction");
      expect((await createUntil(cm('miss', 'missing-allow', { a: '1', b: '2', c: '3' }), 201)).status).to.equal(201);
    });
  });

  describe('validations and actions', () => {
    before(async () => {
      await apply(`${AR}/validatingadmissionpolicies`, policy('name-prefix', {
        validations: [{
          expression: "object.metadata.name.startsWith('ok-')", reason: 'Forbidden',
          messageExpression: "'name ' + object.metadata.name.split('-')[0] + ' is not ok'",
        }],
        auditAnnotations: [{ key: 'prefix', valueExpression: "object.metadata.name.split('-')[0]" }, { key: 'none', valueExpression: 'null' }],
      }));
      await apply(`${AR}/validatingadmissionpolicybindings`, binding('name-deny', 'name-prefix', 'deny'));
      await apply(`${AR}/validatingadmissionpolicybindings`, binding('name-warn', 'name-prefix', 'warn', { validationActions: ['Warn', 'Audit'] }));
    });

    it('Deny refuses with the reason\'s code and the messageExpression\'s message', async () => {
      const refused = await createUntil(cm('bad', 'deny'), 403);
      expect(refused.body).to.deep.include({ reason: 'Forbidden', code: 403 });
      expect(refused.body.message).to.match(/is forbidden: ValidatingAdmissionPolicy 'name-prefix' with binding 'name-deny' denied request: name bad is not ok$/);
      expect((await tryCreate(cm('ok', 'deny'))).status).to.equal(201);
    });

    it('Warn admits with a Warning header; Audit does not refuse', async () => {
      const admitted = await createUntil(cm('bad', 'warn'), 201);
      await waitFor(async () => String((await tryCreate(cm('bad', 'warn'))).headers.warning ?? '').includes('name-warn'), 10_000, 50);
      const again = await tryCreate(cm('bad', 'warn'));
      expect(admitted.status).to.equal(201);
      expect(String(again.headers.warning)).to.include("Validation failed for ValidatingAdmissionPolicy 'name-prefix' with binding 'name-warn': name bad is not ok");
    });

    it('failed checks are counted by policy, binding and action in the platform\'s metrics', async () => {
      const metrics = (await c.request('GET', '/metrics')).text;
      const checks = (binding: string, action: string) => sampleSum(metrics, 'apiserver_validating_admission_policy_check_total',
        { policy: 'name-prefix', policy_binding: binding, error_type: 'no_error', enforcement_action: action });
      expect(checks('name-deny', 'deny')).to.be.at.least(1);
      expect(checks('name-warn', 'warn')).to.be.at.least(1);
      expect(checks('name-warn', 'audit')).to.be.at.least(1);
      expect(checks('name-warn', 'deny')).to.equal(0);
      expect(sampleSum(metrics, 'apiserver_validating_admission_policy_check_duration_seconds_count',
        { policy: 'name-prefix', policy_binding: 'name-deny', enforcement_action: 'deny' })).to.be.at.least(1);
    });

    it('audit annotations and the Audit action\'s failures travel in the admission service\'s answer', async () => {
      const client = new api.svc.admission.v1.Admission(c.addresses.admission, grpc.credentials.createInsecure(), clientOptions);
      const kind = { group: '', version: 'v1', kind: 'ConfigMap' };
      const resource = { group: '', version: 'v1', resource: 'configmaps' };
      const object = { apiVersion: 'v1', kind: 'ConfigMap', ...cm('bad-direct', 'warn') };
      try {
        const res = await unary<AdmitResponse__Output>(client, client.Admit, {
          uid: 'u-1', kind, resource, requestKind: kind, requestResource: resource, name: 'bad-direct', namespace: NS, operation: 'CREATE',
          user: { username: 'admin', groups: ['system:masters'] }, object: Buffer.from(JSON.stringify(object)), dryRun: false,
        }, 10_000);
        expect(res.allowed, res.message).to.equal(true);
        expect(res.auditAnnotations['name-prefix/prefix']).to.equal('bad');
        expect(res.auditAnnotations).to.not.have.property('name-prefix/none');
        const failures = JSON.parse(res.auditAnnotations[labelKey('validation_failure', 'validation.policy.admission')] ?? 'null');
        expect(failures).to.deep.equal([{
          message: 'name bad is not ok', policy: 'name-prefix', binding: 'name-warn', expressionIndex: 0, validationActions: ['Warn', 'Audit'],
        }]);
      } finally {
        client.close();
      }
    });

    it('a policy change applies within a second', async () => {
      expect((await createUntil(cm('late', 'deny'), 403)).status).to.equal(403);
      const current = (await c.request('GET', `${AR}/validatingadmissionpolicies/name-prefix`)).body;
      current.spec.validations[0].expression = "object.metadata.name.startsWith('ok-') || object.metadata.name.startsWith('late-')";
      const changed = Date.now();
      expect((await c.request('PUT', `${AR}/validatingadmissionpolicies/name-prefix`, { body: current })).status).to.equal(200);
      const admitted = await createUntil(cm('late', 'deny'), 201);
      expect(admitted.status).to.equal(201);
      expect(Date.now() - changed).to.be.below(1000);
    });
  });

  describe('variables, match conditions, namespaceObject and failures', () => {
    before(async () => {
      await apply(`${AR}/validatingadmissionpolicies`, policy('team', {
        matchConditions: [{ name: 'not-exempt', expression: "!has(object.metadata.annotations) || !('exempt' in object.metadata.annotations)" }],
        variables: [{ name: 'team', expression: "has(object.metadata.labels) && 'team' in object.metadata.labels ? object.metadata.labels['team'] : ''" },
          { name: 'tagged', expression: "variables.team != ''" }],
        validations: [{ expression: 'variables.tagged', message: 'a team label is required', reason: 'RequestEntityTooLarge' }],
      }));
      await apply(`${AR}/validatingadmissionpolicybindings`, binding('team', 'team', 'team'));
      await apply(`${AR}/validatingadmissionpolicies`, policy('tier', {
        validations: [{ expression: "has(object.data) && object.data.tier == namespaceObject.metadata.labels['tier']", message: 'tier must match the namespace' }],
      }));
      await apply(`${AR}/validatingadmissionpolicybindings`, binding('tier', 'tier', 'tier'));
      const secrets = (who: string) => `${who}.group('').resource('secrets').namespace(object.metadata.namespace).check('get').allowed()`;
      await apply(`${AR}/validatingadmissionpolicies`, policy('authz', {
        validations: [{ expression: "!has(object.data) || !('k' in object.data) || object.data.k != 'deny'", message: 'k is deny' },
          { expression: secrets('authorizer'), message: 'the requester may not read secrets' },
          { expression: `!${secrets("authorizer.serviceAccount(object.metadata.namespace, 'nobody')")}`, message: 'nobody may read secrets' }],
      }));
      await apply(`${AR}/validatingadmissionpolicybindings`, binding('authz', 'authz', 'authz'));
      for (const failurePolicy of ['Fail', 'Ignore']) {
        const name = `broken-${failurePolicy.toLowerCase()}`;
        await apply(`${AR}/validatingadmissionpolicies`, policy(name, { failurePolicy, validations: [{ expression: "object.data.missing == 'x'" }] }));
        await apply(`${AR}/validatingadmissionpolicybindings`, binding(name, name, name));
      }
    });

    it('variables feed validations; a false match condition skips the policy', async () => {
      const refused = await createUntil(cm('untagged', 'team'), 413);
      expect(refused.body).to.deep.include({ reason: 'RequestEntityTooLarge', code: 413 });
      expect(refused.body.message).to.include('denied request: a team label is required');
      expect((await tryCreate(cm('tagged', 'team', {}, { labels: { team: 'blue' } }))).status).to.equal(201);
      expect((await tryCreate(cm('exempt', 'team', {}, { annotations: { exempt: 'yes' } }))).status).to.equal(201);
    });

    it('namespaceObject is the request\'s namespace', async () => {
      expect((await createUntil(cm('silver', 'tier', { tier: 'silver' }), 422)).body.message).to.include('tier must match the namespace');
      expect((await tryCreate(cm('gold', 'tier', { tier: 'gold' }))).status).to.equal(201);
    });

    it('authorizer asks the authorization service about the requester and about others', async () => {
      expect((await createUntil(cm('authz', 'authz', { k: 'deny' }), 422)).body.message).to.include("binding 'authz' denied request: k is deny");
      const admitted = await tryCreate(cm('authz', 'authz'));
      expect(admitted.status, admitted.text).to.equal(201);
    });

    it('an expression error refuses under failurePolicy Fail and is ignored under Ignore', async () => {
      const refused = await createUntil(cm('err', 'broken-fail'), 422);
      expect(refused.body.message).to.include("ValidatingAdmissionPolicy 'broken-fail' with binding 'broken-fail' denied request: expression 'object.data.missing == 'x'' resulted in error");
      expect((await tryCreate(cm('err', 'broken-ignore'))).status).to.equal(201);
    });
  });

  describe('MutatingAdmissionPolicy', () => {
    /** Creates the object until the stored result satisfies `done` (a new policy takes a moment); answers the last response. */
    async function createdUntil(obj: Obj, done: (o: Obj) => boolean): Promise<Response> {
      let last!: Response;
      await waitFor(async () => (last = await tryCreate(obj)).status === 201 && done(last.body), 10_000, 50);
      return last;
    }

    before(async () => {
      await apply(`/api/v1/namespaces/${PARAMS_NS}/configmaps`, { metadata: { name: 'owner' }, data: { team: 'blue' } });
      await apply(`${AR_BETA}/mutatingadmissionpolicies`, mutatingPolicy('owner-apply', {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConditions: [{ name: 'not-exempt', expression: "!has(object.metadata.annotations) || !('exempt' in object.metadata.annotations)" }],
        variables: [{ name: 'team', expression: 'params.data.team' }],
        mutations: [{ patchType: 'ApplyConfiguration', applyConfiguration: {
          expression: 'Object{metadata: Object.metadata{labels: {"team": variables.team}}, data: {"owner": variables.team}}',
        } }],
      }));
      await apply(`${AR_BETA}/mutatingadmissionpolicybindings`, mutatingBinding('owner-apply', 'owner-apply', 'm-apply',
        { paramRef: { name: 'owner', namespace: PARAMS_NS, parameterNotFoundAction: 'Deny' } }));
      // Runs first (name order) and again after the stamp policy changed the object.
      await apply(`${AR_BETA}/mutatingadmissionpolicies`, mutatingPolicy('a-copy', {
        reinvocationPolicy: 'IfNeeded',
        mutations: [{ patchType: 'JSONPatch', jsonPatch: {
          expression: "has(object.data) && 'stamp' in object.data ? [JSONPatch{op: 'add', path: '/data/copy', value: object.data.stamp}] : []",
        } }],
      }));
      await apply(`${AR_BETA}/mutatingadmissionpolicies`, mutatingPolicy('b-stamp', {
        mutations: [{ patchType: 'JSONPatch', jsonPatch: {
          expression: "[JSONPatch{op: 'add', path: '/metadata/annotations', value: {}}, JSONPatch{op: 'add', path: '/metadata/annotations/' + jsonpatch.escapeKey('svc/stamped'), value: 'yes'}, JSONPatch{op: 'add', path: '/data/stamp', value: 'x'}]",
        } }],
      }));
      await apply(`${AR_BETA}/mutatingadmissionpolicybindings`, mutatingBinding('a-copy', 'a-copy', 'm-stamp'));
      await apply(`${AR_BETA}/mutatingadmissionpolicybindings`, mutatingBinding('b-stamp', 'b-stamp', 'm-stamp'));
      for (const failurePolicy of ['Fail', 'Ignore']) {
        const name = `m-broken-${failurePolicy.toLowerCase()}`;
        await apply(`${AR_BETA}/mutatingadmissionpolicies`, mutatingPolicy(name, {
          failurePolicy, mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: "[JSONPatch{op: 'remove', path: '/data/absent'}]" } }],
        }));
        await apply(`${AR_BETA}/mutatingadmissionpolicybindings`, mutatingBinding(name, name, name));
      }
    });

    it('an apply configuration built from params and variables is merged into the object; a false match condition skips it', async () => {
      const created = await createdUntil(cm('m-apply', 'm-apply', { keep: 'me' }), (o) => o.data?.owner === 'blue');
      expect(created.body.metadata.labels).to.deep.equal({ app: 'm-apply', team: 'blue' });
      expect(created.body.data).to.deep.equal({ keep: 'me', owner: 'blue' });
      const exempt = await tryCreate(cm('m-apply', 'm-apply', { keep: 'me' }, { annotations: { exempt: 'yes' } }));
      expect(exempt.status).to.equal(201);
      expect(exempt.body.data).to.deep.equal({ keep: 'me' });
    });

    it('JSON patches apply in policy order; an IfNeeded policy runs again after a later one changed the object', async () => {
      const created = await createdUntil(cm('m-stamp', 'm-stamp', { a: '1' }), (o) => o.data?.copy === 'x');
      expect(created.body.data).to.deep.equal({ a: '1', stamp: 'x', copy: 'x' });
      expect(created.body.metadata.annotations).to.deep.equal({ 'svc/stamped': 'yes' });
    });

    it('a mutation that fails refuses under failurePolicy Fail, naming the policy and binding, and is skipped under Ignore', async () => {
      const refused = await createUntil(cm('m-err', 'm-broken-fail', { a: '1' }), 403);
      expect(refused.body).to.deep.include({ code: 403, reason: 'Invalid' });
      expect(refused.body.message).to.match(/^policy 'm-broken-fail' with binding 'm-broken-fail' denied request: JSON Patch: /);
      const admitted = await tryCreate(cm('m-err', 'm-broken-ignore', { a: '1' }));
      expect(admitted.status).to.equal(201);
      expect(admitted.body.data).to.deep.equal({ a: '1' });
      const metrics = (await c.request('GET', '/metrics')).text;
      const checks = (policy: string, errorType: string) => sampleSum(metrics, 'apiserver_mutating_admission_policy_check_total',
        { policy, policy_binding: policy, error_type: errorType });
      expect(checks('m-broken-fail', 'invalid_error')).to.be.at.least(1);
      expect(checks('m-broken-ignore', 'invalid_error')).to.be.at.least(1);
      expect(checks('b-stamp', 'no_error')).to.be.at.least(1);
      expect(checks('b-stamp', 'invalid_error')).to.equal(0);
    });

    describe('with a mutating webhook after the policies', () => {
      let wh: AdmissionWebhook;
      /** Records whether the object had the webhook's label when the policy ran (its reinvocationPolicy given). */
      const sawHook = (name: string, reinvocationPolicy: string, key: string) => mutatingPolicy(name, {
        reinvocationPolicy,
        mutations: [{ patchType: 'JSONPatch', jsonPatch: {
          expression: `[JSONPatch{op: 'add', path: '/data/${key}', value: 'hooked' in object.metadata.labels ? 'after-hook' : 'before-hook'}]`,
        } }],
      });

      before(async () => {
        wh = await new AdmissionWebhook().start();
        // In name order: the Never policy runs before the IfNeeded one, so only the webhook's change can call it again.
        for (const [name, reinvocation, key] of [['r1-never', 'Never', 'never'], ['r2-if-needed', 'IfNeeded', 'ifneeded']]) {
          await apply(`${AR_BETA}/mutatingadmissionpolicies`, sawHook(name, reinvocation, key));
          await apply(`${AR_BETA}/mutatingadmissionpolicybindings`, mutatingBinding(name, name, 'm-reinvoke'));
        }
        await apply(`${AR}/mutatingwebhookconfigurations`, {
          metadata: { name: 'label-hooked' },
          webhooks: [{
            name: 'hooked.example.com', clientConfig: { url: wh.url('/mutate/hooked'), caBundle: wh.caBundle }, sideEffects: 'None',
            admissionReviewVersions: ['v1'], objectSelector: { matchLabels: { app: 'm-reinvoke' } },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          }],
        });
      });
      after(async () => { await wh?.stop(); });

      it('a webhook that changed the object after an IfNeeded policy runs that policy again, not a Never one nor itself', async () => {
        const created = await createdUntil(cm('m-reinvoke', 'm-reinvoke', { a: '1' }),
          (o) => o.metadata.labels?.hooked === 'yes' && 'never' in (o.data ?? {}) && 'ifneeded' in (o.data ?? {}));
        expect(created.status, created.text).to.equal(201);
        expect(created.body.data).to.deep.equal({ a: '1', never: 'before-hook', ifneeded: 'after-hook' });
        expect(wh.on('/mutate/hooked').filter((r) => r.request.name === created.body.metadata.name)).to.have.length(1);
      });
    });

    it('a policy without mutations or reinvocationPolicy is refused', async () => {
      const bad = mutatingPolicy('m-bad', { mutations: [{ patchType: 'Merge' }] });
      delete bad.spec.reinvocationPolicy;
      const res = await c.request('POST', `${AR_BETA}/mutatingadmissionpolicies`, { body: bad });
      expect(res.status).to.equal(422);
      expect(res.body.details.causes.map((x: Obj) => x.field)).to.include.members(['spec.mutations[0].patchType', 'spec.reinvocationPolicy']);
    });
  });

  describe('status', () => {
    it('the status controller writes type-checking warnings and the observed generation', async () => {
      await apply(`${AR}/validatingadmissionpolicies`, policy('typed', {
        validations: [
          { expression: "object.data.size() > 0" },
          { expression: "object.spec.replicas > 1", messageExpression: "'x' + object.nope" },
        ],
      }));
      let status: Obj | undefined;
      expect(await waitFor(async () => {
        const got = (await c.request('GET', `${AR}/validatingadmissionpolicies/typed`)).body;
        status = got.status;
        return status?.observedGeneration === got.metadata.generation;
      }, 15_000), JSON.stringify(status)).to.equal(true);
      const warnings: Obj[] = status!.typeChecking.expressionWarnings;
      expect(warnings.map((w) => w.fieldRef)).to.deep.equal(['spec.validations[1].expression', 'spec.validations[1].messageExpression']);
      expect(warnings[0].warning).to.match(/^\/v1, Kind=ConfigMap: ERROR: <input>:1:\d+: undefined field 'spec'/);
    });
  });
});
