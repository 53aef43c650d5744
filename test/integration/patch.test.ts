import { expect } from 'chai';
import YAML from 'yaml';
import { Cluster } from '../lib/cluster.js';

const NS = '/api/v1/namespaces/default';
const CM = (name: string) => `${NS}/configmaps/${name}`;
const JSON_PATCH = 'application/json-patch+json';
const MERGE = 'application/merge-patch+json';
const STRATEGIC = 'application/strategic-merge-patch+json';
const APPLY = 'application/apply-patch+yaml';

const cm = (name: string, data: Record<string, string>, metadata: Record<string, unknown> = {}) =>
  ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...metadata }, data });

describe('PATCH and server-side apply over HTTPS', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  const patch = (path: string, type: string, body: unknown, query = '', headers: Record<string, string> = {}) =>
    c.request('PATCH', `${path}${query ? `?${query}` : ''}`, { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'Content-Type': type, ...headers } });
  const create = async (name: string, data: Record<string, string>, metadata: Record<string, unknown> = {}) => {
    const res = await c.request('POST', `${NS}/configmaps`, { body: cm(name, data, metadata) });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const get = async (path: string) => (await c.request('GET', path)).body;
  const managers = (obj: any) => (obj.metadata.managedFields ?? []).map((e: any) => `${e.manager}/${e.operation}`);

  describe('JSON patch', () => {
    it('applies every operation', async () => {
      await create('jp', { a: '1', b: '2' });
      const res = await patch(CM('jp'), JSON_PATCH, [
        { op: 'add', path: '/data/c', value: '3' }, { op: 'remove', path: '/data/a' }, { op: 'replace', path: '/data/b', value: 'x' },
        { op: 'copy', from: '/data/b', path: '/data/d' }, { op: 'move', from: '/data/c', path: '/data/e' }, { op: 'test', path: '/data/d', value: 'x' },
      ]);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data).to.deep.equal({ b: 'x', d: 'x', e: '3' });
    });

    it('answers 422 for a failed test and writes nothing', async () => {
      const before = await get(CM('jp'));
      const res = await patch(CM('jp'), JSON_PATCH, [{ op: 'replace', path: '/data/b', value: 'y' }, { op: 'test', path: '/data/b', value: 'nope' }]);
      expect(res.status).to.equal(422);
      expect(res.body).to.include({ kind: 'Status', reason: 'Invalid', code: 422 });
      expect(await get(CM('jp'))).to.deep.equal(before);
    });

    it('answers 400 for a malformed patch and 409 for a stale resourceVersion it sets', async () => {
      expect((await patch(CM('jp'), JSON_PATCH, '[{"op":"add"')).status).to.equal(400);
      expect((await patch(CM('jp'), JSON_PATCH, [{ op: 'launch', path: '/data' }])).status).to.equal(400);
      const stale = await patch(CM('jp'), JSON_PATCH, [{ op: 'replace', path: '/metadata/resourceVersion', value: '1' }, { op: 'add', path: '/data/z', value: 'z' }]);
      expect(stale.status).to.equal(409);
      expect(stale.body.reason).to.equal('Conflict');
    });
  });

  describe('merge and strategic merge patch', () => {
    it('merge patch sets and removes keys', async () => {
      await create('mp', { a: '1', b: '2' });
      const res = await patch(CM('mp'), MERGE, { data: { a: null, c: '3' }, metadata: { labels: { x: 'y' } } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data).to.deep.equal({ b: '2', c: '3' });
      expect(res.body.metadata.labels).to.deep.equal({ x: 'y' });
    });

    it('is conditional on a resourceVersion in the patch', async () => {
      const current = await get(CM('mp'));
      const stale = await patch(CM('mp'), MERGE, { metadata: { resourceVersion: '1' }, data: { d: '4' } });
      expect(stale.status).to.equal(409);
      const fresh = await patch(CM('mp'), MERGE, { metadata: { resourceVersion: current.metadata.resourceVersion }, data: { d: '4' } });
      expect(fresh.status, fresh.text).to.equal(200);
    });

    it('writes nothing for a patch that changes nothing: same resourceVersion, no event', async () => {
      const current = await get(CM('mp'));
      const watching = c.watch(`${NS}/configmaps?watch=1&resourceVersion=${current.metadata.resourceVersion}&fieldSelector=metadata.name%3Dmp`,
        { until: (e) => e.length >= 1 });
      const same = await patch(CM('mp'), MERGE, { data: { b: '2' } }, 'fieldManager=noop');
      expect(same.status).to.equal(200);
      expect(same.body.metadata.resourceVersion).to.equal(current.metadata.resourceVersion);
      const strategicSame = await patch(CM('mp'), STRATEGIC, { data: { b: '2' } });
      expect(strategicSame.body.metadata.resourceVersion).to.equal(current.metadata.resourceVersion);
      const jsonSame = await patch(CM('mp'), JSON_PATCH, [{ op: 'test', path: '/data/b', value: '2' }]);
      expect(jsonSame.body.metadata.resourceVersion).to.equal(current.metadata.resourceVersion);
      await patch(CM('mp'), MERGE, { data: { b: 'changed' } });
      const { events } = await watching;
      expect(events[0].type).to.equal('MODIFIED');
      expect(events[0].object.data.b).to.equal('changed');
    });

    it('strategic merge patch merges primitive merge lists and follows directives', async () => {
      await create('sp', { a: '1' }, { finalizers: ['example.com/one'], labels: { a: '1', b: '2' } });
      let res = await patch(CM('sp'), STRATEGIC, { metadata: { finalizers: ['example.com/two'], labels: { $patch: 'replace', c: '3' } } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.metadata.finalizers).to.deep.equal(['example.com/two', 'example.com/one']);
      expect(res.body.metadata.labels).to.deep.equal({ c: '3' });
      res = await patch(CM('sp'), STRATEGIC, { metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/one', 'example.com/two'] } });
      expect(res.body.metadata, 'an emptied list is omitted, as the platform encodes it').to.not.have.property('finalizers');
      res = await patch(CM('sp'), STRATEGIC, { metadata: { '$retainKeys': 'nope' } });
      expect(res.status).to.equal(400);
    });

    it('answers 415 for an unknown patch type', async () => {
      const res = await patch(CM('sp'), 'application/x-frobnicate', {});
      expect(res.status).to.equal(415);
      expect(res.body.message).to.contain(APPLY);
    });

    it('records an Update entry for the patch manager, from fieldManager or the User-Agent', async () => {
      expect((await patch(CM('up'), APPLY, cm('up', { a: '1' }), 'fieldManager=creator')).status).to.equal(201);
      let res = await patch(CM('up'), MERGE, { data: { e: '5' } }, 'fieldManager=patcher');
      expect(managers(res.body)).to.include('patcher/Update');
      const entry = res.body.metadata.managedFields.find((e: any) => e.manager === 'patcher');
      expect(entry).to.deep.include({ operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:e': {} } } });
      res = await patch(CM('up'), MERGE, { data: { f: '6' } }, '', { 'User-Agent': 'my-tool/1.2 (linux)' });
      expect(managers(res.body)).to.have.members(['creator/Apply', 'patcher/Update', 'my-tool/Update']);
      expect((await patch(CM('mp'), MERGE, {}, `fieldManager=${'x'.repeat(129)}`)).status).to.equal(422);
      expect((await patch(CM('mp'), MERGE, {}, 'force=true')).status).to.equal(422);
    });

    it('clears managedFields when a write sets them to [{}]', async () => {
      const res = await patch(CM('mp'), MERGE, { metadata: { managedFields: [{}] } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.metadata).not.to.have.property('managedFields');
      const kept = await patch(CM('mp'), MERGE, { metadata: { managedFields: [] }, data: { g: '7' } }, 'fieldManager=later');
      expect(kept.body.metadata).not.to.have.property('managedFields');
    });
  });

  describe('creates and updates', () => {
    it('record an Update entry for the creator, named by fieldManager or the User-Agent', async () => {
      const res = await c.request('POST', `${NS}/configmaps?fieldManager=creator`, { body: cm('rec', { a: '1' }, { labels: { l: 'x' } }) });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.metadata.managedFields).to.have.length(1);
      expect(res.body.metadata.managedFields[0]).to.deep.include({
        manager: 'creator', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:l': {} } } },
      });
      const byAgent = await c.request('POST', `${NS}/configmaps`, { body: cm('rec-ua', { a: '1' }), headers: { 'User-Agent': 'tool/1.0 (linux/amd64)' } });
      expect(managers(byAgent.body)).to.deep.equal(['tool/Update']);
    });

    it('move the fields an update changes to its manager, without conflicts with appliers', async () => {
      const applied = await patch(CM('rec'), APPLY, cm('rec', { a: '1', b: '2' }), 'fieldManager=applier');
      expect(applied.status, applied.text).to.equal(200);
      const res = await c.request('PUT', `${CM('rec')}?fieldManager=editor`, { body: { ...applied.body, data: { a: '1', b: 'edited' } } });
      expect(res.status, res.text).to.equal(200);
      const byManager = Object.fromEntries(res.body.metadata.managedFields.map((e: any) => [e.manager, e.fieldsV1]));
      expect(byManager.editor).to.deep.equal({ 'f:data': { 'f:b': {} } });
      expect(byManager.applier).to.deep.equal({ 'f:data': { 'f:a': {} } });
    });

    it('give defaulted fields to the creator, and take nothing from their owners when an update omits them', async () => {
      const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
      const dep = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'owned' },
        spec: { selector: { matchLabels: { app: 'o' } }, template: { metadata: { labels: { app: 'o' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } };
      const res = await c.request('POST', `${DEPLOYMENTS}?fieldManager=creator`, { body: dep });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.metadata.managedFields[0].fieldsV1['f:spec']).to.have.property('f:progressDeadlineSeconds');
      const put = await c.request('PUT', `${DEPLOYMENTS}/owned?fieldManager=editor`, { body: { ...dep, metadata: res.body.metadata } });
      expect(put.status, put.text).to.equal(200);
      expect(managers(put.body)).to.deep.equal(['creator/Update']);
      expect(put.body.metadata.resourceVersion).to.equal(res.body.metadata.resourceVersion);
    });

    it('drop every entry when an update sets managedFields to [{}]', async () => {
      const current = await get(CM('rec'));
      const res = await c.request('PUT', CM('rec'), { body: { ...current, metadata: { ...current.metadata, managedFields: [{}] } } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.metadata).not.to.have.property('managedFields');
    });
  });

  describe('server-side apply', () => {
    const applyCm = (name: string, data: Record<string, string>, query: string, extra: Record<string, unknown> = {}) =>
      patch(CM(name), APPLY, YAML.stringify(cm(name, data, extra)), query);

    it('needs a fieldManager and refuses managedFields in the body', async () => {
      const missing = await applyCm('ssa', { a: '1' }, '');
      expect(missing.status).to.equal(400);
      expect(missing.body.message).to.contain('fieldManager');
      const managed = await applyCm('ssa', { a: '1' }, 'fieldManager=a', { managedFields: [] });
      expect(managed.status).to.equal(400);
      expect(managed.body.message).to.equal('metadata.managedFields must be nil');
      expect((await patch(CM('ssa'), APPLY, 'a: [', 'fieldManager=a')).status).to.equal(400);
    });

    it('creates the object when absent, owned by the applier', async () => {
      const res = await applyCm('ssa', { a: '1' }, 'fieldManager=first');
      expect(res.status, res.text).to.equal(201);
      expect(res.body.metadata.uid).to.be.a('string');
      expect(res.body.metadata.managedFields).to.have.length(1);
      expect(res.body.metadata.managedFields[0]).to.deep.include({ manager: 'first', operation: 'Apply', apiVersion: 'v1', fieldsV1: { 'f:data': { 'f:a': {} } } });
      expect((await get(CM('ssa'))).data).to.deep.equal({ a: '1' });
    });

    it('accepts JSON, shares fields set to the same value and answers 409 for different ones', async () => {
      const shared = await patch(CM('ssa'), APPLY, cm('ssa', { a: '1', b: '2' }), 'fieldManager=second');
      expect(shared.status, shared.text).to.equal(200);
      expect(managers(shared.body)).to.deep.equal(['first/Apply', 'second/Apply']);
      const clash = await applyCm('ssa', { a: 'x', b: 'y' }, 'fieldManager=third');
      expect(clash.status).to.equal(409);
      expect(clash.body.reason).to.equal('Conflict');
      expect(clash.body.message).to.equal('Apply failed with 3 conflicts: conflicts with "first":\n- .data.a\nconflicts with "second":\n- .data.a\n- .data.b');
      expect(clash.body.details.causes).to.have.length(3);
    });

    it('takes ownership with force=true', async () => {
      const res = await applyCm('ssa', { a: 'x' }, 'fieldManager=third&force=true');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data).to.deep.equal({ a: 'x', b: '2' });
      expect(managers(res.body)).to.deep.equal(['second/Apply', 'third/Apply']);
    });

    it('removes fields the applier dropped when nobody else owns them', async () => {
      const res = await applyCm('ssa', {}, 'fieldManager=second');
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data).to.deep.equal({ a: 'x' });
    });

    it('resets a dropped field nobody else owns to its default', async () => {
      const DEPLOYMENT = '/apis/apps/v1/namespaces/default/deployments/defaults';
      const dep = (spec: Record<string, unknown>) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'defaults' },
        spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'i' }] } }, ...spec } });
      const created = await patch(DEPLOYMENT, APPLY, dep({ replicas: 3 }), 'fieldManager=ops');
      expect(created.status, created.text).to.equal(201);
      expect(created.body.spec.replicas).to.equal(3);
      const dropped = await patch(DEPLOYMENT, APPLY, dep({}), 'fieldManager=ops');
      expect(dropped.status, dropped.text).to.equal(200);
      expect(dropped.body.spec.replicas).to.equal(1);
    });

    it('dry-runs an apply that creates and one that updates without writing', async () => {
      const created = await applyCm('dry', { a: '1' }, 'fieldManager=dry&dryRun=All');
      expect(created.status, created.text).to.equal(201);
      expect(created.body.data).to.deep.equal({ a: '1' });
      expect((await c.request('GET', CM('dry'))).status).to.equal(404);
      const before = await get(CM('ssa'));
      const updated = await applyCm('ssa', { a: 'dry' }, 'fieldManager=dry&dryRun=All&force=true');
      expect(updated.status, updated.text).to.equal(200);
      expect(updated.body.data.a).to.equal('dry');
      expect(await get(CM('ssa'))).to.deep.equal(before);
    });

    it('refuses an apply naming another object or kind', async () => {
      expect((await patch(CM('other'), APPLY, cm('not-other', {}), 'fieldManager=a')).status).to.equal(400);
      expect((await patch(CM('other'), APPLY, { ...cm('other', {}), kind: 'Secret' }, 'fieldManager=a')).status).to.equal(400);
    });

    it('applies to cluster-scoped kinds and secrets', async () => {
      const ns = await patch('/api/v1/namespaces/applied', APPLY, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'applied', labels: { team: 'a' } } }, 'fieldManager=ops');
      expect(ns.status, ns.text).to.equal(201);
      expect(ns.body.status.phase).to.equal('Active');
      const secret = await patch('/api/v1/namespaces/applied/secrets/s', APPLY,
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { password: 'p' } }, 'fieldManager=ops');
      expect(secret.status, secret.text).to.equal(201);
      expect(secret.body.data).to.deep.equal({ password: Buffer.from('p').toString('base64') });
    });
  });
});
