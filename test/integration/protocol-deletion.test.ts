// Document 1, "States and transitions" and DeleteOptions: two-phase deletion with
// finalizers, preconditions, propagation policies, namespaces that are terminating.
import { expect } from 'chai';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';

const NS = 'del';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const RFC3339_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

function expectStatus(res: Response, code: number, reason: string): void {
  expect(res.status, res.text).to.equal(code);
  expect(res.body, res.text).to.include({ kind: 'Status', status: 'Failure', code, reason });
}

describe('protocol: deletion', function () {
  this.timeout(60_000);
  let c: Cluster;
  const create = async (name: string, finalizers?: string[]) => {
    const res = await c.request('POST', CMS, { body: { metadata: { name, ...(finalizers ? { finalizers } : {}) }, data: { v: '1' } } });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  /** DELETE with a DeleteOptions body (Node sends a DELETE body only with an explicit Content-Length). */
  const del = (path: string, body?: unknown) => {
    if (body === undefined) return c.request('DELETE', path);
    const text = JSON.stringify(body);
    return c.request('DELETE', path, { body: text, headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) } });
  };
  const exists = async (name: string) => (await c.request('GET', `${CMS}/${name}`)).status === 200;
  const gone = (name: string) => waitFor(async () => (await c.request('GET', `${CMS}/${name}`)).status === 404, 5_000);

  before(async () => {
    c = await new Cluster().start();
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).to.equal(201);
  });
  after(async () => { await c?.stop(); });

  describe('finalizers', () => {
    it('a delete sets deletionTimestamp, the object stays readable until the last finalizer is removed, watchers see MODIFIED then DELETED', async () => {
      const created = await create('held', ['example.com/a', 'example.com/b']);
      const watching = c.watch(`${CMS}?watch=1&resourceVersion=${created.metadata.resourceVersion}&fieldSelector=metadata.name%3Dheld`, {
        timeoutMs: 20_000, until: (evs) => evs.some((e) => e.type === 'DELETED'),
      });

      const first = await c.request('DELETE', `${CMS}/held`);
      expect(first.status, first.text).to.equal(200);
      expect(first.body.kind).to.equal('ConfigMap');
      const stamp = first.body.metadata.deletionTimestamp;
      expect(stamp).to.match(RFC3339_UTC);
      expect(first.body.metadata.deletionGracePeriodSeconds).to.be.a('number');
      expect(first.body.metadata.finalizers).to.deep.equal(['example.com/a', 'example.com/b']);

      const got = await c.request('GET', `${CMS}/held`);
      expect(got.status).to.equal(200);
      expect(got.body.metadata.deletionTimestamp).to.equal(stamp);
      expect(got.body.data).to.deep.equal({ v: '1' });
      const listed = await c.request('GET', CMS);
      expect(listed.body.items.map((i: any) => i.metadata.name)).to.include('held');

      // A second delete changes nothing.
      const again = await c.request('DELETE', `${CMS}/held`);
      expect(again.status, again.text).to.equal(200);
      expect((await c.request('GET', `${CMS}/held`)).body.metadata.deletionTimestamp).to.equal(stamp);

      // Removing one finalizer (update) keeps it; removing the last (JSON patch) removes it.
      const one = await c.request('PUT', `${CMS}/held`, { body: { ...got.body, metadata: { ...got.body.metadata, finalizers: ['example.com/b'] } } });
      expect(one.status, one.text).to.equal(200);
      expect(one.body.metadata.deletionTimestamp).to.equal(stamp);
      expect(await exists('held')).to.equal(true);
      const last = await c.request('PATCH', `${CMS}/held`, {
        body: [{ op: 'remove', path: '/metadata/finalizers/0' }], headers: { 'Content-Type': 'application/json-patch+json' },
      });
      expect(last.status, last.text).to.equal(200);
      expect(await gone('held'), 'removed after the last finalizer').to.equal(true);

      const { events } = await watching;
      const types = events.map((e) => e.type);
      expect(types[0], `events ${types}`).to.equal('MODIFIED');
      expect(events[0].object.metadata.deletionTimestamp).to.equal(stamp);
      expect(types.at(-1)).to.equal('DELETED');
      expect(types.slice(0, -1).every((t) => t === 'MODIFIED'), `events ${types}`).to.equal(true);
    });

    it('a merge patch that empties the finalizers removes an object being deleted', async () => {
      await create('held2', ['example.com/a']);
      expect((await c.request('DELETE', `${CMS}/held2`)).status).to.equal(200);
      expect(await exists('held2')).to.equal(true);
      const res = await c.request('PATCH', `${CMS}/held2`, {
        body: { metadata: { finalizers: null } }, headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      expect(res.status, res.text).to.equal(200);
      expect(await gone('held2')).to.equal(true);
    });
    it('an object being deleted takes no new finalizer (update, patch, apply: 422), and may still lose one', async () => {
      await create('closing', ['example.com/a', 'example.com/b']);
      expect((await c.request('DELETE', `${CMS}/closing`)).status).to.equal(200);
      const got = (await c.request('GET', `${CMS}/closing`)).body;
      const refused = (res: Response, added: string) => {
        expectStatus(res, 422, 'Invalid');
        expect(res.body.details.causes).to.deep.equal([{
          reason: 'FieldValueForbidden', field: 'metadata.finalizers',
          message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added}}`,
        }]);
      };
      refused(await c.request('PUT', `${CMS}/closing`, {
        body: { ...got, metadata: { ...got.metadata, finalizers: ['example.com/z', 'example.com/a', 'example.com/c'] } },
      }), '"example.com/c", "example.com/z"');
      refused(await c.request('PATCH', `${CMS}/closing`, {
        body: [{ op: 'add', path: '/metadata/finalizers/-', value: 'example.com/c' }], headers: { 'Content-Type': 'application/json-patch+json' },
      }), '"example.com/c"');
      refused(await c.request('PATCH', `${CMS}/closing?fieldManager=late`, {
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'closing', namespace: NS, finalizers: ['example.com/c'] } }),
        headers: { 'Content-Type': 'application/apply-patch+yaml' },
      }), '"example.com/c"');
      const fewer = await c.request('PUT', `${CMS}/closing`, { body: { ...got, metadata: { ...got.metadata, finalizers: ['example.com/a'] } } });
      expect(fewer.status, fewer.text).to.equal(200);
      expect(fewer.body.metadata.finalizers).to.deep.equal(['example.com/a']);
      const last = await c.request('PATCH', `${CMS}/closing`, { body: { metadata: { finalizers: null } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
      expect(last.status, last.text).to.equal(200);
      expect(await gone('closing')).to.equal(true);
    });
  });

  describe('DeleteOptions', () => {
    it('preconditions in the body: a wrong uid or a stale resourceVersion is 409 Conflict and deletes nothing', async () => {
      const obj = await create('pre');
      const wrongUid = await del(`${CMS}/pre`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: '00000000-0000-0000-0000-000000000000' } });
      expectStatus(wrongUid, 409, 'Conflict');
      expect(wrongUid.body.message).to.contain('Precondition');
      const updated = await c.request('PUT', `${CMS}/pre`, { body: { ...obj, data: { v: '2' } } });
      expect(updated.status).to.equal(200);
      const stale = await del(`${CMS}/pre`, { preconditions: { resourceVersion: obj.metadata.resourceVersion } });
      expectStatus(stale, 409, 'Conflict');
      expect(await exists('pre')).to.equal(true);
      const ok = await del(`${CMS}/pre`, {
        kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: obj.metadata.uid, resourceVersion: updated.body.metadata.resourceVersion },
      });
      expect(ok.status, ok.text).to.equal(200);
      expect(await exists('pre')).to.equal(false);
    });

    it('options in the query: gracePeriodSeconds and propagationPolicy=Background delete at once', async () => {
      await create('q1');
      const res = await c.request('DELETE', `${CMS}/q1?gracePeriodSeconds=0&propagationPolicy=Background`);
      expect(res.status, res.text).to.equal(200);
      expect(await exists('q1')).to.equal(false);
    });

    it('malformed options in the query or the body: 400', async () => {
      await create('bad-opts');
      expectStatus(await c.request('DELETE', `${CMS}/bad-opts?propagationPolicy=Sideways`), 400, 'BadRequest');
      expectStatus(await c.request('DELETE', `${CMS}/bad-opts?gracePeriodSeconds=soon`), 400, 'BadRequest');
      expectStatus(await del(`${CMS}/bad-opts`, { propagationPolicy: 'Sideways' }), 400, 'BadRequest');
      expect(await exists('bad-opts')).to.equal(true);
    });

    const policies: Array<[string, { query?: string; body?: unknown }, string]> = [
      ['propagationPolicy=Orphan in the query', { query: 'propagationPolicy=Orphan' }, 'orphan'],
      ['propagationPolicy Orphan in the body', { body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Orphan' } }, 'orphan'],
      ['orphanDependents=true in the query', { query: 'orphanDependents=true' }, 'orphan'],
      ['propagationPolicy=Foreground in the query', { query: 'propagationPolicy=Foreground' }, 'foregroundDeletion'],
      ['propagationPolicy Foreground in the body', { body: { propagationPolicy: 'Foreground' } }, 'foregroundDeletion'],
    ];
    policies.forEach(([title, how, finalizer], i) => {
      it(`${title} is stored as the ${finalizer} finalizer, which the garbage collector then releases`, async () => {
        const name = `policy-${i}`;
        const rv = (await create(name)).metadata.resourceVersion;
        const watching = c.watch(`${CMS}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3D${name}`,
          { until: (e) => e.some((x) => x.type === 'DELETED'), timeoutMs: 15_000 });
        await new Promise((r) => setTimeout(r, 200));
        const res = await del(`${CMS}/${name}${how.query ? `?${how.query}` : ''}`, how.body);
        expect(res.status, res.text).to.equal(200);
        const { events } = await watching;
        const marked = events.find((e) => e.type === 'MODIFIED');
        expect(marked?.object.metadata.finalizers, 'stored with the policy finalizer').to.include(finalizer);
        expect(marked?.object.metadata.deletionTimestamp).to.match(RFC3339_UTC);
        expect(events.at(-1)?.type, 'released once it has no dependents').to.equal('DELETED');
        expect(await gone(name)).to.equal(true);
      });
    });
  });

  describe('a terminating namespace', () => {
    it('is Terminating, loses its contents, refuses creates with 403, and goes once released', async () => {
      const ns = await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'term', finalizers: ['example.com/hold'] } } });
      expect(ns.status, ns.text).to.equal(201);
      expect((await c.request('POST', '/api/v1/namespaces/term/configmaps', { body: { metadata: { name: 'inside' } } })).status).to.equal(201);
      expect((await c.request('POST', '/api/v1/namespaces/term/secrets', { body: { metadata: { name: 'inside' } } })).status).to.equal(201);

      const deleting = await c.request('DELETE', '/api/v1/namespaces/term');
      expect(deleting.status, deleting.text).to.equal(200);
      expect(deleting.body.status.phase).to.equal('Terminating');
      expect(deleting.body.metadata.deletionTimestamp).to.match(RFC3339_UTC);

      const emptied = await waitFor(async () => (await c.request('GET', '/api/v1/namespaces/term/configmaps/inside')).status === 404
        && (await c.request('GET', '/api/v1/namespaces/term/secrets/inside')).status === 404, 10_000);
      expect(emptied, 'namespaced objects removed').to.equal(true);
      const still = await c.request('GET', '/api/v1/namespaces/term');
      expect(still.status).to.equal(200);
      expect(still.body.status.phase).to.equal('Terminating');

      for (const path of ['/api/v1/namespaces/term/configmaps', '/api/v1/namespaces/term/secrets']) {
        const refused = await c.request('POST', path, { body: { metadata: { name: 'late' } } });
        expectStatus(refused, 403, 'Forbidden');
        expect(refused.body.message).to.contain('being terminated');
      }

      // A merge patch: the namespace's own status changes meanwhile, which a PUT of what was read would race with.
      const released = await c.request('PATCH', '/api/v1/namespaces/term', { body: { metadata: { finalizers: null } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
      expect(released.status, released.text).to.equal(200);
      expect(await waitFor(async () => (await c.request('GET', '/api/v1/namespaces/term')).status === 404, 10_000)).to.equal(true);
    });

    it('says in its conditions which content and finalizers its deletion waits for', async () => {
      expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'wait' } } })).status).to.equal(201);
      const held = { metadata: { name: 'held', finalizers: ['example.com/keep'] } };
      expect((await c.request('POST', '/api/v1/namespaces/wait/configmaps', { body: held })).status).to.equal(201);
      expect((await c.request('DELETE', '/api/v1/namespaces/wait')).status).to.equal(200);
      const condition = async (type: string) => ((await c.request('GET', '/api/v1/namespaces/wait')).body.status.conditions ?? [])
        .find((x: { type: string }) => x.type === type);
      expect(await waitFor(async () => (await condition('NamespaceContentRemaining'))?.status === 'True', 10_000)).to.equal(true);
      expect(await condition('NamespaceContentRemaining')).to.deep.include({ reason: 'SomeResourcesRemain', message: 'Some resources are remaining: configmaps. has 1 resource instances' });
      expect(await condition('NamespaceFinalizersRemaining')).to.deep.include({
        status: 'True', reason: 'SomeFinalizersRemain', message: 'Some content in the namespace has finalizers remaining: example.com/keep in 1 resource instances',
      });
      expect(await condition('NamespaceDeletionContentFailure')).to.deep.include({ status: 'False', reason: 'ContentDeleted' });
      const release = await c.request('PATCH', '/api/v1/namespaces/wait/configmaps/held', { body: { metadata: { finalizers: null } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
      expect(release.status).to.equal(200);
      expect(await waitFor(async () => (await c.request('GET', '/api/v1/namespaces/wait')).status === 404, 15_000)).to.equal(true);
    });
  });
});
