// Document 1, "Dry run": dryRun=All runs every step but the store write, answers the
// would-be object with the normal status code, stores and publishes nothing.
import { expect } from 'chai';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';

const NS = 'dry';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

function expectStatus(res: Response, code: number, reason: string): void {
  expect(res.status, res.text).to.equal(code);
  expect(res.body, res.text).to.include({ kind: 'Status', status: 'Failure', code, reason });
}

describe('protocol: dry run', function () {
  this.timeout(60_000);
  let c: Cluster;
  let stored: any;
  /** DELETE with a DeleteOptions body (Node sends a DELETE body only with an explicit Content-Length). */
  const del = (path: string, body?: unknown) => {
    if (body === undefined) return c.request('DELETE', path);
    const text = JSON.stringify(body);
    return c.request('DELETE', path, { body: text, headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) } });
  };
  const current = async (name: string) => c.request('GET', `${CMS}/${name}`);
  const revision = async () => Number((await c.request('GET', CMS)).body.metadata.resourceVersion);
  const objects = async () => (await c.request('GET', CMS)).body.items.map((o: any) => `${o.metadata.name}@${o.metadata.resourceVersion}`);
  const mergePatch = (path: string, body: unknown) => c.request('PATCH', path, { body, headers: { 'Content-Type': 'application/merge-patch+json' } });

  before(async () => {
    c = await new Cluster().start();
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).to.equal(201);
    // The namespace's default ServiceAccount is the controller-manager's write: made before the test counts writes.
    expect(await waitFor(async () => (await c.request('GET', `/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200, 15_000, 50)).to.equal(true);
    const res = await c.request('POST', CMS, { body: { metadata: { name: 'real', labels: { keep: 'yes' } }, data: { v: '1' } } });
    expect(res.status).to.equal(201);
    stored = res.body;
  });
  after(async () => { await c?.stop(); });

  it('create, update, patch, delete and deletecollection with dryRun=All: normal status codes, nothing stored, no watch event', async () => {
    const before = await revision();
    const objectsBefore = await objects();
    const watching = c.watch(`${CMS}?watch=1&resourceVersion=${before}`, {
      timeoutMs: 15_000, until: (evs) => evs.some((e) => e.object?.metadata?.name === 'sentinel'),
    });

    const created = await c.request('POST', `${CMS}?dryRun=All`, { body: { metadata: { name: 'ghost' }, data: { v: '1' } } });
    expect(created.status, created.text).to.equal(201);
    expect(created.body).to.include({ kind: 'ConfigMap', apiVersion: 'v1' });
    expect(created.body.metadata).to.include({ name: 'ghost', namespace: NS });
    expect(created.body.metadata.creationTimestamp).to.be.a('string');
    expect(created.body.data).to.deep.equal({ v: '1' });
    expect((await current('ghost')).status).to.equal(404);

    const generated = await c.request('POST', `${CMS}?dryRun=All`, { body: { metadata: { generateName: 'gen-' } } });
    expect(generated.status, generated.text).to.equal(201);
    expect(generated.body.metadata.name).to.match(/^gen-[a-z0-9]{5}$/);
    expect((await current(generated.body.metadata.name)).status).to.equal(404);

    const updated = await c.request('PUT', `${CMS}/real?dryRun=All`, { body: { ...stored, data: { v: 'put' } } });
    expect(updated.status, updated.text).to.equal(200);
    expect(updated.body.data).to.deep.equal({ v: 'put' });

    const patched = await mergePatch(`${CMS}/real?dryRun=All`, { data: { v: 'patch' } });
    expect(patched.status, patched.text).to.equal(200);
    expect(patched.body.data).to.deep.equal({ v: 'patch' });

    const deleted = await c.request('DELETE', `${CMS}/real?dryRun=All`);
    expect(deleted.status, deleted.text).to.equal(200);
    const deletedByBody = await del(`${CMS}/real`, { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] });
    expect(deletedByBody.status, deletedByBody.text).to.equal(200);
    const collection = await c.request('DELETE', `${CMS}?dryRun=All`);
    expect(collection.status, collection.text).to.equal(200);
    expect(collection.body.items.map((i: any) => i.metadata.name)).to.include('real');

    const now = await current('real');
    expect(now.status).to.equal(200);
    expect(now.body).to.deep.equal(stored);
    expect(await objects(), 'no object changed').to.deep.equal(objectsBefore);
    // On etcd the revision also moves with keys outside the objects (progress marks): only LevelDB's stays put.
    if (c.storageBackend === 'leveldb') expect(await revision(), 'no write reached storage').to.equal(before);

    expect((await c.request('POST', CMS, { body: { metadata: { name: 'sentinel' } } })).status).to.equal(201);
    const { events } = await watching;
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(['ADDED sentinel']);
  });

  it('dry-run delete of an object held by finalizers answers it with deletionTimestamp but leaves it as it was', async () => {
    const held = await c.request('POST', CMS, { body: { metadata: { name: 'held', finalizers: ['example.com/x'] } } });
    expect(held.status).to.equal(201);
    const res = await c.request('DELETE', `${CMS}/held?dryRun=All`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.metadata.deletionTimestamp).to.be.a('string');
    const now = await current('held');
    expect(now.body).to.deep.equal(held.body);
    expect(now.body.metadata).not.to.have.property('deletionTimestamp');
  });

  it('a dry run fails where the real request would: validation 422, existing name 409, stale version 409', async () => {
    expectStatus(await c.request('POST', `${CMS}?dryRun=All`, { body: { metadata: { name: 'Not_Valid' } } }), 422, 'Invalid');
    expectStatus(await c.request('POST', `${CMS}?dryRun=All`, { body: { metadata: { name: 'real' } } }), 409, 'AlreadyExists');
    const fresh = (await current('real')).body;
    const moved = await c.request('PUT', `${CMS}/real`, { body: { ...fresh, data: { v: '2' } } });
    expect(moved.status).to.equal(200);
    expectStatus(await c.request('PUT', `${CMS}/real?dryRun=All`, { body: { ...fresh, data: { v: '3' } } }), 409, 'Conflict');
    expectStatus(await c.request('DELETE', `${CMS}/missing?dryRun=All`), 404, 'NotFound');
  });

  it('dryRun present with no value is normal processing', async () => {
    const res = await c.request('POST', `${CMS}?dryRun`, { body: { metadata: { name: 'novalue' } } });
    expect(res.status, res.text).to.equal(201);
    expect((await current('novalue')).status).to.equal(200);
  });

  it('any other dryRun value: 400 on every verb, nothing changes', async () => {
    const obj = (await current('real')).body;
    const answers = [
      await c.request('POST', `${CMS}?dryRun=Some`, { body: { metadata: { name: 'bad' } } }),
      await c.request('PUT', `${CMS}/real?dryRun=true`, { body: { ...obj, data: { v: 'x' } } }),
      await mergePatch(`${CMS}/real?dryRun=None`, { data: { v: 'x' } }),
      await c.request('DELETE', `${CMS}/real?dryRun=all`),
      await del(`${CMS}/real`, { dryRun: ['Everything'] }),
      await c.request('DELETE', `${CMS}?dryRun=Some`),
    ];
    for (const res of answers) {
      expectStatus(res, 400, 'BadRequest');
      expect(res.body.message).to.contain('dryRun');
    }
    expect((await current('bad')).status).to.equal(404);
    expect((await current('real')).body).to.deep.equal(obj);
  });
});
