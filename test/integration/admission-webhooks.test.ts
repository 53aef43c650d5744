import { expect } from 'chai';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';
import { AdmissionWebhook } from '../lib/admissionwebhook.js';
import { sampleSum } from '../lib/metrics.js';
import { kubectl } from '../lib/kubectl.js';
import YAML from 'yaml';
import { crdManifest } from '../lib/crd.js';

const MWC = '/apis/admissionregistration.svc.io/v1/mutatingwebhookconfigurations';
const VWC = '/apis/admissionregistration.svc.io/v1/validatingwebhookconfigurations';
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

describe('admission webhooks', function () {
  this.timeout(120_000);
  let c: Cluster;
  let wh: AdmissionWebhook;
  let seq = 0;

  before(async () => {
    [c, wh] = await Promise.all([new Cluster().start(), new AdmissionWebhook().start(['hooks.default.svc'])]);
  });
  after(async () => { await Promise.all([c?.stop(), wh?.stop()]); });

  /** A webhook for configmap creates labelled `case=<label>`, called by URL on `path` unless clientConfig is given. */
  const hook = (name: string, label: string, path: string, extra: Record<string, unknown> = {}) => ({
    name, clientConfig: { url: wh.url(path), caBundle: wh.caBundle }, sideEffects: 'None', admissionReviewVersions: ['v1'],
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    objectSelector: { matchLabels: { case: label } }, ...extra,
  });

  async function configure(collection: string, name: string, webhooks: unknown[]): Promise<void> {
    const res = await c.request('POST', collection, { body: { metadata: { name }, webhooks } });
    expect(res.status, res.text).to.equal(201);
  }

  const createConfigMap = (label: string, query = '', name = `cm-${++seq}`): Promise<Response> =>
    c.request('POST', `${CONFIGMAPS}${query}`, { body: { metadata: { name, labels: { case: label } }, data: { a: '1' } } });

  /** Creates configmaps until one gets the expected status (the configuration has reached admission): that answer. */
  async function once(label: string, status: number, query = ''): Promise<Response> {
    let last: Response | undefined;
    const ok = await waitFor(async () => (last = await createConfigMap(label, query)).status === status, 5_000, 50);
    expect(ok, `expected ${status}, last ${last?.status}: ${last?.text}`).to.equal(true);
    return last!;
  }

  it('a mutating webhook by URL patches the object, sees the full request, and its warning reaches the client', async () => {
    await configure(MWC, 'mutate-url', [hook('mutate.url.example.com', 'mutate', '/mutate')]);
    const started = Date.now();
    let res: Response | undefined;
    expect(await waitFor(async () => (res = await createConfigMap('mutate')).body?.metadata?.labels?.mutated === 'yes', 5_000, 50)).to.equal(true);
    expect(Date.now() - started, 'a new configuration applies within a second (plus a loaded machine)').to.be.below(3_000);
    expect(res!.status).to.equal(201);
    expect(String(res!.headers.warning)).to.contain('mutated added');
    const stored = await c.request('GET', `${CONFIGMAPS}/${res!.body.metadata.name}`);
    expect(stored.body.metadata.labels).to.deep.equal({ case: 'mutate', mutated: 'yes' });
    const { request } = wh.on('/mutate').at(-1);
    expect(request).to.include({ name: res!.body.metadata.name, namespace: 'default', operation: 'CREATE', dryRun: false });
    expect(request.uid).to.be.a('string').and.not.equal('');
    expect(request.kind).to.deep.equal({ group: '', version: 'v1', kind: 'ConfigMap' });
    expect(request.resource).to.deep.equal({ group: '', version: 'v1', resource: 'configmaps' });
    expect(request.requestKind).to.deep.equal(request.kind);
    expect(request.requestResource).to.deep.equal(request.resource);
    expect(request.userInfo.username).to.equal('admin');
    expect(request.object.data).to.deep.equal({ a: '1' });
    expect(request.oldObject).to.equal(null);
    expect(request.options).to.include({ kind: 'CreateOptions' });
    expect(wh.received.find((r) => r.path.startsWith('/mutate'))!.path).to.contain('timeout=10s');
    // Not selected: the object selector leaves other objects alone.
    expect((await createConfigMap('other')).body.metadata.labels).to.deep.equal({ case: 'other' });
  });

  it('a validating webhook denies with 403 naming the webhook, or with its own code and reason', async () => {
    await configure(VWC, 'deny', [hook('deny.example.com', 'deny', '/deny'), hook('invalid.example.com', 'invalid', '/deny-invalid')]);
    const denied = await once('deny', 403);
    expect(denied.body).to.include({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(denied.body.message).to.match(/^admission webhook "deny.example.com" denied the request: no cm-\d+ today$/);
    expect(String(denied.headers.warning)).to.contain('deny looked at it');
    const invalid = await once('invalid', 422);
    expect(invalid.body).to.include({ reason: 'Invalid', message: 'admission webhook "invalid.example.com" denied the request: spec is wrong' });
    expect((await createConfigMap('allowed')).status).to.equal(201);
  });

  it('a webhook past its timeout, down, or answering garbage fails the request under Fail and is skipped under Ignore', async () => {
    const down = 'https://127.0.0.1:1/down';
    await configure(VWC, 'failing', [
      hook('slow.example.com', 'slow', '/slow', { timeoutSeconds: 1 }),
      hook('slow-ignored.example.com', 'slow-ignored', '/slow', { timeoutSeconds: 1, failurePolicy: 'Ignore' }),
      { ...hook('down.example.com', 'down', ''), clientConfig: { url: down } },
      { ...hook('down-ignored.example.com', 'down-ignored', ''), clientConfig: { url: down }, failurePolicy: 'Ignore' },
      hook('garbage.example.com', 'garbage', '/garbage'),
      hook('wrong-uid.example.com', 'wrong-uid', '/wrong-uid'),
      hook('untrusted.example.com', 'untrusted', '/allow', { clientConfig: { url: wh.url('/allow') } }),
    ]);
    const slow = await once('slow', 500);
    expect(slow.body).to.include({ reason: 'InternalError' });
    expect(slow.body.message).to.match(/^Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post "https:\/\/127.0.0.1:\d+\/slow\?timeout=1s": /);
    expect((await createConfigMap('slow-ignored')).status).to.equal(201);
    expect((await once('down', 500)).body.message).to.contain('failed calling webhook "down.example.com"');
    expect((await createConfigMap('down-ignored')).status).to.equal(201);
    expect((await once('garbage', 500)).body.message).to.match(/failed calling webhook "garbage.example.com": .*not JSON/);
    expect((await once('wrong-uid', 500)).body.message).to.contain('expected response.uid=');
    expect((await once('untrusted', 500)).body.message).to.contain('failed calling webhook "untrusted.example.com"');
    const metrics = (await c.request('GET', '/metrics')).text;
    expect(sampleSum(metrics, 'apiserver_admission_webhook_fail_open_count', { name: 'slow-ignored.example.com', type: 'validating' })).to.be.at.least(1);
    expect(sampleSum(metrics, 'apiserver_admission_webhook_rejection_count', { name: 'down.example.com', type: 'validating', error_type: 'calling_webhook_error', operation: 'CREATE' })).to.be.at.least(1);
  });

  it('a webhook by service reference is reached through the EndpointSlices of the service', async () => {
    expect((await c.request('POST', '/api/v1/namespaces/default/services', {
      body: { metadata: { name: 'hooks' }, spec: { ports: [{ name: 'https', port: 443, targetPort: wh.port }] } },
    })).status).to.equal(201);
    expect((await c.request('POST', '/apis/discovery.svc.io/v1/namespaces/default/endpointslices', {
      body: {
        metadata: { name: 'hooks-1', labels: { 'svc.io/service-name': 'hooks' } }, addressType: 'IPv4',
        ports: [{ name: 'https', port: wh.port }], endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      },
    })).status).to.equal(201);
    const byService = (name: string, service: string) => ({ service: { namespace: 'default', name: service, path: `/mutate/${name}` }, caBundle: wh.caBundle });
    await configure(MWC, 'mutate-service', [
      hook('service.example.com', 'service', '', { clientConfig: byService('via-service', 'hooks') }),
      hook('no-service.example.com', 'no-service', '', { clientConfig: byService('never', 'absent') }),
    ]);
    let res: Response | undefined;
    expect(await waitFor(async () => (res = await createConfigMap('service')).body?.metadata?.labels?.['via-service'] === 'yes', 5_000, 50), res?.text).to.equal(true);
    expect((await once('no-service', 500)).body.message).to.contain('service "absent" not found');
  });

  it('namespaceSelector reads the namespace labels (a Namespace its own); matchConditions skip or fail the call', async () => {
    for (const [name, labels] of [['wh-prod', { env: 'prod' }], ['wh-dev', { env: 'dev' }]] as const) {
      expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name, labels } } })).status).to.equal(201);
    }
    await configure(VWC, 'selectors', [
      hook('prod-only.example.com', 'nssel', '/deny', { namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] } }),
      { ...hook('namespace-self.example.com', '', '/deny', { namespaceSelector: { matchLabels: { 'deny-me': 'yes' } } }),
        objectSelector: {}, rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'] }] },
      hook('conditions.example.com', 'cond', '/deny', { matchConditions: [
        { name: 'admin-only', expression: "request.userInfo.username == 'admin'" },
        { name: 'deny-prefix', expression: "object.metadata.name.startsWith('deny-')" },
      ] }),
      hook('broken-condition.example.com', 'broken', '/deny', { matchConditions: [{ name: 'broken', expression: "object.data.missing == 'x'" }] }),
    ]);
    const inNs = (ns: string, label: string) => c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { generateName: 'cm-', labels: { case: label } } } });
    expect(await waitFor(async () => (await inNs('wh-prod', 'nssel')).status === 403, 5_000, 50)).to.equal(true);
    expect((await inNs('wh-dev', 'nssel')).status).to.equal(201);
    const ns = (name: string, labels: Record<string, string>) => c.request('POST', '/api/v1/namespaces', { body: { metadata: { name, labels } } });
    expect((await ns('wh-denied', { 'deny-me': 'yes' })).body.message).to.contain('admission webhook "namespace-self.example.com" denied the request');
    expect((await ns('wh-kept', { 'deny-me': 'no' })).status).to.equal(201);
    expect((await createConfigMap('cond', '', 'deny-this')).status).to.equal(403);
    expect((await createConfigMap('cond', '', 'keep-this')).status).to.equal(201);
    const broken = await createConfigMap('broken');
    expect(broken.status).to.equal(500);
    expect(broken.body.message).to.contain('failed calling webhook "broken-condition.example.com": failed to evaluate match condition');
  });

  it('matchPolicy Equivalent catches another version of the resource, sent in the version the rule names', async () => {
    const hpaRule = [{ operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v2'], resources: ['horizontalpodautoscalers'] }];
    await configure(VWC, 'equivalent', [
      hook('equivalent.example.com', 'equivalent', '/deny', { rules: hpaRule }),
      hook('exact.example.com', 'exact', '/deny', { rules: hpaRule, matchPolicy: 'Exact' }),
    ]);
    const hpa = (label: string) => c.request('POST', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers', {
      body: { metadata: { generateName: 'h-', labels: { case: label } }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'd' }, maxReplicas: 2, targetCPUUtilizationPercentage: 60 } },
    });
    expect(await waitFor(async () => (await hpa('equivalent')).status === 403, 5_000, 50)).to.equal(true);
    const { request } = wh.on('/deny').at(-1);
    expect(request.kind).to.deep.equal({ group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' });
    expect(request.resource).to.deep.equal({ group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers' });
    expect(request.requestKind).to.deep.equal({ group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' });
    expect(request.requestResource).to.deep.equal({ group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers' });
    expect(request.object.apiVersion).to.equal('autoscaling/v2');
    expect(request.object.spec.metrics[0].resource.target.averageUtilization).to.equal(60);
    expect((await hpa('exact')).status).to.equal(201);
  });

  it('matchPolicy Equivalent catches another served version of a custom resource, converted', async () => {
    const schema = { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } };
    const crd = crdManifest('wh.example.com', 'Widget', schema);
    crd.spec.versions.push({ name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: schema } });
    expect((await c.request('POST', '/apis/apiextensions.svc.io/v1/customresourcedefinitions', { body: crd })).status).to.equal(201);
    const widgets = '/apis/wh.example.com/v1/namespaces/default/widgets';
    expect(await waitFor(async () => (await c.request('GET', widgets)).status === 200, 20_000, 100)).to.equal(true);
    await configure(VWC, 'custom-equivalent', [hook('custom.example.com', 'crd', '/deny', {
      rules: [{ operations: ['CREATE'], apiGroups: ['wh.example.com'], apiVersions: ['v2'], resources: ['widgets'] }],
    })]);
    const widget = () => c.request('POST', widgets, { body: { apiVersion: 'wh.example.com/v1', kind: 'Widget', metadata: { generateName: 'w-', labels: { case: 'crd' } }, spec: { size: 3 } } });
    expect(await waitFor(async () => (await widget()).status === 403, 5_000, 50)).to.equal(true);
    const { request } = wh.on('/deny').at(-1);
    expect(request.kind).to.deep.equal({ group: 'wh.example.com', version: 'v2', kind: 'Widget' });
    expect(request.requestKind).to.deep.equal({ group: 'wh.example.com', version: 'v1', kind: 'Widget' });
    expect(request.object).to.deep.include({ apiVersion: 'wh.example.com/v2', spec: { size: 3 } });
  });

  it('mutating webhooks run in order; IfNeeded runs again after a later one changed the object; v1beta1 reviews', async () => {
    await configure(MWC, 'a-first', [hook('first.example.com', 'reinvoke', '/mutate/first', { reinvocationPolicy: 'IfNeeded' })]);
    await configure(MWC, 'b-second', [
      hook('second.example.com', 'reinvoke', '/mutate/second'),
      hook('beta.example.com', 'beta', '/mutate/beta', { admissionReviewVersions: ['v1beta1'] }),
    ]);
    let res: Response | undefined;
    expect(await waitFor(async () => (res = await createConfigMap('reinvoke')).body?.metadata?.labels?.second === 'yes', 5_000, 50)).to.equal(true);
    expect(res!.body.metadata.labels).to.deep.equal({ case: 'reinvoke', first: 'yes', second: 'yes' });
    const name = res!.body.metadata.name;
    const calls = (path: string) => wh.on(path).filter((r) => r.request.name === name);
    expect(calls('/mutate/first')).to.have.length(2);
    expect(calls('/mutate/first')[1].request.object.metadata.labels.second).to.equal('yes');
    expect(calls('/mutate/second')).to.have.length(1);
    expect(calls('/mutate/second')[0].request.object.metadata.labels.first).to.equal('yes');
    const beta = await createConfigMap('beta');
    expect(beta.body.metadata.labels.beta).to.equal('yes');
    expect(wh.on('/mutate/beta').at(-1).apiVersion).to.equal('admission.svc.io/v1beta1');
  });

  it('a dry run reaches side-effect-free webhooks with dryRun set and stores nothing; UPDATE rules see the old object', async () => {
    await configure(MWC, 'dry', [hook('dry.example.com', 'dry', '/mutate/dry', { sideEffects: 'NoneOnDryRun' })]);
    await configure(VWC, 'updates', [hook('updates.example.com', 'update', '/deny', { rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['*'] }] })]);
    let res: Response | undefined;
    expect(await waitFor(async () => (res = await createConfigMap('dry', '?dryRun=All')).body?.metadata?.labels?.dry === 'yes', 5_000, 50)).to.equal(true);
    expect(wh.on('/mutate/dry').at(-1).request.dryRun).to.equal(true);
    expect((await c.request('GET', `${CONFIGMAPS}/${res!.body.metadata.name}`)).status).to.equal(404);
    const created = await createConfigMap('update');
    expect(created.status).to.equal(201);
    const body = { ...created.body, data: { a: '2' } };
    expect(await waitFor(async () => (await c.request('PUT', `${CONFIGMAPS}/${body.metadata.name}`, { body })).status === 403, 5_000, 50)).to.equal(true);
    const { request } = wh.on('/deny').at(-1);
    expect(request).to.include({ operation: 'UPDATE' });
    expect(request.oldObject.data).to.deep.equal({ a: '1' });
    expect(request.object.data).to.deep.equal({ a: '2' });
    expect(request.options).to.include({ kind: 'UpdateOptions' });
  });

  it('admission metrics carry the platform names and labels', async () => {
    const text = (await c.request('GET', '/metrics')).text;
    expect(sampleSum(text, 'apiserver_admission_webhook_request_total', { name: 'mutate.url.example.com', type: 'admit', operation: 'CREATE', code: '200', rejected: 'false' })).to.be.at.least(1);
    expect(sampleSum(text, 'apiserver_admission_webhook_rejection_count', { name: 'deny.example.com', type: 'validating', error_type: 'no_error', rejection_code: '403' })).to.be.at.least(1);
    expect(sampleSum(text, 'apiserver_admission_webhook_admission_duration_seconds_count', { name: 'deny.example.com', type: 'validating', rejected: 'true' })).to.be.at.least(1);
    expect(sampleSum(text, 'apiserver_admission_step_admission_duration_seconds_count', { type: 'validate', operation: 'CREATE', rejected: 'true' })).to.be.at.least(1);
    expect(sampleSum(text, 'apiserver_admission_controller_admission_duration_seconds_count', { name: 'MutatingAdmissionWebhook', type: 'admit', operation: 'CREATE', rejected: 'false' })).to.be.at.least(1);
  });

  it('kubectl 1.33 applies a webhook configuration and an object it mutates', async () => {
    const config = {
      apiVersion: 'admissionregistration.svc.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'kubectl-applied' },
      webhooks: [hook('kubectl.example.com', 'kubectl', '/mutate/applied', {
        rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      })],
    };
    const k = (args: string[], stdin?: string) => kubectl(c.kubeconfig, args, { stdin, timeoutMs: 60_000 });
    const applied = await k(['apply', '-f', '-'], YAML.stringify(config));
    expect(applied.code, applied.stderr).to.equal(0);
    expect(applied.stdout).to.contain('mutatingwebhookconfiguration.admissionregistration.svc.io/kubectl-applied created');
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kubectl-cm', namespace: 'default', labels: { case: 'kubectl' } }, data: { a: '1' } };
    let out = await k(['apply', '-f', '-'], YAML.stringify(cm));
    expect(out.code, out.stderr).to.equal(0);
    expect(await waitFor(async () => (await c.request('GET', `${CONFIGMAPS}/kubectl-cm`)).body?.metadata?.labels?.applied === 'yes', 5_000, 100)).to.equal(true);
    // A second apply keeps the label the webhook added (it is not in the applied configuration) and shows its warning.
    out = await k(['apply', '-f', '-'], YAML.stringify({ ...cm, data: { a: '2' } }));
    expect(out.code, out.stderr).to.equal(0);
    expect(out.stderr).to.contain('applied added');
    const stored = (await c.request('GET', `${CONFIGMAPS}/kubectl-cm`)).body;
    expect(stored.data).to.deep.equal({ a: '2' });
    expect(stored.metadata.labels).to.deep.equal({ case: 'kubectl', applied: 'yes' });
  });
});
