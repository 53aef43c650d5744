import { expect } from 'chai';
import { AdmissionError, NamespaceCache, type AdmissionRequest, type NamespaceStore, type Operation } from '../../internal/admission/index.js';
import { hooksOf, type Hook } from '../../internal/admission/webhooks/hooks.js';
import { EquivalentResources, matchRules } from '../../internal/admission/webhooks/match.js';
import { dispatch } from '../../internal/admission/webhooks/dispatch.js';
import { InvalidAnswer, readAnswer, reviewVersion } from '../../internal/admission/webhooks/review.js';
import { ServiceEndpoints } from '../../internal/admission/webhooks/services.js';
import { MutatingWebhooks, ValidatingWebhooks } from '../../internal/admission/webhooks/plugins.js';
import { AdmissionWebhook } from '../lib/admissionwebhook.js';
import { builtinRegistry } from '../../internal/registry/index.js';
import type { StorageClient } from '../../internal/storage/client.js';

const equivalents = new EquivalentResources(builtinRegistry());

function hookWith(fields: Record<string, unknown>): Hook {
  const webhook = { name: 'w.example.com', clientConfig: { url: 'https://127.0.0.1:1/' }, sideEffects: 'None', admissionReviewVersions: ['v1'], ...fields };
  return hooksOf({ metadata: { name: 'cfg' }, webhooks: [webhook] }, false)[0];
}

function request(resource: string, opts: { group?: string; version?: string; subresource?: string; namespace?: string; operation?: Operation } = {}): AdmissionRequest {
  const group = opts.group ?? '';
  const version = opts.version ?? 'v1';
  return {
    uid: 'u', kind: { group, version, kind: 'K' }, resource: { group, version, resource }, subresource: opts.subresource ?? '',
    name: 'n', namespace: opts.namespace ?? 'default', operation: opts.operation ?? 'CREATE',
    user: { username: 'u', uid: '', groups: [], extra: {} }, object: { metadata: { name: 'n' } }, dryRun: false,
  };
}

const rule = (resources: string[], extra: Record<string, unknown> = {}) =>
  ({ rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources, scope: '*', ...extra }] });

