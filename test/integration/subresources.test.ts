import { expect } from 'chai';
import { Cluster } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';

const DEPLOY = '/apis/apps/v1/namespaces/default/deployments';
const deployment = (name: string) => ({
  apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
});

describe('sub-resources: status, scale, finalize, binding, eviction, approval, resize, and those needing a node agent', function () {
  this.timeout(90_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('a spec write ignores status and a /status write ignores everything but status', async () => {
    const created = (await c.request('POST', DEPLOY, { body: deployment('st') })).body;
    expect(created.metadata.generation).to.equal(1);
    const spec = await c.request('PUT', `${DEPLOY}/st`, { body: { ...created, spec: { ...created.spec, replicas: 2 }, status: { replicas: 9 } } });
    expect(spec.status).to.equal(200);
    expect(spec.body.spec.replicas).to.equal(2);
    expect(spec.body.status.replicas ?? 0).to.equal(0);
    expect(spec.body.metadata.generation).to.equal(2);
    const status = await c.request('PUT', `${DEPLOY}/st/status`, { body: { ...spec.body, spec: { ...spec.body.spec, replicas: 5 }, status: { replicas: 2, readyReplicas: 1 } } });
    expect(status.status).to.equal(200);
    expect(status.body.spec.replicas).to.equal(2);
    expect(status.body.status).to.deep.include({ replicas: 2, readyReplicas: 1 });
    expect(status.body.metadata.generation).to.equal(2);
    const got = await c.request('GET', `${DEPLOY}/st/status`);
    expect(got.body.status.readyReplicas).to.equal(1);
  });

  it('status: apply and update record their manager under subresource status, own no spec, and need the object', async () => {
    await c.request('POST', DEPLOY, { body: deployment('ss') });
    const applied = await c.request('PATCH', `${DEPLOY}/ss/status?fieldManager=ctrl`, {
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'ss' }, spec: { replicas: 9 }, status: { replicas: 3, readyReplicas: 2 } },
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(applied.status).to.equal(200);
    expect(applied.body.spec.replicas).to.equal(1);
    expect(applied.body.status).to.deep.include({ replicas: 3, readyReplicas: 2 });
    const ctrl = applied.body.metadata.managedFields.find((m: any) => m.manager === 'ctrl');
    expect(ctrl).to.deep.include({ operation: 'Apply', subresource: 'status', fieldsV1: { 'f:status': { 'f:readyReplicas': {}, 'f:replicas': {} } } });
    const put = await c.request('PUT', `${DEPLOY}/ss/status?fieldManager=kubelet`, { body: { ...applied.body, status: { ...applied.body.status, availableReplicas: 2 } } });
    expect(put.status).to.equal(200);
    const kubelet = put.body.metadata.managedFields.find((m: any) => m.manager === 'kubelet');
    expect(kubelet).to.deep.include({ operation: 'Update', subresource: 'status', fieldsV1: { 'f:status': { 'f:availableReplicas': {} } } });
    const missing = await c.request('PATCH', `${DEPLOY}/nothing/status?fieldManager=ctrl`, {
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'nothing' }, status: { replicas: 1 } }, headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(missing.status).to.equal(404);
    expect(missing.body).to.include({ reason: 'NotFound', code: 404 });
  });

  it('scale: GET answers an autoscaling/v1 Scale, PATCH and PUT change spec.replicas, a negative count is 422', async () => {
    await c.request('POST', DEPLOY, { body: deployment('sc') });
    const scale = await c.request('GET', `${DEPLOY}/sc/scale`);
    expect(scale.body).to.deep.include({ kind: 'Scale', apiVersion: 'autoscaling/v1' });
    expect(scale.body.spec.replicas).to.equal(1);
    expect(scale.body.status.selector).to.equal('app=sc');
    const patched = await c.request('PATCH', `${DEPLOY}/sc/scale`, { body: { spec: { replicas: 4 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(patched.status).to.equal(200);
    expect(patched.body.spec.replicas).to.equal(4);
    expect((await c.request('GET', `${DEPLOY}/sc`)).body.spec.replicas).to.equal(4);
    const put = await c.request('PUT', `${DEPLOY}/sc/scale`, { body: { ...patched.body, spec: { replicas: 3 } } });
    expect(put.body.spec.replicas).to.equal(3);
    const stale = await c.request('PUT', `${DEPLOY}/sc/scale`, { body: { ...patched.body, spec: { replicas: 2 } } });
    expect(stale.status).to.equal(409);
    const negative = await c.request('PATCH', `${DEPLOY}/sc/scale`, { body: { spec: { replicas: -1 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(negative.status).to.equal(422);
    expect(negative.body.reason).to.equal('Invalid');
  });

  it('kubectl scale works on a Deployment, and owns spec.replicas under the scale sub-resource', async () => {
    await c.request('POST', DEPLOY, { body: deployment('ks') });
    const r = await kubectl(c.kubeconfig, ['scale', 'deployment/ks', '--replicas=3', '-n', 'default']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('deployment.apps/ks scaled');
    const stored = (await c.request('GET', `${DEPLOY}/ks`)).body;
    expect(stored.spec.replicas).to.equal(3);
    const entry = stored.metadata.managedFields.find((m: any) => m.subresource === 'scale');
    expect(entry).to.deep.include({ operation: 'Update', apiVersion: 'apps/v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } });
    expect(entry.manager).to.match(/^kubectl/);
  });

  it('scale: apply owns spec.replicas of the object; conflicts with its owner unless forced, and the owner then conflicts', async () => {
    const applyTo = (path: string, body: unknown, manager: string, force = false) => c.request('PATCH',
      `${path}?fieldManager=${manager}${force ? '&force=true' : ''}`, { body, headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    const config = { ...deployment('ap'), spec: { ...deployment('ap').spec, replicas: 2 } };
    expect((await applyTo(`${DEPLOY}/ap`, config, 'owner')).status).to.equal(201);
    const scaleBody = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'ap', namespace: 'default' }, spec: { replicas: 5 } };
    const refused = await applyTo(`${DEPLOY}/ap/scale`, scaleBody, 'autoscaler');
    expect(refused.status).to.equal(409);
    expect(refused.body).to.include({ reason: 'Conflict', code: 409 });
    expect(refused.body.message).to.equal('Apply failed with 1 conflict: conflict with "owner": .spec.replicas');
    expect(refused.body.details.causes).to.deep.equal([{ reason: 'FieldManagerConflict', message: 'conflict with "owner"', field: '.spec.replicas' }]);
    const forced = await applyTo(`${DEPLOY}/ap/scale`, scaleBody, 'autoscaler', true);
    expect(forced.status).to.equal(200);
    expect(forced.body).to.deep.include({ kind: 'Scale', spec: { replicas: 5 } });
    const stored = (await c.request('GET', `${DEPLOY}/ap`)).body;
    expect(stored.spec.replicas).to.equal(5);
    const managers = Object.fromEntries(stored.metadata.managedFields.map((m: any) => [m.manager, m]));
    expect(managers.autoscaler).to.deep.include({ operation: 'Apply', subresource: 'scale', apiVersion: 'apps/v1', fieldsV1: { 'f:spec': { 'f:replicas': {} } } });
    expect(managers.owner.fieldsV1['f:spec']).to.not.have.property('f:replicas');
    const again = await applyTo(`${DEPLOY}/ap`, config, 'owner');
    expect(again.status).to.equal(409);
    expect(again.body.details.causes[0]).to.include({ field: '.spec.replicas', message: 'conflict with "autoscaler" with subresource "scale"' });
  });

  it('scale: apply needs a fieldManager and a Scale count; other patch types are refused with 415', async () => {
    await c.request('POST', DEPLOY, { body: deployment('ap2') });
    const apply = (query: string, body: unknown) => c.request('PATCH', `${DEPLOY}/ap2/scale${query}`, { body, headers: { 'Content-Type': 'application/apply-patch+yaml' } });
    const scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'ap2' }, spec: { replicas: 2 } };
    expect((await apply('', scale)).status).to.equal(400);
    const negative = await apply('?fieldManager=m', { ...scale, spec: { replicas: -2 } });
    expect(negative.status).to.equal(422);
    expect(negative.body.details.causes[0]).to.include({ field: 'spec.replicas' });
    // The creator owns spec.replicas (1) with an Update: a different count conflicts until forced.
    const conflicting = await apply('?fieldManager=m', scale);
    expect(conflicting.status).to.equal(409);
    expect(conflicting.body.details.causes[0].message).to.match(/^conflict with ".*" using apps\/v1$/);
    expect((await apply('?fieldManager=m&force=true', scale)).body.spec.replicas).to.equal(2);
    const jsonPatch = await c.request('PATCH', `${DEPLOY}/ap2/scale`, { body: [], headers: { 'Content-Type': 'application/json-patch+json' } });
    expect(jsonPatch.status).to.equal(415);
    expect((await c.request('PATCH', `${DEPLOY}/missing/scale?fieldManager=m`, { body: scale, headers: { 'Content-Type': 'application/apply-patch+yaml' } })).status).to.equal(404);
  });

  it('a sub-resource answers 405 for a verb it does not serve and 404 when it does not exist', async () => {
    expect((await c.request('DELETE', `${DEPLOY}/sc/scale`)).status).to.equal(405);
    expect((await c.request('GET', `${DEPLOY}/sc/nothing`)).status).to.equal(404);
  });

  it('namespaces/finalize changes spec.finalizers', async () => {
    await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'fin' } } });
    const ns = (await c.request('GET', '/api/v1/namespaces/fin')).body;
    expect(ns.spec.finalizers).to.have.length(1);
    const res = await c.request('PUT', '/api/v1/namespaces/fin/finalize', { body: { ...ns, spec: { finalizers: [] } } });
    expect(res.status).to.equal(200);
    expect(res.body.spec.finalizers).to.deep.equal([]);
  });

  it('pods: binding assigns the node once, log answers a clear error, eviction deletes', async () => {
    const pod = { metadata: { name: 'p1' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    expect((await c.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).to.equal(201);
    const bind = await c.request('POST', '/api/v1/namespaces/default/pods/p1/binding', { body: { metadata: { name: 'p1' }, target: { kind: 'Node', name: 'node-a' } } });
    expect(bind.status).to.equal(201);
    expect((await c.request('GET', '/api/v1/namespaces/default/pods/p1')).body.spec.nodeName).to.equal('node-a');
    const again = await c.request('POST', '/api/v1/namespaces/default/pods/p1/binding', { body: { metadata: { name: 'p1' }, target: { kind: 'Node', name: 'node-b' } } });
    expect(again.status).to.equal(409);
    for (const [method, sub] of [['GET', 'log'], ['POST', 'exec'], ['GET', 'attach'], ['GET', 'portforward'], ['GET', 'proxy']]) {
      const res = await c.request(method, `/api/v1/namespaces/default/pods/p1/${sub}`);
      expect(res.status, sub).to.equal(400);
      expect(res.body.message, sub).to.contain('node agent');
    }
    const evict = await c.request('POST', '/api/v1/namespaces/default/pods/p1/eviction', { body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'p1' } } });
    expect(evict.status).to.equal(201);
    expect((await c.request('GET', '/api/v1/namespaces/default/pods/p1')).status).to.equal(404);
  });

  it('approval changes only the conditions of a signing request', async () => {
    const csr = { metadata: { name: 'csr1' }, spec: { request: Buffer.from('-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n').toString('base64'), signerName: 'example.com/signer', usages: ['client auth'] } };
    const created = await c.request('POST', '/apis/certificates.svc.io/v1/certificatesigningrequests', { body: csr });
    expect(created.status, created.text).to.equal(201);
    const approved = await c.request('PUT', '/apis/certificates.svc.io/v1/certificatesigningrequests/csr1/approval', { body: {
      ...created.body, spec: { ...created.body.spec, signerName: 'other.com/x' },
      status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok', lastUpdateTime: '2026-01-01T00:00:00Z' }] },
    } });
    expect(approved.status).to.equal(200);
    expect(approved.body.status.conditions[0].type).to.equal('Approved');
    expect(approved.body.spec.signerName).to.equal('example.com/signer');
  });

  it('resize changes container resources and nothing else of the pod', async () => {
    const pod = { metadata: { name: 'rz' }, spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '100m' } } }] } };
    expect((await c.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).to.equal(201);
    const res = await c.request('PATCH', '/api/v1/namespaces/default/pods/rz/resize', {
      body: { spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '200m' } } }] } }, headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.spec.containers[0].resources.requests.cpu).to.equal('200m');
    expect(res.body.spec.containers[0].image).to.equal('nginx');
  });
});
