import { expect } from 'chai';
import { Cluster, waitFor } from '../lib/cluster.js';

describe('gateway: resources, errors, discovery and health over HTTPS', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  const cm = (name: string, data: Record<string, string> = { a: '1' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

  it('creates the initial namespaces at start', async () => {
    const res = await c.request('GET', '/api/v1/namespaces');
    expect(res.status).to.equal(200);
    expect(res.body.kind).to.equal('NamespaceList');
    const names = res.body.items.map((n: any) => n.metadata.name);
    expect(names).to.include.members(['default', 'svc-system', 'svc-public', 'svc-node-lease']);
    expect(res.body.items[0].status.phase).to.equal('Active');
  });

  it('creates a configmap with uid, creationTimestamp and resourceVersion, then gets it', async () => {
    const created = await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('one') });
    expect(created.status).to.equal(201);
    const meta = created.body.metadata;
    expect(meta.uid).to.match(/^[0-9a-f-]{36}$/);
    expect(meta.creationTimestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Number(meta.resourceVersion)).to.be.greaterThan(0);
    expect(meta.namespace).to.equal('default');
    const got = await c.request('GET', '/api/v1/namespaces/default/configmaps/one');
    expect(got.status).to.equal(200);
    expect(got.body).to.deep.equal(created.body);
  });

  it('answers 409 AlreadyExists for a second create with the same name', async () => {
    const res = await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('one') });
    expect(res.status).to.equal(409);
    expect(res.body).to.include({ kind: 'Status', status: 'Failure', reason: 'AlreadyExists', code: 409 });
    expect(res.body.details).to.deep.include({ name: 'one', kind: 'configmaps' });
  });

  it('answers 404 NotFound as a Status for a missing object', async () => {
    const res = await c.request('GET', '/api/v1/namespaces/default/configmaps/missing');
    expect(res.status).to.equal(404);
    expect(res.body).to.include({ kind: 'Status', reason: 'NotFound', code: 404, message: 'configmaps "missing" not found' });
  });

  it('generates a name from generateName', async () => {
    const res = await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { generateName: 'gen-' }, data: {} } });
    expect(res.status).to.equal(201);
    expect(res.body.metadata.name).to.match(/^gen-[a-z0-9]{5}$/);
  });

  it('updates with the current resourceVersion and refuses a stale one with 409 Conflict', async () => {
    const got = (await c.request('GET', '/api/v1/namespaces/default/configmaps/one')).body;
    const updated = await c.request('PUT', '/api/v1/namespaces/default/configmaps/one', { body: { ...got, data: { a: '2' } } });
    expect(updated.status).to.equal(200);
    expect(updated.body.data).to.deep.equal({ a: '2' });
    expect(Number(updated.body.metadata.resourceVersion)).to.be.greaterThan(Number(got.metadata.resourceVersion));
    expect(updated.body.metadata.uid).to.equal(got.metadata.uid);
    const stale = await c.request('PUT', '/api/v1/namespaces/default/configmaps/one', { body: { ...got, data: { a: '3' } } });
    expect(stale.status).to.equal(409);
    expect(stale.body.reason).to.equal('Conflict');
  });

  it('an update ignores what it says of creationTimestamp (however spelled) and keeps the stored one', async () => {
    const got = (await c.request('GET', '/api/v1/namespaces/default/configmaps/one')).body;
    const stamp: string = got.metadata.creationTimestamp;
    const millis = stamp.replace(/Z$/, '.000Z'); // as @kubernetes/client-node writes a Date
    const same = await c.request('PUT', '/api/v1/namespaces/default/configmaps/one', { body: { ...got, metadata: { ...got.metadata, creationTimestamp: millis } } });
    expect(same.status, same.text).to.equal(200);
    expect(same.body.metadata.creationTimestamp).to.equal(stamp);
    expect(same.body.metadata.resourceVersion, 'nothing changed: nothing written').to.equal(got.metadata.resourceVersion);
    const other = await c.request('PUT', '/api/v1/namespaces/default/configmaps/one', {
      body: { ...got, data: { a: 'moved' }, metadata: { ...got.metadata, creationTimestamp: '2001-01-01T00:00:00Z' } },
    });
    expect(other.status, other.text).to.equal(200);
    expect(other.body.metadata.creationTimestamp).to.equal(stamp);
    const uid = await c.request('PUT', '/api/v1/namespaces/default/configmaps/one', { body: { ...other.body, metadata: { ...other.body.metadata, uid: 'another' } } });
    // A uid in a replacing write is a precondition on the stored object, as for delete.
    expect(uid.status, uid.text).to.equal(409);
    expect(uid.body.reason).to.equal('Conflict');
    expect(uid.body.message).to.equal(`Operation cannot be fulfilled on configmaps "one": Precondition failed: UID in precondition: another, UID in object meta: ${other.body.metadata.uid}`);
    // A patch carries no precondition: changing the uid there is an invalid change of an immutable field.
    const patched = await c.request('PATCH', '/api/v1/namespaces/default/configmaps/one', { body: { metadata: { uid: 'another' } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(patched.status, patched.text).to.equal(422);
    expect(patched.body.details.causes).to.deep.equal([{ reason: 'FieldValueInvalid', message: 'Invalid value: "another": field is immutable', field: 'metadata.uid' }]);
  });

  it('writes times back as the platform does: Time to the second, MicroTime to the microsecond, in UTC', async () => {
    const lease = {
      metadata: { name: 'times' },
      spec: { holderIdentity: 'a', acquireTime: '2026-11-23T19:14:33.000Z', renewTime: '2026-11-23T20:14:33.5+01:00' },
    };
    const res = await c.request('POST', '/apis/coordination.svc.io/v1/namespaces/default/leases', { body: lease });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.spec).to.include({ acquireTime: '2026-11-23T19:14:33.000000Z', renewTime: '2026-11-23T19:14:33.500000Z' });
    const job = await c.request('POST', '/apis/batch/v1/namespaces/default/jobs', {
      body: { metadata: { name: 'times' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
    });
    expect(job.status, job.text).to.equal(201);
    const started = await c.request('PUT', '/apis/batch/v1/namespaces/default/jobs/times/status', {
      body: { ...job.body, status: { ...job.body.status, startTime: '2026-11-23T19:14:33.000Z' } },
    });
    expect(started.status, started.text).to.equal(200);
    expect(started.body.status.startTime).to.equal('2026-11-23T19:14:33Z');
    // The same instant spelled another way is no change of an immutable time.
    const again = await c.request('PUT', '/apis/batch/v1/namespaces/default/jobs/times/status', {
      body: { ...started.body, status: { ...started.body.status, startTime: '2026-11-23T20:14:33+01:00' } },
    });
    expect(again.status, again.text).to.equal(200);
    expect(again.body.metadata.resourceVersion).to.equal(started.body.metadata.resourceVersion);
  });

  it('does not write an update that changes nothing', async () => {
    const got = (await c.request('GET', '/api/v1/namespaces/default/configmaps/one')).body;
    const same = await c.request('PUT', '/api/v1/namespaces/default/configmaps/one', { body: got });
    expect(same.status).to.equal(200);
    expect(same.body.metadata.resourceVersion).to.equal(got.metadata.resourceVersion);
  });

  it('answers 400 BadRequest for a malformed body and a name that differs from the URL', async () => {
    const bad = await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: '{"metadata": ' });
    expect(bad.status).to.equal(400);
    expect(bad.body.reason).to.equal('BadRequest');
    const got = (await c.request('GET', '/api/v1/namespaces/default/configmaps/one')).body;
    const renamed = await c.request('PUT', '/api/v1/namespaces/default/configmaps/one', { body: { ...got, metadata: { ...got.metadata, name: 'two' } } });
    expect(renamed.status).to.equal(400);
    expect(renamed.body.reason).to.equal('BadRequest');
  });

  it('answers 422 Invalid naming the field for an invalid name', async () => {
    const res = await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('Not_Valid') });
    expect(res.status).to.equal(422);
    expect(res.body.reason).to.equal('Invalid');
    expect(res.body.details.causes[0].field).to.equal('metadata.name');
  });

  describe('Status bodies byte for byte as the platform writes them (field order, escapes, final newline)', () => {
    const failure = (message: string, reason: string, details: string, code: number) =>
      `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":${message},"reason":"${reason}","details":${details},"code":${code}}\n`;

    it('404 NotFound', async () => {
      const res = await c.request('GET', '/api/v1/namespaces/default/configmaps/missing');
      expect(res.text).to.equal(failure('"configmaps \\"missing\\" not found"', 'NotFound', '{"name":"missing","kind":"configmaps"}', 404));
      const grouped = await c.request('GET', '/apis/apps/v1/namespaces/default/deployments/missing');
      expect(grouped.text).to.equal(failure('"deployments.apps \\"missing\\" not found"', 'NotFound', '{"name":"missing","group":"apps","kind":"deployments"}', 404));
      for (const path of ['/api/v1/nosuchthings', '/no/such/path']) {
        expect((await c.request('GET', path)).text, path).to.equal(failure('"the server could not find the requested resource"', 'NotFound', '{}', 404));
      }
    });

    it('409 AlreadyExists and 409 Conflict', async () => {
      await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('bytes') });
      const exists = await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('bytes') });
      expect(exists.text).to.equal(failure('"configmaps \\"bytes\\" already exists"', 'AlreadyExists', '{"name":"bytes","kind":"configmaps"}', 409));
      const stale = await c.request('PUT', '/api/v1/namespaces/default/configmaps/bytes', { body: { ...cm('bytes'), metadata: { name: 'bytes', resourceVersion: '1' } } });
      expect(stale.text).to.equal(failure(
        '"Operation cannot be fulfilled on configmaps \\"bytes\\": the object has been modified; please apply your changes to the latest version and try again"',
        'Conflict', '{"name":"bytes","kind":"configmaps"}', 409));
    });

    it('422 Invalid, causes in the order reason, message, field', async () => {
      const res = await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('Not_Valid') });
      const why = String.raw`Invalid value: \"Not_Valid\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
      expect(res.text).to.equal(failure(`"ConfigMap \\"Not_Valid\\" is invalid: metadata.name: ${why}"`, 'Invalid',
        `{"name":"Not_Valid","kind":"ConfigMap","causes":[{"reason":"FieldValueInvalid","message":"${why}","field":"metadata.name"}]}`, 422));
    });

    it('escapes <, > and & as the platform does, in objects too', async () => {
      const res = await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: cm('escapes', { html: '<a>&</a>' }) });
      expect(res.status, res.text).to.equal(201);
      expect(res.text).to.contain('"html":"\\u003ca\\u003e\\u0026\\u003c/a\\u003e"').and.match(/}\n$/);
    });
  });

  it('answers 405 MethodNotAllowed and 406 NotAcceptable', async () => {
    const post = await c.request('POST', '/api/v1/configmaps', { body: cm('x') });
    expect(post.status).to.equal(405);
    expect(post.body.reason).to.equal('MethodNotAllowed');
    const accept = await c.request('GET', '/api/v1/namespaces/default/configmaps/one', { headers: { Accept: 'text/csv' } });
    expect(accept.status).to.equal(406);
    expect(accept.body.reason).to.equal('NotAcceptable');
  });

  /** How often admission has read a namespace from storage rather than memory. */
  const namespaceReads = async (): Promise<number> => {
    const res = await c.request('GET', '/metrics');
    expect(res.status).to.equal(200);
    return res.text.split('\n').filter((l) => l.startsWith('admission_namespace_storage_reads_total{'))
      .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
  };

  it('refuses a create in a namespace that does not exist (admission), after reading storage to be sure', async () => {
    const before = await namespaceReads();
    const res = await c.request('POST', '/api/v1/namespaces/nowhere/configmaps', { body: cm('x') });
    expect(res.status).to.equal(404);
    expect(res.body.reason).to.equal('NotFound');
    expect(res.body.message).to.equal('namespaces "nowhere" not found');
    expect(await namespaceReads()).to.be.greaterThan(before);
  });

  it('admits a create sent right after its namespace was created', async () => {
    for (let i = 0; i < 5; i++) {
      const ns = `just-made-${i}`;
      expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status).to.equal(201);
      const res = await c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: cm('first') });
      expect(res.status, res.text).to.equal(201);
    }
  });

  it('admits creates in a known namespace from memory: no storage read by admission', async () => {
    let n = 0;
    const create = async () => expect((await c.request('POST', '/api/v1/namespaces/just-made-0/configmaps', { body: cm(`known-${n++}`) })).status).to.equal(201);
    // Known once admission's memory has caught up with the namespace's creation.
    expect(await waitFor(async () => { const before = await namespaceReads(); await create(); return await namespaceReads() === before; }, 10_000, 100)).to.equal(true);
    const before = await namespaceReads();
    for (let i = 0; i < 10; i++) await create();
    expect(await namespaceReads()).to.equal(before);
  });

  it('lists in one namespace and across all namespaces', async () => {
    await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'team-a' } } });
    await c.request('POST', '/api/v1/namespaces/team-a/configmaps', { body: cm('in-a') });
    const one = await c.request('GET', '/api/v1/namespaces/team-a/configmaps');
    expect(one.body.kind).to.equal('ConfigMapList');
    expect(one.body.items.map((i: any) => i.metadata.name)).to.deep.equal(['in-a']);
    const all = await c.request('GET', '/api/v1/configmaps');
    const names = all.body.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`);
    expect(names).to.include.members(['default/one', 'team-a/in-a']);
    expect(Number(all.body.metadata.resourceVersion)).to.be.greaterThan(0);
  });

  it('stores secrets with stringData merged into base64 data and type Opaque', async () => {
    const res = await c.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 's1' }, stringData: { password: 'hunter2' } } });
    expect(res.status).to.equal(201);
    expect(res.body.type).to.equal('Opaque');
    expect(res.body.data.password).to.equal(Buffer.from('hunter2').toString('base64'));
    expect(res.body).not.to.have.property('stringData');
  });

  it('deletes an object (Status Success) and deletecollection by label', async () => {
    const uid = (await c.request('GET', '/api/v1/namespaces/default/secrets/s1')).body.metadata.uid;
    const del = await c.request('DELETE', '/api/v1/namespaces/default/secrets/s1');
    expect(del.status).to.equal(200);
    // As the platform's store answers it: no code.
    expect(del.text).to.equal(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"s1","kind":"secrets","uid":"${uid}"}}\n`);
    expect((await c.request('GET', '/api/v1/namespaces/default/secrets/s1')).status).to.equal(404);
    for (const n of ['l1', 'l2', 'l3']) {
      await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: n, labels: { group: n === 'l3' ? 'b' : 'a' } } } });
    }
    const dc = await c.request('DELETE', '/api/v1/namespaces/default/configmaps?labelSelector=group%3Da');
    expect(dc.status).to.equal(200);
    expect(dc.body.items.map((i: any) => i.metadata.name).sort()).to.deep.equal(['l1', 'l2']);
    const left = await c.request('GET', '/api/v1/namespaces/default/configmaps?labelSelector=group');
    expect(left.body.items.map((i: any) => i.metadata.name)).to.deep.equal(['l3']);
  });

  it('deleting a namespace makes it Terminating, removes its contents, then removes it', async () => {
    await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'doomed' } } });
    await c.request('POST', '/api/v1/namespaces/doomed/configmaps', { body: cm('inside') });
    const del = await c.request('DELETE', '/api/v1/namespaces/doomed');
    expect(del.status).to.equal(200);
    expect(del.body.status.phase).to.equal('Terminating');
    expect(del.body.metadata.deletionTimestamp).to.be.a('string');
    let gone = false;
    for (let i = 0; i < 50 && !gone; i++) {
      gone = (await c.request('GET', '/api/v1/namespaces/doomed')).status === 404;
      if (!gone) await new Promise((r) => setTimeout(r, 100));
    }
    expect(gone).to.equal(true);
    expect((await c.request('GET', '/api/v1/namespaces/doomed/configmaps/inside')).status).to.equal(404);
  });

  it('admits content into a namespace re-created right after its namesake was removed', async () => {
    expect((await c.request('GET', '/api/v1/namespaces/doomed')).status).to.equal(404);
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'doomed' } } })).status).to.equal(201);
    const res = await c.request('POST', '/api/v1/namespaces/doomed/configmaps', { body: cm('reborn') });
    expect(res.status, res.text).to.equal(201);
  });

  it('a terminating namespace waits for finalizers of its objects and refuses creates meanwhile', async () => {
    await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'held' } } });
    await c.request('POST', '/api/v1/namespaces/held/configmaps', { body: { metadata: { name: 'pinned', finalizers: ['example.com/keep'] } } });
    expect((await c.request('DELETE', '/api/v1/namespaces/held')).status).to.equal(200);
    const refused = await c.request('POST', '/api/v1/namespaces/held/configmaps', { body: cm('late') });
    expect(refused.status).to.equal(403);
    expect(refused.body).to.deep.include({
      reason: 'Forbidden', message: 'configmaps "late" is forbidden: unable to create new content in namespace held because it is being terminated',
    });
    expect(refused.body.details.causes).to.deep.equal([{ reason: 'NamespaceTerminating', message: 'namespace held is being terminated', field: 'metadata.namespace' }]);
    let pinned: any;
    for (let i = 0; i < 50 && !pinned?.metadata?.deletionTimestamp; i++) {
      pinned = (await c.request('GET', '/api/v1/namespaces/held/configmaps/pinned')).body;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(pinned.metadata.deletionTimestamp).to.be.a('string');
    expect((await c.request('GET', '/api/v1/namespaces/held')).body.status.phase).to.equal('Terminating');
    const released = await c.request('PUT', '/api/v1/namespaces/held/configmaps/pinned', { body: { ...pinned, metadata: { ...pinned.metadata, finalizers: [] } } });
    expect(released.status).to.equal(200);
    let gone = false;
    for (let i = 0; i < 100 && !gone; i++) {
      gone = (await c.request('GET', '/api/v1/namespaces/held')).status === 404;
      if (!gone) await new Promise((r) => setTimeout(r, 100));
    }
    expect(gone).to.equal(true);
  });

  it('refuses to delete the default namespace', async () => {
    const res = await c.request('DELETE', '/api/v1/namespaces/default');
    expect(res.status).to.equal(403);
    expect(res.body.reason).to.equal('Forbidden');
  });

  it('serves discovery and /version', async () => {
    const api = await c.request('GET', '/api');
    expect(api.body).to.include({ kind: 'APIVersions' });
    expect(api.body.versions).to.deep.equal(['v1']);
    const v1 = await c.request('GET', '/api/v1');
    expect(v1.body.kind).to.equal('APIResourceList');
    const cmRes = v1.body.resources.find((r: any) => r.name === 'configmaps');
    expect(cmRes).to.deep.include({ namespaced: true, kind: 'ConfigMap', shortNames: ['cm'] });
    const apis = await c.request('GET', '/apis');
    expect(apis.body.kind).to.equal('APIGroupList');
    // Discovery ends with the newline of the platform's encoder; OpenAPI is bare marshalled JSON.
    for (const doc of [api, v1, apis]) expect(doc.text.endsWith('}\n'), doc.text.slice(-20)).to.equal(true);
    expect((await c.request('GET', '/openapi/v2')).text.endsWith('}')).to.equal(true);
    const version = await c.request('GET', '/version');
    expect(version.body).to.include({ major: '1', minor: '34' });
  });

  it('serves /livez, /readyz and /healthz with verbose and exclude', async () => {
    for (const p of ['/livez', '/readyz', '/healthz']) {
      const res = await c.request('GET', p);
      expect(res.status, p).to.equal(200);
      expect(res.text).to.equal('ok');
    }
    const verbose = await c.request('GET', '/readyz?verbose&exclude=log');
    expect(verbose.text).to.contain('[+]ping ok').and.contain('[+]log excluded: ok').and.contain('[+]store ok').and.contain('readyz check passed');
  });

  it('serves YAML when asked', async () => {
    const res = await c.request('GET', '/api/v1/namespaces/default', { headers: { Accept: 'application/yaml' } });
    expect(res.headers['content-type']).to.contain('application/yaml');
    expect(res.text).to.contain('kind: Namespace');
  });

  it('answers a Table when kubectl asks for one', async () => {
    const res = await c.request('GET', '/api/v1/namespaces', { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' } });
    expect(res.body.kind).to.equal('Table');
    expect(res.body.columnDefinitions.map((d: any) => d.name)).to.deep.equal(['Name', 'Status', 'Age']);
    expect(res.body.rows.length).to.be.greaterThan(3);
  });
});
