// What a CustomResourceDefinition publishes about its kinds, over HTTPS: the
// /openapi/v2 and /openapi/v3 documents (and their ETags and hashes following the
// CRD), Tables from its printer columns, and server-side apply merging by the
// schema's list markers.
import { expect } from 'chai';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';
import { group } from '../../internal/names/index.js';

const CRDS = `/apis/${group('apiextensions')}/v1/customresourcedefinitions`;
const GROUP = 'docs.example.com';
const NAME = `gadgets.${GROUP}`;
const DEF = 'com.example.docs.v1.Gadget';
const GADGETS = `/apis/${GROUP}/v1/namespaces/default/gadgets`;
const TABLE = `application/json;as=Table;g=${group('meta')};v=v1`;
const UPSTREAM_TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

const schema = (sizeDescription: string) => ({
  type: 'object',
  description: 'A gadget.',
  properties: {
    spec: {
      type: 'object',
      properties: {
        size: { type: 'integer', minimum: 1, description: sizeDescription },
        ports: {
          type: 'array', 'x-svc-list-type': 'map', 'x-svc-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
        },
        tags: { type: 'array', 'x-svc-list-type': 'set', items: { type: 'string' } },
        plain: { type: 'array', items: { type: 'string' } },
      },
    },
    status: {
      type: 'object',
      properties: { conditions: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' } } } } },
    },
  },
});

const COLUMNS = [
  { name: 'Size', type: 'integer', jsonPath: '.spec.size', description: 'How big it is.' },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Tags', type: 'string', jsonPath: '.spec.tags', priority: 1 },
  { name: 'Created', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

const gadgets = (sizeDescription = 'How big.') => ({
  apiVersion: `${group('apiextensions')}/v1`, kind: 'CustomResourceDefinition', metadata: { name: NAME },
  spec: {
    group: GROUP, scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetCollection' },
    versions: [
      { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema(sizeDescription) }, additionalPrinterColumns: COLUMNS, subresources: { status: {} } },
      { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: schema(sizeDescription) } },
    ],
  },
});

const gadget = (name: string, spec: Record<string, unknown>) => ({ apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name }, spec });
const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };

