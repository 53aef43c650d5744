import { expect } from 'chai';
import { Cluster, waitFor } from '../lib/cluster.js';
import { API_APPROVED_ANNOTATION, UPSTREAM_DOMAIN, group, ownGroup } from '../../internal/names/index.js';
import { ConversionWebhook } from '../lib/conversionwebhook.js';

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

  /** When a CRD's Established condition turned True, as the CRD controller sets it; undefined if not within 10 s. */
  async function establishedAt(name: string): Promise<number | undefined> {
    let at: number | undefined;
    await waitFor(async () => {
      const crd = (await c.request('GET', `${CRDS}/${name}`)).body;
      if (!crd?.status?.conditions?.some((x: any) => x.type === 'Established' && x.status === 'True')) return false;
      at = Date.now();
      return true;
    }, 10_000, 20);
    return at;
  }

  /** Creates a CRD and answers how long after it was seen Established its collection answered 200. */
  async function establish(crd: any, collection: string): Promise<number> {
    const created = await c.request('POST', CRDS, { body: crd });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.status.storedVersions).to.deep.equal([crd.spec.versions.find((v: any) => v.storage).name]);
    const at = await establishedAt(crd.metadata.name);
    expect(at, 'Established').to.not.equal(undefined);
    expect(await waitFor(async () => (await c.request('GET', collection)).status === 200, 1000, 20), 'served').to.equal(true);
    return Date.now() - at!;
  }

  before(async () => {
    c = await new Cluster().start();
  });
  after(async () => { await c?.stop(); });

  it('serves a CRD within a second of Established; an unknown kind of its group is 404', async () => {
    expect((await c.request('GET', WIDGETS)).body).to.include({ kind: 'Status', reason: 'NotFound', code: 404 });
    expect(await establish(widgets(), WIDGETS)).to.be.below(1000);
    expect(await establish(gizmos(), GIZMOS)).to.be.below(1000);
    const unknown = await c.request('GET', `/apis/${GROUP}/v1/namespaces/default/sprockets`);
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.include({ kind: 'Status', reason: 'NotFound', code: 404 });
  });

  it('create, get, update, list and delete a namespaced custom object, in every served version', async () => {
    const created = await c.request('POST', WIDGETS, { body: widget('w1', { replicas: 1 }) });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.deep.include({ apiVersion: `${GROUP}/v1`, kind: 'Widget' });
    expect(created.body.metadata).to.include({ name: 'w1', namespace: 'default', generation: 1 });
    expect(created.body.spec).to.deep.equal({ color: 'red', replicas: 1, size: 3 });
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
    const created = await c.request('POST', GIZMOS, { body: { apiVersion: `${GROUP}/v1`, kind: 'Gizmo', metadata: { name: 'gw' }, spec: { level: 1 } } });
    await c.request('PUT', `${GIZMOS}/gw`, { body: { ...created.body, spec: { level: 2 } } });
    await c.request('DELETE', `${GIZMOS}/gw`);
    const { events } = await watching;
    expect(events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED']);
    expect(events[1].object).to.deep.include({ apiVersion: `${GROUP}/v1`, kind: 'Gizmo' });
    expect(events[1].object.spec.level).to.equal(2);
  });

  it('watch in another served version: events carry that version; fieldValidation Warn answers a Warning per unknown field', async () => {
    const BETA = `/apis/${GROUP}/v1beta1/namespaces/default/widgets`;
    const rv = (await c.request('GET', BETA)).body.metadata.resourceVersion;
    const watching = c.watch(`${BETA}?watch=true&resourceVersion=${rv}`, { until: (evs) => evs.length >= 1, timeoutMs: 10_000 });
    const created = await c.request('POST', WIDGETS, { body: { ...widget('wv'), spec: { color: 'red', extra: 1 } } });
    expect(created.status).to.equal(201);
    expect(created.headers.warning).to.equal('299 - "unknown field \\"spec.extra\\""');
    expect(created.body.spec.extra).to.equal(undefined);
    const { events } = await watching;
    expect(events[0].type).to.equal('ADDED');
    expect(events[0].object).to.deep.include({ apiVersion: `${GROUP}/v1beta1`, kind: 'Widget' });
  });

  it('defaults apply on read from storage: a default added to the schema shows on objects stored before it', async () => {
    const created = await c.request('POST', GIZMOS, { body: { apiVersion: `${GROUP}/v1`, kind: 'Gizmo', metadata: { name: 'old' }, spec: { level: 1 } } });
    expect(created.body.spec).to.deep.equal({ level: 1 });
    const crd = (await c.request('GET', `${CRDS}/gizmos.${GROUP}`)).body;
    crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.mode = { type: 'string', default: 'auto' };
    expect((await c.request('PUT', `${CRDS}/gizmos.${GROUP}`, { body: crd })).status).to.equal(200);
    expect(await waitFor(async () => (await c.request('GET', `${GIZMOS}/old`)).body.spec.mode === 'auto', 2000, 20)).to.equal(true);
    expect((await c.request('GET', GIZMOS)).body.items.find((i: any) => i.metadata.name === 'old').spec).to.deep.equal({ level: 1, mode: 'auto' });
    expect((await c.request('DELETE', `${GIZMOS}/old`)).status).to.equal(200);
  });

  it('/status writes only status, spec writes keep it, and only spec changes count in the generation', async () => {
    const created = (await c.request('POST', WIDGETS, { body: { ...widget('ws', { replicas: 1 }), status: { phase: 'Ignored' } } })).body;
    expect(created.status).to.equal(undefined);
    const status = await c.request('PUT', `${WIDGETS}/ws/status`, { body: { ...created, spec: { color: 'green' }, status: { phase: 'Ready', replicas: 1 } } });
    expect(status.status, status.text).to.equal(200);
    expect(status.body.spec.color).to.equal('red');
    expect(status.body.status).to.deep.equal({ phase: 'Ready', replicas: 1 });
    expect(status.body.metadata.generation).to.equal(1);
    const spec = await c.request('PUT', `${WIDGETS}/ws`, { body: { ...status.body, spec: { ...status.body.spec, color: 'green' }, status: { phase: 'Lost' } } });
    expect(spec.body.status.phase).to.equal('Ready');
    expect(spec.body.metadata.generation).to.equal(2);
    const patched = await c.request('PATCH', `${WIDGETS}/ws/status`, { body: { status: { phase: 'Done' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(patched.body.status.phase).to.equal('Done');
    expect(patched.body.metadata.generation).to.equal(2);
    const same = await c.request('PUT', `${WIDGETS}/ws`, { body: patched.body });
    expect(same.body.metadata.generation).to.equal(2);
  });

  it('/scale: an autoscaling/v1 Scale from the declared paths; PUT and PATCH change the spec path', async () => {
    const created = (await c.request('POST', WIDGETS, { body: widget('sc', { replicas: 2 }) })).body;
    await c.request('PUT', `${WIDGETS}/sc/status`, { body: { ...created, status: { replicas: 2, selector: 'app=sc' } } });
    const scale = await c.request('GET', `${WIDGETS}/sc/scale`);
    expect(scale.status, scale.text).to.equal(200);
    expect(scale.body).to.deep.include({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 2 }, status: { replicas: 2, selector: 'app=sc' } });
    const patched = await c.request('PATCH', `${WIDGETS}/sc/scale`, { body: { spec: { replicas: 5 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body.spec.replicas).to.equal(5);
    const put = await c.request('PUT', `${WIDGETS}/sc/scale`, { body: { ...patched.body, spec: { replicas: 7 } } });
    expect(put.body.spec.replicas).to.equal(7);
    const obj = (await c.request('GET', `${WIDGETS}/sc`)).body;
    expect(obj.spec.replicas).to.equal(7);
    expect(obj.metadata.generation).to.equal(3);
    const negative = await c.request('PATCH', `${WIDGETS}/sc/scale`, { body: { spec: { replicas: -1 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(negative.status).to.equal(422);
    const none = await c.request('GET', `${GIZMOS}/g1/scale`);
    expect(none.status).to.equal(404);
  });

  it('media types: JSON, YAML, never Protobuf (406 alone, JSON beside it), a Protobuf body 415', async () => {
    await c.request('POST', WIDGETS, { body: widget('mt') });
    const yaml = await c.request('GET', `${WIDGETS}/mt`, { headers: { Accept: 'application/yaml' } });
    expect(yaml.headers['content-type']).to.match(/^application\/yaml/);
    expect(yaml.text).to.match(/^apiVersion: stable\.example\.com\/v1$/m);
    const protobuf = await c.request('GET', `${WIDGETS}/mt`, { headers: { Accept: 'application/vnd.kubernetes.protobuf' } });
    expect(protobuf.status).to.equal(406);
    expect(protobuf.text).to.include('NotAcceptable');
    const both = await c.request('GET', WIDGETS, { headers: { Accept: 'application/vnd.kubernetes.protobuf,application/json' } });
    expect(both.status).to.equal(200);
    expect(both.headers['content-type']).to.match(/^application\/json/);
    const body = await c.request('POST', WIDGETS, { body: Buffer.from([0x6b, 0x38, 0x73, 0x00]), headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' } });
    expect(body.status).to.equal(415);
    expect(body.body).to.include({ reason: 'UnsupportedMediaType', code: 415 });
    const fromYaml = await c.request('POST', WIDGETS, { body: `apiVersion: ${GROUP}/v1\nkind: Widget\nmetadata:\n  name: my\nspec:\n  color: pink\n`, headers: { 'Content-Type': 'application/yaml' } });
    expect(fromYaml.status, fromYaml.text).to.equal(201);
    expect(fromYaml.body.spec.color).to.equal('pink');
  });

  it('patches: merge, JSON and apply; strategic merge patch is 415', async () => {
    await c.request('POST', WIDGETS, { body: widget('pt', { replicas: 1 }) });
    const merge = await c.request('PATCH', `${WIDGETS}/pt`, { body: { spec: { color: 'black' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(merge.body.spec).to.deep.include({ color: 'black', replicas: 1 });
    const json = await c.request('PATCH', `${WIDGETS}/pt`, { body: [{ op: 'replace', path: '/spec/replicas', value: 4 }], headers: { 'Content-Type': 'application/json-patch+json' } });
    expect(json.body.spec.replicas).to.equal(4);
    const strategic = await c.request('PATCH', `${WIDGETS}/pt`, { body: { spec: { color: 'x' } }, headers: { 'Content-Type': 'application/strategic-merge-patch+json' } });
    expect(strategic.status).to.equal(415);
    expect(strategic.body).to.include({ reason: 'UnsupportedMediaType' });
    const applied = await c.request('PATCH', `${WIDGETS}/ap?fieldManager=tester`, {
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: 'ap' }, spec: { color: 'white' } }, headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(applied.status, applied.text).to.equal(201);
    expect(applied.body.metadata.managedFields[0]).to.deep.include({ manager: 'tester', operation: 'Apply', apiVersion: `${GROUP}/v1` });
    const again = await c.request('PATCH', `/apis/${GROUP}/v1beta1/namespaces/default/widgets/ap?fieldManager=tester`, {
      body: { apiVersion: `${GROUP}/v1beta1`, kind: 'Widget', metadata: { name: 'ap' }, spec: { color: 'grey' } }, headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(again.status, again.text).to.equal(200);
    expect(again.body).to.deep.include({ apiVersion: `${GROUP}/v1beta1` });
    expect(again.body.spec.color).to.equal('grey');
  });

  it('paging, label selectors and field selectors on name, namespace and selectable fields; dry run; deletecollection', async () => {
    const ns = `/apis/${GROUP}/v1/namespaces/paged/widgets`;
    await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'paged' } } });
    for (const [i, color] of ['red', 'blue', 'red', 'blue', 'red'].entries()) {
      const res = await c.request('POST', ns, { body: widget(`p${i}`, { color }, { tier: i % 2 ? 'back' : 'front' }) });
      expect(res.status, res.text).to.equal(201);
    }
    const first = await c.request('GET', `${ns}?limit=2`);
    expect(first.body.items.map((i: any) => i.metadata.name)).to.deep.equal(['p0', 'p1']);
    expect(first.body.metadata.remainingItemCount).to.equal(3);
    const second = await c.request('GET', `${ns}?limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`);
    expect(second.body.items.map((i: any) => i.metadata.name)).to.deep.equal(['p2', 'p3']);
    const byLabel = await c.request('GET', `${ns}?labelSelector=tier%3Dback`);
    expect(byLabel.body.items.map((i: any) => i.metadata.name)).to.deep.equal(['p1', 'p3']);
    const byColor = await c.request('GET', `${ns}?fieldSelector=spec.color%3Dred`);
    expect(byColor.body.items.map((i: any) => i.metadata.name)).to.deep.equal(['p0', 'p2', 'p4']);
    const byName = await c.request('GET', `/apis/${GROUP}/v1/widgets?fieldSelector=metadata.name%3Dp4,metadata.namespace%3Dpaged`);
    expect(byName.body.items.map((i: any) => i.metadata.name)).to.deep.equal(['p4']);
    const unknown = await c.request('GET', `${ns}?fieldSelector=spec.size%3D1`);
    expect(unknown.status).to.equal(400);
    const dry = await c.request('POST', `${ns}?dryRun=All`, { body: widget('dry') });
    expect(dry.status).to.equal(201);
    expect((await c.request('GET', `${ns}/dry`)).status).to.equal(404);
    const strict = await c.request('POST', `${ns}?fieldValidation=Strict`, { body: { ...widget('strict'), spec: { color: 'red', bogus: 1 } } });
    expect(strict.status).to.equal(400);
    expect(strict.body.message).to.include('bogus');
    const removed = await c.request('DELETE', `${ns}?labelSelector=tier%3Dfront`);
    expect(removed.status).to.equal(200);
    expect((await c.request('GET', ns)).body.items.map((i: any) => i.metadata.name)).to.deep.equal(['p1', 'p3']);
  });

  it('deleting a namespace deletes the custom objects in it', async () => {
    await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'doomed' } } });
    const ns = `/apis/${GROUP}/v1/namespaces/doomed/widgets`;
    expect((await c.request('POST', ns, { body: widget('in-doomed') })).status).to.equal(201);
    expect((await c.request('DELETE', '/api/v1/namespaces/doomed')).status).to.equal(200);
    expect(await waitFor(async () => (await c.request('GET', '/api/v1/namespaces/doomed')).status === 404, 30_000, 200)).to.equal(true);
    expect((await c.request('GET', `${ns}/in-doomed`)).status).to.equal(404);
  });

  it('discovery: legacy and aggregated documents list the custom group, its versions and resources', async () => {
    const groups = await c.request('GET', '/apis');
    const listed = groups.body.groups.find((g: any) => g.name === GROUP);
    expect(listed.versions.map((v: any) => v.version)).to.deep.equal(['v1', 'v1beta1']);
    expect(listed.preferredVersion.version).to.equal('v1');
    const doc = await c.request('GET', `/apis/${GROUP}`);
    expect(doc.body).to.deep.include({ kind: 'APIGroup', name: GROUP });
    const resources = await c.request('GET', `/apis/${GROUP}/v1`);
    const byName = Object.fromEntries(resources.body.resources.map((r: any) => [r.name, r]));
    expect(byName.widgets).to.deep.include({ singularName: 'widget', namespaced: true, kind: 'Widget', shortNames: ['wd'], categories: ['gadgets'] });
    expect(byName.widgets.verbs).to.have.members(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    expect(byName['widgets/status']).to.deep.include({ kind: 'Widget', verbs: ['get', 'patch', 'update'] });
    expect(byName['widgets/scale']).to.deep.include({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    expect(byName.gizmos).to.deep.include({ namespaced: false, kind: 'Gizmo' });
    for (const g of [group('apidiscovery'), 'apidiscovery.k8s.io']) {
      const aggregated = await c.request('GET', '/apis', { headers: { Accept: `application/json;g=${g};v=v2;as=APIGroupDiscoveryList` } });
      const item = aggregated.body.items.find((i: any) => i.metadata.name === GROUP);
      expect(item.versions.map((v: any) => v.version)).to.deep.equal(['v1', 'v1beta1']);
      const widgetsV1 = item.versions[0].resources.find((r: any) => r.resource === 'widgets');
      expect(widgetsV1).to.deep.include({ scope: 'Namespaced', singularResource: 'widget', shortNames: ['wd'], categories: ['gadgets'] });
      expect(widgetsV1.subresources.map((s: any) => s.subresource)).to.deep.equal(['status', 'scale']);
    }
    const openapi = await c.request('GET', '/openapi/v2');
    expect(openapi.status).to.equal(200);
  });

  it('RBAC: a custom resource is authorized by its group and resource', async () => {
    const user = { 'Impersonate-User': 'alice' };
    expect((await c.request('GET', WIDGETS, { headers: user })).status).to.equal(403);
    await c.request('POST', '/apis/rbac.authorization.svc.io/v1/namespaces/default/roles', {
      body: { metadata: { name: 'widget-reader' }, rules: [{ apiGroups: [GROUP], resources: ['widgets'], verbs: ['get', 'list'] }] },
    });
    await c.request('POST', '/apis/rbac.authorization.svc.io/v1/namespaces/default/rolebindings', {
      body: { metadata: { name: 'alice-widgets' }, roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'Role', name: 'widget-reader' }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.svc.io' }] },
    });
    expect(await waitFor(async () => (await c.request('GET', WIDGETS, { headers: user })).status === 200, 5000)).to.equal(true);
    const denied = await c.request('POST', WIDGETS, { body: widget('by-alice'), headers: user });
    expect(denied.status).to.equal(403);
    expect(denied.body.message).to.include(`widgets.${GROUP}`);
    expect((await c.request('GET', `${WIDGETS}/sc/status`, { headers: user })).status).to.equal(403);
  });

  it('garbage collection: a ConfigMap owned by a custom object goes with it', async () => {
    const owner = (await c.request('POST', WIDGETS, { body: widget('owner') })).body;
    const ref = { apiVersion: `${GROUP}/v1`, kind: 'Widget', name: 'owner', uid: owner.metadata.uid };
    const cm = await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'owned', ownerReferences: [ref] } } });
    expect(cm.status).to.equal(201);
    expect((await c.request('DELETE', `${WIDGETS}/owner`)).status).to.equal(200);
    // The collector follows kinds served since it started within its rediscovery interval (30 s).
    expect(await waitFor(async () => (await c.request('GET', '/api/v1/namespaces/default/configmaps/owned')).status === 404, 40_000, 250)).to.equal(true);
  });

  it('a version no longer served, then a deleted CRD, is no longer served nor discovered', async () => {
    const watching = c.watch(`/apis/${GROUP}/v1beta1/widgets?watch=1`, { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 300));
    const crd = (await c.request('GET', `${CRDS}/widgets.${GROUP}`)).body;
    crd.spec.versions[1].served = false;
    const put = await c.request('PUT', `${CRDS}/widgets.${GROUP}`, { body: crd });
    expect(put.status, put.text).to.equal(200);
    expect(await waitFor(async () => (await c.request('GET', `/apis/${GROUP}/v1beta1/widgets`)).status === 404, 2000, 20)).to.equal(true);
    expect((await c.request('GET', `/apis/${GROUP}`)).body.versions.map((v: any) => v.version)).to.deep.equal(['v1']);
    const watched = await watching;
    expect(watched.status).to.equal(200);
    expect(watched.ended, 'the watch of an unserved version ends').to.equal(true);
    expect((await c.request('DELETE', `${CRDS}/gizmos.${GROUP}`)).status).to.equal(200);
    expect(await waitFor(async () => (await c.request('GET', GIZMOS)).status === 404, 2000, 20)).to.equal(true);
    const resources = await c.request('GET', `/apis/${GROUP}/v1`);
    expect(resources.body.resources.map((r: any) => r.name)).to.not.include('gizmos');
  });

  it('Webhook conversion: writes stored in the storage version, reads, lists and watches converted by a real webhook', async () => {
    const webhook = await new ConversionWebhook().start();
    try {
      const schema = (field: string) => ({ openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { [field]: { type: 'string' } } } } } });
      const crd = {
        apiVersion: `${group('apiextensions')}/v1`, kind: 'CustomResourceDefinition', metadata: { name: `paints.${GROUP}` },
        spec: {
          group: GROUP, scope: 'Namespaced', names: { plural: 'paints', singular: 'paint', kind: 'Paint', listKind: 'PaintList' },
          versions: [{ name: 'v1', served: true, storage: true, schema: schema('color') }, { name: 'v2', served: true, storage: false, schema: schema('colour') }],
          conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: webhook.url(), caBundle: webhook.caBundle } } },
        },
      };
      const V2 = `/apis/${GROUP}/v2/namespaces/default/paints`;
      expect(await establish(crd, V2)).to.be.below(1000);
      const from = (await c.request('GET', V2)).body.metadata.resourceVersion;
      const watching = c.watch(`${V2}?watch=1&resourceVersion=${from}`, { until: (evs) => evs.length >= 1, timeoutMs: 10_000 });
      const created = await c.request('POST', V2, { body: { apiVersion: `${GROUP}/v2`, kind: 'Paint', metadata: { name: 'p' }, spec: { colour: 'teal' } } });
      expect(created.status, created.text).to.equal(201);
      expect(created.body).to.deep.include({ apiVersion: `${GROUP}/v2`, spec: { colour: 'teal' } });
      const v1 = await c.request('GET', `/apis/${GROUP}/v1/namespaces/default/paints/p`);
      expect(v1.body).to.deep.include({ apiVersion: `${GROUP}/v1`, spec: { color: 'teal' } });
      const got = await c.request('GET', `${V2}/p`);
      expect(got.body).to.deep.include({ apiVersion: `${GROUP}/v2`, spec: { colour: 'teal' } });
      const list = await c.request('GET', V2);
      expect(list.body.items.map((i: any) => i.spec)).to.deep.equal([{ colour: 'teal' }]);
      const { events } = await watching;
      expect(events[0]).to.deep.include({ type: 'ADDED' });
      expect(events[0].object.spec).to.deep.equal({ colour: 'teal' });
      expect(webhook.reviews.length).to.be.at.least(4);
      expect(webhook.reviews.every((r) => r.review.request.desiredAPIVersion)).to.equal(true);
    } finally {
      await webhook.stop();
    }
  });

  it('a CRD of an upstream-spelled group (x.k8s.io) is served under that name, not taken for an alias of x.svc.io', async () => {
    const upstream = `routes.${UPSTREAM_DOMAIN}`;
    const crd = gizmos();
    crd.metadata = { name: `gizmos.${upstream}`, annotations: { [API_APPROVED_ANNOTATION.upstream]: 'unapproved, test' } } as any;
    crd.spec.group = upstream;
    const collection = `/apis/${upstream}/v1/gizmos`;
    await establish(crd, collection);
    const created = await c.request('POST', collection, { body: { apiVersion: `${upstream}/v1`, kind: 'Gizmo', metadata: { name: 'g1' }, spec: { level: 1 } } });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.apiVersion).to.equal(`${upstream}/v1`);
    expect((await c.request('GET', `${collection}/g1`)).body.spec).to.deep.equal({ level: 1 });
    const doc = await c.request('GET', `/apis/${upstream}`);
    expect(doc.status).to.equal(200);
    expect(doc.body.name).to.equal(upstream);
    expect((await c.request('GET', `/apis/${ownGroup(upstream)}/v1/gizmos`)).status).to.equal(404);
  });

  it('a restarted gateway is ready only once it listed the CRDs, and serves them at once', async () => {
    await c.kill('gateway');
    await c.startService('gateway');
    expect((await c.request('GET', WIDGETS)).status).to.equal(200);
    const ready = await c.request('GET', '/readyz?verbose');
    expect(ready.text).to.include('[+]poststarthook/crd-informer-synced ok');
  });
});