describe('admission webhooks: matching', () => {
  it('resources: `*` is every resource without sub-resource, `*/status` every status, `*/*` everything, `pods/*` pods with any', () => {
    const matches = (resources: string[], resource: string, subresource = '') => Boolean(matchRules(hookWith(rule(resources)), request(resource, { subresource }), equivalents));
    expect(matches(['*'], 'pods')).to.equal(true);
    expect(matches(['*'], 'pods', 'status')).to.equal(false);
    expect(matches(['*/status'], 'pods', 'status')).to.equal(true);
    expect(matches(['*/status'], 'pods')).to.equal(false);
    expect(matches(['*/*'], 'pods', 'binding')).to.equal(true);
    expect(matches(['pods/*'], 'pods')).to.equal(true);
    expect(matches(['pods/*'], 'services')).to.equal(false);
    expect(matches(['pods/status'], 'pods', 'log')).to.equal(false);
  });

  it('operations, groups, versions and scope', () => {
    const hook = (extra: Record<string, unknown>) => hookWith(rule(['*'], extra));
    expect(matchRules(hook({ operations: ['UPDATE'] }), request('pods'), equivalents)).to.equal(undefined);
    expect(matchRules(hook({ operations: ['CREATE', 'UPDATE'] }), request('pods'), equivalents)).to.not.equal(undefined);
    expect(matchRules(hook({ apiGroups: ['apps'] }), request('pods'), equivalents)).to.equal(undefined);
    expect(matchRules(hook({ apiVersions: ['v2'] }), request('pods'), equivalents)).to.equal(undefined);
    expect(matchRules(hook({ scope: 'Cluster' }), request('pods'), equivalents)).to.equal(undefined);
    expect(matchRules(hook({ scope: 'Cluster' }), request('nodes', { namespace: '' }), equivalents)).to.not.equal(undefined);
    expect(matchRules(hook({ scope: 'Namespaced' }), request('nodes', { namespace: '' }), equivalents)).to.equal(undefined);
    expect(matchRules(hook({ scope: 'Namespaced' }), request('pods'), equivalents)).to.not.equal(undefined);
  });

  it('no webhook sees the admission configuration kinds', () => {
    const all = hookWith(rule(['*']));
    expect(matchRules(all, request('validatingwebhookconfigurations', { group: 'admissionregistration.svc.io', namespace: '' }), equivalents)).to.equal(undefined);
    expect(matchRules(all, request('validatingadmissionpolicies', { group: 'admissionregistration.svc.io', namespace: '' }), equivalents)).to.equal(undefined);
    expect(matchRules(all, request('pods'), equivalents)).to.not.equal(undefined);
  });

  it('Equivalent matches another version of the resource and converts the object both ways; Exact does not', async () => {
    const v2 = { operations: ['*'], apiGroups: ['autoscaling'], apiVersions: ['v2'], resources: ['horizontalpodautoscalers'] };
    const req = request('horizontalpodautoscalers', { group: 'autoscaling', version: 'v1' });
    req.object = { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'n' }, spec: { maxReplicas: 2, targetCPUUtilizationPercentage: 50 } };
    const invocation = matchRules(hookWith({ rules: [v2] }), req, equivalents)!;
    expect(invocation.kind).to.deep.equal({ group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' });
    const converted = await invocation.convert!.to(req.object) as any;
    expect(converted.apiVersion).to.equal('autoscaling/v2');
    expect((await invocation.convert!.back(converted) as any).spec.targetCPUUtilizationPercentage).to.equal(50);
    expect(matchRules(hookWith({ rules: [v2], matchPolicy: 'Exact' }), req, equivalents)).to.equal(undefined);
  });
});

describe('admission webhooks: dispatch and answers', () => {
  const none: NamespaceStore = { get: async () => { throw new Error('no namespaces here'); } };
  const deps = { namespaces: new NamespaceCache(none, { watch: false }), equivalents, services: new ServiceEndpoints({} as StorageClient) };

  it('refuses a dry run to a webhook with side effects as a bad request, before calling it', async () => {
    const hook = hookWith({ ...rule(['*']), sideEffects: 'Unknown' });
    const err = await dispatch(hook, { ...request('pods'), dryRun: true }, deps, () => undefined).catch((e) => e);
    expect(err).to.be.instanceOf(AdmissionError);
    expect(err).to.include({ code: 400, reason: 'BadRequest', message: 'admission webhook "w.example.com" does not support dry run' });
  });

  it('a match condition that does not compile fails the call under Fail and skips the webhook under Ignore', async () => {
    const conditions = { matchConditions: [{ name: 'bad', expression: 'object.' }] };
    const failing = await dispatch(hookWith({ ...rule(['*']), ...conditions }), request('pods'), deps, () => undefined).catch((e) => e);
    expect(failing).to.include({ code: 500, reason: 'InternalError' });
    expect(failing.message).to.contain('failed calling webhook "w.example.com": failed to evaluate match condition bad');
    let skipped = false;
    expect(await dispatch(hookWith({ ...rule(['*']), ...conditions, failurePolicy: 'Ignore' }), request('pods'), deps, () => { skipped = true; })).to.equal(undefined);
    expect(skipped).to.equal(true);
  });

  it('checks the answer: its kind, uid, and that only mutating webhooks patch', () => {
    const ok = { apiVersion: 'admission.svc.io/v1', kind: 'AdmissionReview', response: { uid: 'u', allowed: true } };
    expect(readAnswer(ok, 'v1', 'u', false).allowed).to.equal(true);
    expect(readAnswer({ ...ok, apiVersion: 'admission.k8s.io/v1' }, 'v1', 'u', false).allowed).to.equal(true);
    expect(() => readAnswer({ ...ok, kind: 'Other' }, 'v1', 'u', false)).to.throw(InvalidAnswer);
    expect(() => readAnswer(ok, 'v1', 'other', false)).to.throw(InvalidAnswer, 'expected response.uid="other"');
    const patch = Buffer.from(JSON.stringify([{ op: 'add', path: '/a', value: 1 }])).toString('base64');
    const patching = { ...ok, response: { ...ok.response, patch, patchType: 'JSONPatch' } };
    expect(readAnswer(patching, 'v1', 'u', true).patch).to.deep.equal([{ op: 'add', path: '/a', value: 1 }]);
    expect(() => readAnswer(patching, 'v1', 'u', false)).to.throw(InvalidAnswer, 'validating webhooks may not return patches');
    expect(() => readAnswer({ ...ok, response: { ...ok.response, patch } }, 'v1', 'u', true)).to.throw(InvalidAnswer, 'patchType');
    expect(reviewVersion(['v2', 'v1beta1', 'v1'])).to.equal('v1beta1');
    expect(reviewVersion(['v2'])).to.equal(undefined);
  });

  it('timeoutSeconds defaults to 10 and is bounded by 30', () => {
    expect(hookWith({}).timeoutMs).to.equal(10_000);
    expect(hookWith({ timeoutSeconds: 3 }).timeoutMs).to.equal(3_000);
    expect(hookWith({ timeoutSeconds: 90 }).timeoutMs).to.equal(30_000);
  });
});

describe('admission webhooks: plugins over a real webhook', () => {
  const none: NamespaceStore = { get: async () => { throw new Error('no namespaces here'); } };
  const deps = { namespaces: new NamespaceCache(none, { watch: false }), equivalents, services: new ServiceEndpoints({} as StorageClient) };
  let wh: AdmissionWebhook;
  before(async () => { wh = await new AdmissionWebhook().start(); });
  after(async () => { await wh.stop(); });

  const hooks = (mutating: boolean, webhooks: Array<[string, string, Record<string, unknown>?]>, configuration = 'cfg'): Hook[] =>
    hooksOf({ metadata: { name: configuration }, webhooks: webhooks.map(([name, path, extra]) => ({
      name, clientConfig: { url: wh.url(path), caBundle: wh.caBundle }, sideEffects: 'None', admissionReviewVersions: ['v1'],
      ...rule(['*']), ...extra,
    })) }, mutating);
  const source = (list: Hook[]) => ({ waitForSync: async () => true, hooks: () => list });

  it('mutating: patches in order, records each call and the webhook audit annotations under its name', async () => {
    const plugin = new MutatingWebhooks(source(hooks(true, [['a.example.com', '/mutate/a'], ['b.example.com', '/mutate/b']])), deps, () => undefined);
    const answer = await plugin.admit(request('configmaps'));
    expect((answer.object as any).metadata.labels).to.deep.equal({ a: 'yes', b: 'yes' });
    expect(answer.warnings).to.deep.equal(['a added', 'b added']);
    expect(answer.auditAnnotations).to.deep.equal({
      'a.example.com/touched': 'yes', 'b.example.com/touched': 'yes',
      'mutation.webhook.admission.svc.io/round_0_index_0': JSON.stringify({ configuration: 'cfg', webhook: 'a.example.com', mutated: true }),
      'mutation.webhook.admission.svc.io/round_0_index_1': JSON.stringify({ configuration: 'cfg', webhook: 'b.example.com', mutated: true }),
    });
  });

  it('validating: a webhook that failed open is noted; a denial carries the warnings gathered', async () => {
    const failing = new ValidatingWebhooks(source(hooks(false, [['ok.example.com', '/allow'], ['garbage.example.com', '/garbage', { failurePolicy: 'Ignore' }]])), deps, () => undefined);
    const answer = await failing.admit(request('configmaps'));
    expect(answer.auditAnnotations).to.deep.equal({ 'failed-open.validating.webhook.admission.svc.io/round_0_index_1': 'garbage.example.com' });
    const denying = new ValidatingWebhooks(source(hooks(false, [['deny.example.com', '/deny']])), deps, () => undefined);
    const err = await denying.admit(request('configmaps')).catch((e) => e);
    expect(err).to.be.instanceOf(AdmissionError);
    expect(err).to.include({ code: 403, reason: 'Forbidden', message: 'admission webhook "deny.example.com" denied the request: no n today' });
    expect(err.warnings).to.deep.equal(['deny looked at it']);
  });
});
