import { expect } from 'chai';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';
import { AdmissionWebhook } from '../lib/admissionwebhook.js';
import { sampleSum } from '../lib/metrics.js';

const MWC = '/apis/admissionregistration.svc.io/v1/mutatingwebhookconfigurations';
const VWC = '/apis/admissionregistration.svc.io/v1/validatingwebhookconfigurations';
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

describe('admission webhooks', function () {
  this.timeout(120_000);
  let c: Cluster;
  let wh: AdmissionWebhook;
  let seq = 0;

  before(async () => {
    [c, wh] = await Promise.all([new Cluster({ withoutControllerManager: true }).start(), new AdmissionWebhook().start(['hooks.default.svc'])]);
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
});
