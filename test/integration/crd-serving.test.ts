import { expect } from 'chai';
import { Cluster, waitFor } from '../lib/cluster.js';
import { group } from '../../internal/names/index.js';

const CRDS = `/apis/${group('apiextensions')}/v1/customresourcedefinitions`;
const GROUP = 'stable.example.com';

/** A namespaced kind in two versions (v1 stored), with status, scale and a selectable field. */
const widgets = () => ({
  apiVersion: `${group('apiextensions')}/v1`, kind: 'CustomResourceDefinition', metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP, scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wd'], categories: ['gadgets'] },
    versions: ['v1', 'v1beta1'].map((name) => ({
      name, served: true, storage: name === 'v1',
      schema: {
        openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: { type: 'object', properties: { color: { type: 'string' }, replicas: { type: 'integer' }, size: { type: 'integer', default: 3 } } },
            status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' }, phase: { type: 'string' } } },
          },
        },
      },
      subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
      selectableFields: [{ jsonPath: '.spec.color' }],
    })),
  },
});

/** A cluster-scoped kind without sub-resources. */
const gizmos = () => ({
  apiVersion: `${group('apiextensions')}/v1`, kind: 'CustomResourceDefinition', metadata: { name: `gizmos.${GROUP}` },
  spec: {
    group: GROUP, scope: 'Cluster', names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo', listKind: 'GizmoList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { level: { type: 'integer' } } } } } } }],
  },
});

const WIDGETS = `/apis/${GROUP}/v1/namespaces/default/widgets`;
const GIZMOS = `/apis/${GROUP}/v1/gizmos`;
const widget = (name: string, spec: Record<string, unknown> = {}, labels?: Record<string, string>) =>
  ({ apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name, ...(labels ? { labels } : {}) }, spec: { color: 'red', ...spec } });

describe('custom resources: serving the kinds of CustomResourceDefinitions', function () {
  this.timeout(120_000);
  let c: Cluster;

  /** Creates a CRD and marks it Established through /status (as the CRD controller does); answers when it was established. */
  async function establish(crd: any): Promise<number> {
    const created = await c.request('POST', CRDS, { body: crd });
    expect(created.status, created.text).to.equal(201);
    const status = { ...created.body.status, acceptedNames: crd.spec.names, conditions: [{ type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: '', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] };
    const put = await c.request('PUT', `${CRDS}/${crd.metadata.name}/status`, { body: { ...created.body, status } });
    expect(put.status, put.text).to.equal(200);
    return Date.now();
  }

  before(async () => {
    c = await new Cluster({ withoutControllerManager: true }).start();
  });
  after(async () => { await c?.stop(); });

  it('serves a CRD within a second of Established, and not before', async () => {
    const created = await c.request('POST', CRDS, { body: widgets() });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.status.storedVersions).to.deep.equal(['v1']);
    const early = await c.request('GET', WIDGETS);
    expect(early.status).to.equal(404);
    expect(early.body).to.include({ kind: 'Status', reason: 'NotFound', code: 404 });
    await c.request('DELETE', `${CRDS}/widgets.${GROUP}`);
    await waitFor(async () => (await c.request('GET', `${CRDS}/widgets.${GROUP}`)).status === 404, 5000);
    const at = await establish(widgets());
    expect(await waitFor(async () => (await c.request('GET', WIDGETS)).status === 200, 1000, 20)).to.equal(true);
    expect(Date.now() - at).to.be.below(1000);
    await establish(gizmos());
    expect(await waitFor(async () => (await c.request('GET', GIZMOS)).status === 200, 1000, 20)).to.equal(true);
  });

  it('create, get, update, list and delete a namespaced custom object, in every served version', async () => {
    const created = await c.request('POST', WIDGETS, { body: widget('w1', { replicas: 1 }) });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.deep.include({ apiVersion: `${GROUP}/v1`, kind: 'Widget' });
    expect(created.body.metadata).to.include({ name: 'w1', namespace: 'default', generation: 1 });
    expect(created.body.spec).to.deep.include({ color: 'red', replicas: 1 });
    const got = await c.request('GET', `${WIDGETS}/w1`);
    expect(got.body.metadata.uid).to.equal(created.body.metadata.uid);
    const beta = await c.request('GET', `/apis/${GROUP}/v1beta1/namespaces/default/widgets/w1`);
    expect(beta.status).to.equal(200);
    expect(beta.body.apiVersion).to.equal(`${GROUP}/v1beta1`);
    expect(beta.body.spec.color).to.equal('red');
    const updated = await c.request('PUT', `/apis/${GROUP}/v1beta1/namespaces/default/widgets/w1`, { body: { ...beta.body, spec: { ...beta.body.spec, color: 'blue' } } });
    expect(updated.status, updated.text).to.equal(200);
    expect(updated.body.apiVersion).to.equal(`${GROUP}/v1beta1`);
    expect(updated.body.metadata.generation).to.equal(2);
    const list = await c.request('GET', WIDGETS);
    expect(list.body).to.deep.include({ kind: 'WidgetList', apiVersion: `${GROUP}/v1` });
    expect(list.body.items.map((i: any) => i.spec.color)).to.deep.equal(['blue']);
    const all = await c.request('GET', `/apis/${GROUP}/v1beta1/widgets`);
    expect(all.body.apiVersion).to.equal(`${GROUP}/v1beta1`);
    expect(all.body.items).to.have.length(1);
    const deleted = await c.request('DELETE', `${WIDGETS}/w1`);
    expect(deleted.status).to.equal(200);
    const gone = await c.request('GET', `${WIDGETS}/w1`);
    expect(gone.status).to.equal(404);
    expect(gone.body).to.deep.include({ reason: 'NotFound', details: { name: 'w1', group: GROUP, kind: 'widgets' } });
  });

  it('a cluster-scoped custom kind: create, get, list, delete; under a namespace it is not found', async () => {
    const created = await c.request('POST', GIZMOS, { body: { apiVersion: `${GROUP}/v1`, kind: 'Gizmo', metadata: { name: 'g1' }, spec: { level: 2 } } });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.metadata.namespace).to.equal(undefined);
    expect((await c.request('GET', `${GIZMOS}/g1`)).body.spec.level).to.equal(2);
    expect((await c.request('GET', GIZMOS)).body.items.map((i: any) => i.metadata.name)).to.deep.equal(['g1']);
    expect((await c.request('GET', `/apis/${GROUP}/v1/namespaces/default/gizmos`)).status).to.equal(404);
    expect((await c.request('DELETE', `${GIZMOS}/g1`)).status).to.equal(200);
    expect((await c.request('GET', `${GIZMOS}/g1`)).status).to.equal(404);
  });

  it('watch: events of creates, updates and deletes, also with ?watch=1 from a resourceVersion', async () => {
    const list = await c.request('GET', GIZMOS);
    const rv = list.body.metadata.resourceVersion;
    const watching = c.watch(`${GIZMOS}?watch=1&resourceVersion=${rv}`, { until: (evs) => evs.length >= 3, timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 300));
    const created = await c.request('POST', GIZMOS, { body: { apiVersion: `${GROUP}/v1`, kind: 'Gizmo', metadata: { name: 'gw' }, spec: { level: 1 } } });
    await c.request('PUT', `${GIZMOS}/gw`, { body: { ...created.body, spec: { level: 2 } } });
    await c.request('DELETE', `${GIZMOS}/gw`);
    const { events } = await watching;
    expect(events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED']);
    expect(events[1].object).to.deep.include({ apiVersion: `${GROUP}/v1`, kind: 'Gizmo' });
    expect(events[1].object.spec.level).to.equal(2);
  });
});
