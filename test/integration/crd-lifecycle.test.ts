import { expect } from 'chai';
import { Cluster, waitFor } from '../lib/cluster.js';
import { CRD_CLEANUP_FINALIZER, group, SERVICE_NAME_LABEL } from '../../internal/names/index.js';
import { ConversionWebhook } from '../lib/conversionwebhook.js';

const EXT = group('apiextensions');
const CRDS = `/apis/${EXT}/v1/customresourcedefinitions`;
const MERGE = { 'Content-Type': 'application/merge-patch+json' };

interface Names { plural: string; kind: string; singular?: string; shortNames?: string[]; listKind?: string }

/** A CRD of `group` with one served, stored version v1 (any object accepted under spec). */
function crd(g: string, names: Names, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const schema = { type: 'object', properties: { spec: { type: 'object', 'x-svc-preserve-unknown-fields': true } } };
  return {
    apiVersion: `${EXT}/v1`, kind: 'CustomResourceDefinition', metadata: { name: `${names.plural}.${g}` },
    spec: { group: g, scope: 'Namespaced', names, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }], ...extra },
  };
}

const condition = (obj: any, type: string) => (obj?.status?.conditions ?? []).find((c: any) => c.type === type);

describe('CustomResourceDefinition lifecycle: names, Established, Terminating and cleanup', function () {
  this.timeout(120_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  const get = async (name: string) => (await c.request('GET', `${CRDS}/${name}`)).body;
  /** Waits until the CRD's condition has the status (bounded); answers the CRD as last read. */
  async function until(name: string, type: string, status: string, timeoutMs = 5000): Promise<any> {
    let last: any;
    await waitFor(async () => { last = await get(name); return condition(last, type)?.status === status; }, timeoutMs, 50);
    return last;
  }

  it('a new CRD has its names accepted and is Established within a second, its storage version stored', async () => {
    const res = await c.request('POST', CRDS, { body: crd('life.example.com', { plural: 'widgets', kind: 'Widget', shortNames: ['wd'] }) });
    expect(res.status).to.equal(201);
    expect(res.body.status.storedVersions).to.deep.equal(['v1']);
    const started = Date.now();
    const established = await until('widgets.life.example.com', 'Established', 'True', 1000);
    expect(Date.now() - started).to.be.below(1000);
    expect(condition(established, 'Established')).to.include({ reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' });
    expect(condition(established, 'NamesAccepted')).to.include({ status: 'True', reason: 'NoConflicts', message: 'no conflicts found' });
    expect(established.status.acceptedNames).to.deep.equal({ plural: 'widgets', singular: 'widget', shortNames: ['wd'], kind: 'Widget', listKind: 'WidgetList' });
    expect(condition(established, 'Established').lastTransitionTime).to.be.a('string');
  });

  it('a name another CRD of the group holds is refused, named in NamesAccepted, and taken once it is freed', async () => {
    const g = 'clash.example.com';
    expect((await c.request('POST', CRDS, { body: crd(g, { plural: 'apples', kind: 'Apple', shortNames: ['ap'] }) })).status).to.equal(201);
    await until(`apples.${g}`, 'Established', 'True');
    // Same kind under another plural: KindConflict.
    expect((await c.request('POST', CRDS, { body: crd(g, { plural: 'pommes', singular: 'pomme', kind: 'Apple', listKind: 'PommeList' }) })).status).to.equal(201);
    const refused = await until(`pommes.${g}`, 'NamesAccepted', 'False');
    expect(condition(refused, 'NamesAccepted')).to.include({ reason: 'KindConflict', message: '"Apple" is already in use' });
    expect(condition(refused, 'Established')).to.include({ status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' });
    // What is free is taken; the kind stays as accepted before (none).
    expect(refused.status.acceptedNames).to.deep.equal({ plural: 'pommes', singular: 'pomme', kind: '', listKind: 'PommeList' });
    // A short name equal to another CRD's plural: ShortNamesConflict.
    expect((await c.request('POST', CRDS, { body: crd(g, { plural: 'pears', kind: 'Pear', shortNames: ['apples'] }) })).status).to.equal(201);
    const short = await until(`pears.${g}`, 'NamesAccepted', 'False');
    expect(condition(short, 'NamesAccepted')).to.include({ reason: 'ShortNamesConflict', message: '"apples" is already in use' });
    // The same plural in another group is no conflict.
    expect((await c.request('POST', CRDS, { body: crd('other.example.com', { plural: 'apples', kind: 'Apple' }) })).status).to.equal(201);
    await until('apples.other.example.com', 'Established', 'True');
    // The holder goes (a kind cannot change once established): the others take the names it held.
    expect((await c.request('DELETE', `${CRDS}/apples.${g}`)).status).to.equal(200);
    expect(await waitFor(async () => (await c.request('GET', `${CRDS}/apples.${g}`)).status === 404, 10_000)).to.equal(true);
    const accepted = await until(`pommes.${g}`, 'Established', 'True');
    expect(condition(accepted, 'NamesAccepted')).to.include({ status: 'True', reason: 'NoConflicts' });
    expect(accepted.status.acceptedNames).to.include({ kind: 'Apple', listKind: 'PommeList', singular: 'pomme' });
    expect((await until(`pears.${g}`, 'Established', 'True')).status.acceptedNames.shortNames).to.deep.equal(['apples']);
  });

  it('deleting a CRD marks it Terminating under the cleanup finalizer before it goes', async () => {
    const g = 'life.example.com';
    // Its kind is Widget's: never established, it holds no objects to remove.
    expect((await c.request('POST', CRDS, { body: crd(g, { plural: 'leaves', kind: 'Widget', listKind: 'LeafList' }) })).status).to.equal(201);
    const created = await until(`leaves.${g}`, 'NamesAccepted', 'False');
    expect(created.metadata.finalizers).to.equal(undefined);
    // A finalizer of the client's own keeps the CRD so its terminating state can be read.
    const held = await c.request('PATCH', `${CRDS}/leaves.${g}`, { body: { metadata: { finalizers: ['example.com/hold'] } }, headers: MERGE });
    expect(held.status).to.equal(200);
    const del = await c.request('DELETE', `${CRDS}/leaves.${g}`);
    expect(del.status).to.equal(200);
    expect(del.body.kind).to.equal('CustomResourceDefinition');
    expect(del.body.metadata.deletionTimestamp).to.be.a('string');
    expect(del.body.metadata.finalizers).to.include.members(['example.com/hold', CRD_CLEANUP_FINALIZER]);
    expect(condition(del.body, 'Terminating')).to.include({ status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' });
    // The controller finishes and drops its finalizer only.
    let last: any;
    expect(await waitFor(async () => { last = await get(`leaves.${g}`); return !last.metadata.finalizers.includes(CRD_CLEANUP_FINALIZER); }, 10_000)).to.equal(true);
    expect(last.metadata.finalizers).to.deep.equal(['example.com/hold']);
    expect(condition(last, 'Terminating')).to.include({ status: 'False', reason: 'NeverEstablished', message: 'resource was never established' });
    // A second delete changes nothing; dropping the last finalizer removes the CRD.
    expect((await c.request('DELETE', `${CRDS}/leaves.${g}`)).body.metadata.finalizers).to.deep.equal(['example.com/hold']);
    const release = await c.request('PATCH', `${CRDS}/leaves.${g}`, { body: { metadata: { finalizers: null } }, headers: MERGE });
    expect(release.status).to.equal(200);
    expect((await c.request('GET', `${CRDS}/leaves.${g}`)).status).to.equal(404);
  });

  it('deleting a CRD with 500 objects removes them all, waits for those held by their own finalizers, then the CRD', async () => {
    const g = 'clean.example.com';
    const path = (ns: string, name = '') => `/apis/${g}/v1/namespaces/${ns}/gadgets${name ? `/${name}` : ''}`;
    expect((await c.request('POST', CRDS, { body: crd(g, { plural: 'gadgets', kind: 'Gadget' }) })).status).to.equal(201);
    await until(`gadgets.${g}`, 'Established', 'True');
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'clean' } } })).status).to.equal(201);
    const gadget = (name: string, extra = {}) => ({ apiVersion: `${g}/v1`, kind: 'Gadget', metadata: { name, ...extra }, spec: { n: name } });
    expect(await waitFor(async () => (await c.request('POST', path('default'), { body: gadget('held', { finalizers: ['example.com/keep'] }) })).status === 201, 5000)).to.equal(true);
    for (let batch = 0; batch < 499; batch += 25) {
      const names = Array.from({ length: Math.min(25, 499 - batch) }, (_, i) => `g-${batch + i}`);
      const codes = await Promise.all(names.map((n, i) => c.request('POST', path(i % 2 ? 'clean' : 'default'), { body: gadget(n) }).then((r) => r.status)));
      expect(codes.every((s) => s === 201), `batch ${batch}`).to.equal(true);
    }
    expect((await c.request('GET', `/apis/${g}/v1/gadgets`)).body.items).to.have.length(500);

    const del = await c.request('DELETE', `${CRDS}/gadgets.${g}`);
    expect(del.status).to.equal(200);
    expect(condition(del.body, 'Terminating')).to.include({ status: 'True', reason: 'InstanceDeletionInProgress' });
    // Every object but the held one goes; the CRD waits for it.
    let left: any[] = [];
    expect(await waitFor(async () => { left = (await c.request('GET', `/apis/${g}/v1/gadgets`)).body.items ?? []; return left.length === 1 && Boolean(left[0].metadata.deletionTimestamp); }, 60_000, 250)).to.equal(true);
    expect(left[0].metadata.name).to.equal('held');
    const waiting = await get(`gadgets.${g}`);
    expect(waiting.metadata.finalizers).to.include(CRD_CLEANUP_FINALIZER);
    expect(condition(waiting, 'Terminating')).to.include({ status: 'True', reason: 'InstanceDeletionInProgress' });
    // Released, the object goes and so does the CRD, and its group leaves discovery.
    const release = await c.request('PATCH', path('default', 'held'), { body: { metadata: { finalizers: null } }, headers: MERGE });
    expect(release.status).to.equal(200);
    expect(await waitFor(async () => (await c.request('GET', `${CRDS}/gadgets.${g}`)).status === 404, 20_000, 250)).to.equal(true);
    expect(await waitFor(async () => (await c.request('GET', `/apis/${g}/v1`)).status === 404, 5000)).to.equal(true);
    const groups = (await c.request('GET', '/apis')).body.groups.map((x: any) => x.name);
    expect(groups).to.not.include(g);
  });

  it('a CRD with no version served any more still has its objects removed when deleted, and then goes', async () => {
    const g = 'unserved.example.com';
    const path = `/apis/${g}/v1/namespaces/default/relics`;
    expect((await c.request('POST', CRDS, { body: crd(g, { plural: 'relics', kind: 'Relic' }) })).status).to.equal(201);
    await until(`relics.${g}`, 'Established', 'True');
    const relic = (name: string) => ({ apiVersion: `${g}/v1`, kind: 'Relic', metadata: { name }, spec: {} });
    expect(await waitFor(async () => (await c.request('POST', path, { body: relic('r0') })).status === 201, 5000)).to.equal(true);
    expect((await c.request('POST', path, { body: relic('r1') })).status).to.equal(201);
    const current = await get(`relics.${g}`);
    current.spec.versions[0].served = false;
    expect((await c.request('PUT', `${CRDS}/relics.${g}`, { body: current })).status).to.equal(200);
    expect(await waitFor(async () => (await c.request('GET', path)).status === 404, 5000)).to.equal(true);
    expect((await c.request('DELETE', `${CRDS}/relics.${g}`)).status).to.equal(200);
    expect(await waitFor(async () => (await c.request('GET', `${CRDS}/relics.${g}`)).status === 404, 20_000, 250)).to.equal(true);
    // Served again under a new CRD of the same names, the old objects are not there.
    expect((await c.request('POST', CRDS, { body: crd(g, { plural: 'relics', kind: 'Relic' }) })).status).to.equal(201);
    await until(`relics.${g}`, 'Established', 'True');
    let items: any[] | undefined;
    expect(await waitFor(async () => { const r = await c.request('GET', path); items = r.body.items; return r.status === 200; }, 5000)).to.equal(true);
    expect(items).to.deep.equal([]);
  });

  it('a new storage version joins status.storedVersions, which must keep the storage version', async () => {
    const g = 'stored.example.com';
    const body = crd(g, { plural: 'nuts', kind: 'Nut' });
    expect((await c.request('POST', CRDS, { body })).status).to.equal(201);
    const current = await until(`nuts.${g}`, 'Established', 'True');
    const v1 = current.spec.versions[0];
    current.spec.versions = [{ ...v1, storage: false }, { ...v1, name: 'v2', storage: true }];
    const updated = await c.request('PUT', `${CRDS}/nuts.${g}`, { body: current });
    expect(updated.status).to.equal(200);
    expect(updated.body.status.storedVersions).to.deep.equal(['v1', 'v2']);
    updated.body.status.storedVersions = ['v1'];
    const bad = await c.request('PUT', `${CRDS}/nuts.${g}/status`, { body: updated.body });
    expect(bad.status).to.equal(422);
    expect(bad.body.details.causes).to.deep.include({ reason: 'FieldValueInvalid', field: 'status.storedVersions', message: 'Invalid value: ["v1"]: must have the storage version v2' });
    updated.body.status.storedVersions = ['v2'];
    expect((await c.request('PUT', `${CRDS}/nuts.${g}/status`, { body: updated.body })).status).to.equal(200);
  });

  it('the controller lists afresh after losing its watch: a CRD created after a gateway restart is established', async () => {
    await c.kill('gateway');
    await c.startService('gateway');
    expect((await c.request('POST', CRDS, { body: crd('resync.example.com', { plural: 'tools', kind: 'Tool' }) })).status).to.equal(201);
    expect(condition(await until('tools.resync.example.com', 'Established', 'True', 10_000), 'NamesAccepted').status).to.equal('True');
  });

  it('apiextensions v1beta1 is not served', async () => {
    const res = await c.request('GET', `/apis/${EXT}/v1beta1/customresourcedefinitions`);
    expect(res.status).to.equal(404);
    expect((await c.request('POST', `/apis/${EXT}/v1beta1/customresourcedefinitions`, { body: crd('beta.example.com', { plural: 'betas', kind: 'Beta' }) })).status).to.equal(404);
    const groupDoc = (await c.request('GET', `/apis/${EXT}`)).body;
    expect(groupDoc.versions.map((v: any) => v.version)).to.deep.equal(['v1']);
  });

  describe('Webhook conversion', () => {
    const g = 'convert.example.com';
    const name = `widgets.${g}`;
    const W = new ConversionWebhook();
    const at = (version: string, ns = 'default', obj = '') => `/apis/${g}/${version}/namespaces/${ns}/widgets${obj ? `/${obj}` : ''}`;
    const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { color: { type: 'string' }, colour: { type: 'string' } } } } } };
    const conversion = (clientConfig: Record<string, unknown>, conversionReviewVersions = ['v1']) =>
      ({ strategy: 'Webhook', webhook: { clientConfig: { caBundle: W.caBundle, ...clientConfig }, conversionReviewVersions } });
    /** Points the CRD's webhook elsewhere and waits until the gateway converts through it. */
    async function switchWebhook(clientConfig: Record<string, unknown>, ready: (res: any) => boolean): Promise<void> {
      const current = await get(name);
      current.spec.conversion = conversion(clientConfig);
      expect((await c.request('PUT', `${CRDS}/${name}`, { body: current })).status).to.equal(200);
      expect(await waitFor(async () => ready(await c.request('GET', at('v2', 'default', 'w1'))), 5000)).to.equal(true);
    }

    before(async () => {
      await W.start(['conv.default.svc']);
      const body = crd(g, { plural: 'widgets', kind: 'Widget' }, { conversion: conversion({ url: W.url() }) }) as any;
      body.spec.versions = [{ name: 'v1', served: true, storage: true, schema }, { name: 'v2', served: true, storage: false, schema }];
      expect((await c.request('POST', CRDS, { body })).status).to.equal(201);
      await until(name, 'Established', 'True');
    });
    after(async () => { await W.stop(); });

    it('a create in a version other than the storage version is converted to it, and read back in either', async () => {
      const obj = { apiVersion: `${g}/v2`, kind: 'Widget', metadata: { name: 'w1', labels: { app: 'w' } }, spec: { colour: 'red' } };
      let created: any;
      expect(await waitFor(async () => { created = await c.request('POST', at('v2'), { body: obj }); return created.status !== 404; }, 5000)).to.equal(true);
      expect(created.status).to.equal(201);
      expect(created.body).to.deep.include({ apiVersion: `${g}/v2`, spec: { colour: 'red' } });
      expect((await c.request('GET', at('v1', 'default', 'w1'))).body).to.deep.include({ apiVersion: `${g}/v1`, spec: { color: 'red' } });
      expect((await c.request('GET', at('v2', 'default', 'w1'))).body).to.deep.include({ apiVersion: `${g}/v2`, spec: { colour: 'red' } });
      const reviews = W.reviews.map((r) => r.review.request);
      expect(reviews.some((r) => r.desiredAPIVersion === `${g}/v1` && r.objects[0].spec.colour === 'red')).to.equal(true);
      expect(reviews.some((r) => r.desiredAPIVersion === `${g}/v2` && r.objects[0].spec.color === 'red')).to.equal(true);
    });

    it('lists and watches in the non-storage version through the webhook', async () => {
      expect((await c.request('POST', at('v1'), { body: { apiVersion: `${g}/v1`, kind: 'Widget', metadata: { name: 'w2' }, spec: { color: 'blue' } } })).status).to.equal(201);
      const list = await c.request('GET', at('v2'));
      expect(list.status).to.equal(200);
      expect(list.body.apiVersion).to.equal(`${g}/v2`);
      expect(list.body.items.map((o: any) => [o.metadata.name, o.apiVersion, o.kind, o.spec])).to.deep.equal([['w1', `${g}/v2`, 'Widget', { colour: 'red' }], ['w2', `${g}/v2`, 'Widget', { colour: 'blue' }]]);
      const watching = c.watch(`${at('v2')}?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`, { until: (evs) => evs.length >= 1, timeoutMs: 10_000 });
      expect((await c.request('PATCH', at('v1', 'default', 'w2'), { body: { spec: { color: 'green' } }, headers: MERGE })).status).to.equal(200);
      const { events } = await watching;
      expect(events[0].type).to.equal('MODIFIED');
      expect(events[0].object).to.deep.include({ apiVersion: `${g}/v2`, spec: { colour: 'green' } });
    });

    it('a webhook that fails, misanswers or cannot be reached is a 500 Status naming the failure', async () => {
      const prefix = `conversion webhook for ${g}/v1, Kind=Widget`;
      await switchWebhook({ url: W.url('failure') }, (res) => res.status === 500);
      let res = await c.request('GET', at('v2', 'default', 'w1'));
      expect(res.body).to.deep.include({ kind: 'Status', status: 'Failure', code: 500, message: `${prefix} failed: cannot convert a widget today` });
      expect(res.body).to.not.have.property('reason');
      expect((await c.request('GET', at('v2'))).status).to.equal(500);
      expect((await c.request('POST', at('v2'), { body: { apiVersion: `${g}/v2`, kind: 'Widget', metadata: { name: 'w3' }, spec: {} } })).status).to.equal(500);
      // The storage version needs no call.
      expect((await c.request('GET', at('v1', 'default', 'w1'))).status).to.equal(200);
      await switchWebhook({ url: W.url('rename') }, (r) => r.status === 500 && r.body.message.includes('name'));
      res = await c.request('GET', at('v2', 'default', 'w1'));
      expect(res.body.message).to.equal(`${prefix} returned invalid object: must have the same name: w1 != w1-renamed`);
      await switchWebhook({ url: W.url('wrong-uid') }, (r) => r.status === 500 && r.body.message.includes('uid'));
      expect((await c.request('GET', at('v2', 'default', 'w1'))).body.message).to.match(new RegExp(`^${prefix} failed: expected response.uid=".+", got "someone-else"$`));
      await switchWebhook({ url: 'https://127.0.0.1:1/convert' }, (r) => r.status === 500 && r.body.message.includes('ECONNREFUSED'));
    });

    it('a caBundle that holds no certificate keeps the CRD from being established', async () => {
      const bad = crd('badca.example.com', { plural: 'things', kind: 'Thing' }, { conversion: conversion({ url: W.url(), caBundle: Buffer.from('not a certificate').toString('base64') }) }) as any;
      bad.spec.versions = [{ name: 'v1', served: true, storage: true, schema }, { name: 'v2', served: true, storage: false, schema }];
      expect((await c.request('POST', CRDS, { body: bad })).status).to.equal(201);
      let refused: any;
      expect(await waitFor(async () => { refused = await get('things.badca.example.com'); return condition(refused, 'Established')?.reason === 'InvalidCABundle'; }, 5000)).to.equal(true);
      expect(condition(refused, 'Established')).to.include({ status: 'False', message: 'The conversion webhook CABundle is invalid' });
      expect(condition(refused, 'NamesAccepted').status).to.equal('True');
    });

    it('a service reference reaches the webhook through the Service\'s EndpointSlice', async () => {
      const svc = { metadata: { name: 'conv' }, spec: { ports: [{ name: 'https', port: 443, targetPort: W.port }] } };
      expect((await c.request('POST', '/api/v1/namespaces/default/services', { body: svc })).status).to.equal(201);
      const slice = {
        metadata: { name: 'conv-1', labels: { [SERVICE_NAME_LABEL.own]: 'conv' } }, addressType: 'IPv4',
        ports: [{ name: 'https', port: W.port, protocol: 'TCP' }], endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      };
      expect((await c.request('POST', `/apis/${group('discovery')}/v1/namespaces/default/endpointslices`, { body: slice })).status).to.equal(201);
      await switchWebhook({ service: { namespace: 'default', name: 'conv', path: '/convert', port: 443 } }, (r) => r.status === 200);
      expect((await c.request('GET', at('v2', 'default', 'w1'))).body.spec).to.deep.equal({ colour: 'red' });
      await switchWebhook({ service: { namespace: 'default', name: 'absent', path: '/convert', port: 443 } }, (r) => r.status === 500);
      expect((await c.request('GET', at('v2', 'default', 'w1'))).body.message).to.contain('service "absent" not found');
    });
  });
});