describe('custom resources: OpenAPI, Tables and server-side apply of CRD kinds', function () {
  this.timeout(120_000);
  let c: Cluster;

  const established = (crd: any) => ({
    ...crd, status: { ...crd.status, acceptedNames: crd.spec.names, conditions: [{ type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: '', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] },
  });

  /** Creates (or replaces the spec of) the CRD and marks it Established through /status, as the CRD controller does. */
  async function publish(crd: any): Promise<void> {
    const current = await c.request('GET', `${CRDS}/${NAME}`);
    const written = current.status === 200
      ? await c.request('PUT', `${CRDS}/${NAME}`, { body: { ...current.body, spec: crd.spec } })
      : await c.request('POST', CRDS, { body: crd });
    expect(written.status, written.text).to.be.oneOf([200, 201]);
    const put = await c.request('PUT', `${CRDS}/${NAME}/status`, { body: established(written.body) });
    expect(put.status, put.text).to.equal(200);
  }

  const v2 = () => c.request('GET', '/openapi/v2');

  before(async () => {
    c = await new Cluster({ withoutControllerManager: true }).start();
    await publish(gadgets());
    expect(await waitFor(async () => (await c.request('GET', GADGETS)).status === 200, 5000, 50)).to.equal(true);
  });
  after(async () => { await c?.stop(); });

  it('publishes the kind in /openapi/v2 with both group-version-kind markers and its paths', async () => {
    const r = await v2();
    expect(r.status).to.equal(200);
    const def = r.body.definitions[DEF];
    expect(def['x-kubernetes-group-version-kind']).to.deep.equal([{ group: GROUP, version: 'v1', kind: 'Gadget' }]);
    expect(def['x-svc-group-version-kind']).to.deep.equal([{ group: GROUP, version: 'v1', kind: 'Gadget' }]);
    expect(def.description).to.equal('A gadget.');
    expect(def.properties.metadata.$ref).to.match(/\.apimachinery\.pkg\.apis\.meta\.v1\.ObjectMeta$/);
    expect(def.properties.spec.properties.size).to.include({ type: 'integer', minimum: 1, description: 'How big.' });
    expect(def.properties.spec.properties.ports['x-kubernetes-list-map-keys']).to.deep.equal(['name']);
    expect(r.body.definitions['com.example.docs.v1beta1.Gadget']).to.not.equal(undefined);
    expect(r.body.definitions['com.example.docs.v1.GadgetCollection'].properties.items.items.$ref).to.equal(`#/definitions/${DEF}`);
    const item = r.body.paths[`${GADGETS.replace('/default/', '/{namespace}/')}/{name}`];
    expect(Object.keys(item)).to.include.members(['get', 'put', 'patch', 'delete']);
    expect(item.patch.consumes).to.not.include('application/strategic-merge-patch+json');
    expect(r.body.paths[`${GADGETS.replace('/default/', '/{namespace}/')}/{name}/status`]).to.have.property('put');
  });

  it('lists the group version in the /openapi/v3 index and serves its document with ObjectMeta', async () => {
    const index = await c.request('GET', '/openapi/v3');
    const entry = index.body.paths[`apis/${GROUP}/v1`];
    expect(entry.serverRelativeURL).to.match(new RegExp(`^/openapi/v3/apis/${GROUP}/v1\\?hash=[0-9A-F]{128}$`));
    const doc = await c.request('GET', entry.serverRelativeURL);
    expect(doc.status).to.equal(200);
    const schemas = doc.body.components.schemas;
    expect(schemas[DEF]['x-kubernetes-group-version-kind']).to.deep.equal([{ group: GROUP, version: 'v1', kind: 'Gadget' }]);
    const metaRef: string = schemas[DEF].properties.metadata.$ref;
    expect(metaRef.startsWith('#/components/schemas/')).to.equal(true);
    expect(schemas[metaRef.slice('#/components/schemas/'.length)]).to.have.property('properties');
    expect(schemas['com.example.docs.v1.GadgetCollection']).to.not.equal(undefined);
  });

  it('publishes a CRD only once it is Established', async () => {
    const crd = { ...gadgets(), metadata: { name: `widgets.${GROUP}` } };
    crd.spec = { ...crd.spec, names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' } };
    const created = await c.request('POST', CRDS, { body: crd });
    expect(created.status, created.text).to.equal(201);
    const before = await v2();
    expect(before.body.definitions['com.example.docs.v1.Widget']).to.equal(undefined);
    const put = await c.request('PUT', `${CRDS}/widgets.${GROUP}/status`, { body: established(created.body) });
    expect(put.status, put.text).to.equal(200);
    let after: Response | undefined;
    expect(await waitFor(async () => { after = await v2(); return after.headers.etag !== before.headers.etag; }, 5000, 50)).to.equal(true);
    expect(after!.body.definitions['com.example.docs.v1.Widget']['x-kubernetes-group-version-kind']).to.deep.equal([{ group: GROUP, version: 'v1', kind: 'Widget' }]);
    const doc = await c.request('GET', `/openapi/v3/apis/${GROUP}/v1`);
    expect(Object.keys(doc.body.components.schemas)).to.include.members([DEF, 'com.example.docs.v1.Widget']);
  });

  it('changes the v2 ETag and the v3 hash when the CRD changes, and drops the kind when it is removed', async () => {
    const before2 = await v2();
    const etag = before2.headers.etag;
    const hashOf = async () => (await c.request('GET', '/openapi/v3')).body.paths[`apis/${GROUP}/v1`]?.serverRelativeURL as string | undefined;
    const hash = await hashOf();
    expect((await c.request('GET', '/openapi/v2', { headers: { 'If-None-Match': String(etag) } })).status).to.equal(304);
    await publish(gadgets('How big, in inches.'));
    let after: Response | undefined;
    expect(await waitFor(async () => { after = await v2(); return after.headers.etag !== etag; }, 5000, 50)).to.equal(true);
    expect(after!.body.definitions[DEF].properties.spec.properties.size.description).to.equal('How big, in inches.');
    expect(await hashOf()).to.not.equal(hash);
    expect((await c.request('GET', '/openapi/v2', { headers: { 'If-None-Match': String(etag) } })).status).to.equal(200);
  });

  it('answers a Table of the printer columns, Name first, priorities kept, in both meta spellings', async () => {
    const created = await c.request('POST', GADGETS, { body: gadget('t1', { size: 3, tags: ['a', 'b'] }) });
    expect(created.status, created.text).to.equal(201);
    const status = await c.request('PUT', `${GADGETS}/t1/status`, { body: { ...created.body, status: { conditions: [{ type: 'Ready', status: 'True' }] } } });
    expect(status.status, status.text).to.equal(200);
    for (const accept of [TABLE, UPSTREAM_TABLE]) {
      const r = await c.request('GET', GADGETS, { headers: { Accept: accept } });
      expect(r.status, r.text).to.equal(200);
      expect(r.body).to.include({ kind: 'Table', apiVersion: accept.includes('k8s') ? 'meta.k8s.io/v1' : `${group('meta')}/v1` });
      expect(r.body.columnDefinitions.map((d: any) => [d.name, d.type, d.priority])).to.deep.equal(
        [['Name', 'string', 0], ['Size', 'integer', 0], ['Ready', 'string', 0], ['Tags', 'string', 1], ['Created', 'date', 0]]);
      expect(r.body.columnDefinitions[1].description).to.equal('How big it is.');
      const row = r.body.rows.find((x: any) => x.cells[0] === 't1');
      expect(row.cells.slice(0, 4)).to.deep.equal(['t1', 3, 'True', '["a","b"]']);
      expect(row.cells[4]).to.match(/^\d+s$/);
      expect(row.object.metadata.name).to.equal('t1');
    }
    // kubectl get -w: each watch event carries a one-row Table.
    const watch = await c.request('GET', `${GADGETS}?watch=1&timeoutSeconds=1`, { headers: { Accept: TABLE } });
    const events = watch.text.trim().split('\n').map((l) => JSON.parse(l));
    const added = events.find((e) => e.type === 'ADDED' && e.object.rows[0].cells[0] === 't1');
    expect(added.object).to.include({ kind: 'Table' });
    expect(added.object.rows[0].cells.slice(0, 3)).to.deep.equal(['t1', 3, 'True']);
    const list = await c.request('GET', GADGETS);
    expect(list.body.kind).to.equal('GadgetCollection');
    const one = await c.request('GET', `${GADGETS}/t1`, { headers: { Accept: TABLE } });
    expect(one.body.rows).to.have.length(1);
  });

  it('gives a version without printer columns the default Name and Age columns', async () => {
    const r = await c.request('GET', GADGETS.replace('/v1/', '/v1beta1/'), { headers: { Accept: TABLE } });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.columnDefinitions.map((d: any) => [d.name, d.type])).to.deep.equal([['Name', 'string'], ['Age', 'date']]);
    const row = r.body.rows.find((x: any) => x.cells[0] === 't1');
    expect(row.cells[1]).to.match(/^\d+s$/);
  });

  it('merges two appliers of a map list and a set by key; lists without markers are atomic and conflict', async () => {
    const path = `${GADGETS}/ssa?fieldManager=`;
    const one = await c.request('PATCH', `${path}one`, { headers: APPLY, body: gadget('ssa', { size: 1, ports: [{ name: 'http', port: 80 }], tags: ['a'], plain: ['x'] }) });
    expect(one.status, one.text).to.equal(201);
    const two = await c.request('PATCH', `${path}two`, { headers: APPLY, body: gadget('ssa', { ports: [{ name: 'https', port: 443 }], tags: ['b'] }) });
    expect(two.status, two.text).to.equal(200);
    expect(two.body.spec).to.deep.include({ size: 1, ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }], tags: ['a', 'b'], plain: ['x'] });
    const conflict = await c.request('PATCH', `${path}two`, { headers: APPLY, body: gadget('ssa', { plain: ['y'] }) });
    expect(conflict.status).to.equal(409);
    expect(conflict.body).to.include({ kind: 'Status', reason: 'Conflict' });
    expect(conflict.body.details.causes.map((x: any) => x.field)).to.deep.equal(['.spec.plain']);
    const forced = await c.request('PATCH', `${path}two&force=true`, { headers: APPLY, body: gadget('ssa', { ports: [{ name: 'https', port: 443 }], tags: ['b'], plain: ['y'] }) });
    expect(forced.status, forced.text).to.equal(200);
    expect(forced.body.spec.plain).to.deep.equal(['y']);
    // The first applier drops its port: only its item goes.
    const dropped = await c.request('PATCH', `${path}one`, { headers: APPLY, body: gadget('ssa', { size: 1, tags: ['a'] }) });
    expect(dropped.status, dropped.text).to.equal(200);
    expect(dropped.body.spec.ports).to.deep.equal([{ name: 'https', port: 443 }]);
  });

  it('refuses strategic merge patch of a custom kind with 415 and takes a merge patch', async () => {
    const smp = await c.request('PATCH', `${GADGETS}/t1`, { headers: { 'Content-Type': 'application/strategic-merge-patch+json' }, body: { spec: { size: 4 } } });
    expect(smp.status).to.equal(415);
    const merge = await c.request('PATCH', `${GADGETS}/t1`, { headers: { 'Content-Type': 'application/merge-patch+json' }, body: { spec: { size: 4 } } });
    expect(merge.status, merge.text).to.equal(200);
    expect(merge.body.spec.size).to.equal(4);
  });

  it('drops the kinds from both documents as their CRDs are removed', async () => {
    /** Deletes a CRD; without the controller-manager nothing removes the cleanup finalizer, so the test does. */
    const remove = async (name: string) => {
      const del = await c.request('DELETE', `${CRDS}/${name}`);
      expect(del.status, del.text).to.be.oneOf([200, 202]);
      const left = await c.request('GET', `${CRDS}/${name}`);
      if (left.status === 200) await c.request('PUT', `${CRDS}/${name}`, { body: { ...left.body, metadata: { ...left.body.metadata, finalizers: [] } } });
    };
    await remove(NAME);
    expect(await waitFor(async () => (await v2()).body.definitions[DEF] === undefined, 5000, 50)).to.equal(true);
    const doc = await c.request('GET', `/openapi/v3/apis/${GROUP}/v1`);
    expect(Object.keys(doc.body.components.schemas)).to.include('com.example.docs.v1.Widget').and.not.include(DEF);
    await remove(`widgets.${GROUP}`);
    expect(await waitFor(async () => (await c.request('GET', '/openapi/v3')).body.paths[`apis/${GROUP}/v1`] === undefined, 5000, 50)).to.equal(true);
    expect((await c.request('GET', `/openapi/v3/apis/${GROUP}/v1`)).status).to.equal(404);
    expect((await v2()).body.definitions['com.example.docs.v1.Widget']).to.equal(undefined);
  });
});
