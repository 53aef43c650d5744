// The gateway's store layer without HTTP: a Store of one kind over a real
// storage service (in this process, on a loopback port), with the admission
// call a plain function the test controls.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import { StatusError } from '../../internal/apimachinery/status.js';
import { builtinRegistry } from '../../internal/registry/index.js';
import type { RunningServer } from '../../internal/rpc/index.js';
import type { AdmitRequest } from '../../internal/rpc/gen/svc/admission/v1/AdmitRequest.js';
import type { AdmitResponse__Output } from '../../internal/rpc/gen/svc/admission/v1/AdmitResponse.js';
import { StorageClient } from '../../internal/storage/client.js';
import { Store as Storage } from '../../internal/storage/store.js';
import { Objects } from '../../gateway/objects.js';
import { Store, type StoreDeps } from '../../gateway/store/store.js';
import { serveStorage } from '../lib/storage.js';

const registry = builtinRegistry();
const configmaps = registry.lookup('', 'v1', 'configmaps')!;
const deployments = registry.lookup('apps', 'v1', 'deployments')!;
const user = { username: 'alice', uid: '', groups: ['dev'], extra: {} };
const write = { user, dryRun: false };

const allowed = (object?: ApiObject): AdmitResponse__Output => ({
  allowed: true, object: object ? Buffer.from(JSON.stringify(object)) : Buffer.alloc(0), code: 0, reason: '', message: '', causes: [], warnings: [], auditAnnotations: {},
});

/** The error a promise rejects with; fails the test when it resolves. */
async function failure(p: Promise<unknown>): Promise<StatusError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err, 'expected a rejection').to.be.instanceOf(StatusError);
  return err as StatusError;
}

describe('gateway store', () => {
  let dir: string;
  let storage: Storage;
  let server: RunningServer;
  let client: StorageClient;
  let admitted: AdmitRequest[];
  let answer: (req: AdmitRequest) => AdmitResponse__Output;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gateway-store-'));
    storage = await Storage.open(join(dir, 'storage'), { compactionIntervalMs: 0 });
    server = await serveStorage(storage);
    client = new StorageClient(`127.0.0.1:${server.port}`);
  });
  after(async () => {
    client.close();
    await server.stop();
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    admitted = [];
    answer = () => allowed();
  });

  const storeOf = (def = configmaps, deps: Partial<StoreDeps> = {}) => new Store(new Objects(client, def), {
    admission: async (req) => { admitted.push(req); return answer(req); }, ...deps,
  });
  const cm = (name: string, data: Record<string, string> = { a: '1' }): ApiObject =>
    ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data });

  it('creates with server fields, admits once and stores what it answers', async () => {
    const created = await storeOf().create(cm('one'), write);
    expect(created.metadata?.uid).to.match(/^[0-9a-f-]{36}$/);
    expect(created.metadata?.creationTimestamp).to.be.a('string');
    expect(Number(created.metadata?.resourceVersion)).to.be.greaterThan(0);
    expect(admitted.map((a) => [a.operation, a.name, a.namespace])).to.deep.equal([['CREATE', 'one', 'ns']]);
    const { obj } = await new Objects(client, configmaps).get('ns', 'one');
    expect(obj).to.deep.equal(created);
  });

  it('draws a name from generateName and refuses a taken name with AlreadyExists', async () => {
    const drawn = await storeOf().create({ ...cm(''), metadata: { generateName: 'gen-', namespace: 'ns' } }, write);
    expect(drawn.metadata?.name).to.match(/^gen-[a-z0-9]{5}$/);
    await storeOf().create(cm('taken'), write);
    expect((await failure(storeOf().create(cm('taken'), write))).reason).to.equal('AlreadyExists');
    expect((await failure(storeOf().create(cm('taken'), { ...write, dryRun: true }))).reason).to.equal('AlreadyExists');
  });

  it('writes nothing on a dry run', async () => {
    const answered = await storeOf().create(cm('dry'), { ...write, dryRun: true });
    expect(answered.metadata?.uid).to.be.a('string');
    expect(admitted[0].dryRun).to.equal(true);
    expect(await new Objects(client, configmaps).find('ns', 'dry')).to.equal(undefined);
  });

  it('refuses an invalid object with 422 before admission', async () => {
    const err = await failure(storeOf().create(cm('Not_A_Name'), write));
    expect([err.code, err.reason]).to.deep.equal([422, 'Invalid']);
    expect(admitted).to.have.length(0);
  });

  it('answers admission\'s refusal and validates what admission changed', async () => {
    answer = () => ({ ...allowed(), allowed: false, code: 403, reason: 'Forbidden', message: 'no' });
    expect((await failure(storeOf().create(cm('refused'), write))).code).to.equal(403);
    answer = (req) => {
      const obj = JSON.parse(req.object!.toString()) as ApiObject;
      return allowed({ ...obj, metadata: { ...obj.metadata, labels: { 'bad label': 'x' } } });
    };
    expect((await failure(storeOf().create(cm('mutated'), write))).code).to.equal(422);
    expect(await new Objects(client, configmaps).find('ns', 'refused')).to.equal(undefined);
  });

  it('updates through a change of the stored object, and a change that changes nothing writes nothing', async () => {
    const created = await storeOf().create(cm('upd'), write);
    const updated = await storeOf().update('ns', 'upd', (current) => ({ ...current, data: { a: '2' } }), { ...write, conditional: false });
    expect(updated.data).to.deep.equal({ a: '2' });
    expect(updated.metadata?.uid).to.equal(created.metadata?.uid);
    expect(Number(updated.metadata?.resourceVersion)).to.be.greaterThan(Number(created.metadata?.resourceVersion));
    const same = await storeOf().update('ns', 'upd', (current) => structuredClone(current), { ...write, conditional: false });
    expect(same.metadata?.resourceVersion).to.equal(updated.metadata?.resourceVersion);
    expect((await failure(storeOf().update('ns', 'absent', (c) => c, { ...write, conditional: false }))).code).to.equal(404);
  });

  it('retries a lost race unless the update is conditional', async () => {
    await storeOf().create(cm('race'), write);
    const racing = (conditional: boolean) => {
      let raced = false;
      return storeOf().update('ns', 'race', async (current) => {
        if (!raced) {
          raced = true; // another writer gets in between the read and the write
          await storeOf().update('ns', 'race', (c) => ({ ...c, data: { other: String(Date.now()) } }), { ...write, conditional: false });
        }
        return { ...current, data: { mine: String(conditional) } };
      }, { ...write, conditional });
    };
    expect((await racing(false)).data).to.deep.equal({ mine: 'false' });
    expect((await failure(racing(true))).code).to.equal(409);
  });

  it('upserts in one read-modify-write: creates when absent, updates when present, and updates what a racing writer created', async () => {
    const change = (c: ApiObject) => ({ ...c, data: { applied: 'yes' } });
    const first = await storeOf().upsert('ns', 'up', change, () => cm('up'), { ...write, conditional: false });
    expect([first.created, first.obj.data]).to.deep.equal([true, { a: '1' }]);
    const second = await storeOf().upsert('ns', 'up', change, () => cm('up'), { ...write, conditional: false });
    expect([second.created, second.obj.data]).to.deep.equal([false, { applied: 'yes' }]);
    const raced = await storeOf().upsert('ns', 'up-raced', change, async () => {
      await storeOf().create(cm('up-raced', { other: '1' }), write);
      return cm('up-raced');
    }, { ...write, conditional: false });
    expect([raced.created, raced.obj.data]).to.deep.equal([false, { applied: 'yes' }]);
  });

  it('runs the kind\'s update strategy: a spec write counts a generation and keeps the status', async () => {
    const store = storeOf(deployments);
    const deployment: ApiObject = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'ns' },
      spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    };
    const created = await store.create(deployment, write);
    expect(created.metadata?.generation).to.equal(1);
    const scaled = await store.update('ns', 'web', (c) => ({ ...c, spec: { ...(c.spec as object), replicas: 3 }, status: { replicas: 9 } }), { ...write, conditional: false });
    expect(scaled.metadata?.generation).to.equal(2);
    expect((scaled.status as { replicas?: number }).replicas).to.equal((created.status as { replicas?: number }).replicas);
  });

  it('deletes: removes a free object, marks one finalizers hold and removes it once they are gone', async () => {
    await storeOf().create(cm('free'), write);
    expect((await storeOf().delete('ns', 'free', {}, write)).removed).to.equal(true);
    expect(await new Objects(client, configmaps).find('ns', 'free')).to.equal(undefined);
    await storeOf().create({ ...cm('held'), metadata: { name: 'held', namespace: 'ns', finalizers: ['example.com/keep'] } }, write);
    const { obj, removed } = await storeOf().delete('ns', 'held', {}, write);
    expect(removed).to.equal(false);
    expect(obj.metadata?.deletionTimestamp).to.be.a('string');
    expect(admitted.at(-1)?.operation).to.equal('DELETE');
    await storeOf().update('ns', 'held', (c) => ({ ...c, metadata: { ...c.metadata, finalizers: [] } }), { ...write, conditional: false });
    expect(await new Objects(client, configmaps).find('ns', 'held')).to.equal(undefined);
  });

  it('checks delete preconditions', async () => {
    const created = await storeOf().create(cm('pre'), write);
    const err = await failure(storeOf().delete('ns', 'pre', { preconditions: { uid: 'other' } }, write));
    expect([err.code, err.reason]).to.deep.equal([409, 'Conflict']);
    expect((await storeOf().delete('ns', 'pre', { preconditions: { uid: created.metadata?.uid } }, write)).removed).to.equal(true);
  });

  it('walks the schema once: unknown fields are dropped and heard, type errors are 422, ownership is recorded under the manager', async () => {
    const heard: string[][] = [];
    const created = await storeOf().create({ ...cm('walked'), extra: 1, metadata: { name: 'walked', namespace: 'ns', bogus: true } } as ApiObject,
      { ...write, manager: () => 'tester', unknownFields: (paths) => heard.push(paths) });
    expect(heard).to.deep.equal([['metadata.bogus', 'extra']]);
    expect(created).to.not.have.property('extra');
    expect(created.metadata).to.not.have.property('bogus');
    const entries = created.metadata?.managedFields as Array<{ manager: string; operation: string; fieldsV1: unknown }>;
    expect(entries.map((e) => [e.manager, e.operation])).to.deep.equal([['tester', 'Update']]);
    expect(entries[0].fieldsV1).to.deep.equal({ 'f:data': { '.': {}, 'f:a': {} } });
    const err = await failure(storeOf().create({ ...cm('typed'), data: { a: 1 } } as unknown as ApiObject, write));
    expect([err.code, err.details?.causes?.[0]?.field]).to.deep.equal([422, 'data[a]']);
  });

  it('records an update under its manager once per attempt, on the object as stored', async () => {
    await storeOf().create(cm('owned'), { ...write, manager: () => 'creator' });
    let asked = 0;
    const updated = await storeOf().update('ns', 'owned', (c) => ({ ...c, data: { ...(c.data as object), b: '2' } }),
      { ...write, conditional: false, manager: () => { asked++; return 'editor'; } });
    const entries = updated.metadata?.managedFields as Array<{ manager: string; fieldsV1: unknown }>;
    expect(entries.map((e) => e.manager)).to.deep.equal(['creator', 'editor']);
    expect(entries[1].fieldsV1).to.deep.equal({ 'f:data': { 'f:b': {} } });
    expect(asked).to.equal(1);
  });

  it('runs the guard on creates and spec updates, and releases claimed values when a write fails', async () => {
    const guarded: string[] = [];
    let released = 0;
    const deps: Partial<StoreDeps> = {
      guard: async (obj, old) => { guarded.push(`${obj.metadata?.name}:${old ? 'update' : 'create'}`); },
      allocator: { allocate: async () => async () => { released++; } },
    };
    await storeOf(configmaps, deps).create(cm('g'), write);
    await storeOf(configmaps, deps).update('ns', 'g', (c) => ({ ...c, data: { b: '1' } }), { ...write, conditional: false });
    expect(guarded).to.deep.equal(['g:create', 'g:update']);
    answer = () => ({ ...allowed(), allowed: false, code: 403, reason: 'Forbidden', message: 'no' });
    await failure(storeOf(configmaps, deps).create(cm('g2'), write));
    expect(released).to.equal(1);
  });

  it('storage client: absent, present and raced keys are outcomes, not errors', async () => {
    const key = 'core/configmaps/ns/outcomes';
    expect(await client.find(key)).to.equal(undefined);
    expect(await client.createIfAbsent(key, Buffer.from('{}'), 'u1')).to.equal(true);
    expect(await client.createIfAbsent(key, Buffer.from('{}'), 'u2')).to.equal(false);
    const kv = (await client.find(key))!;
    expect(kv.uid).to.equal('u1');
    expect(await client.updateIfAt(key, Buffer.from('{"a":1}'), kv.modRevision)).to.equal(true);
    expect(await client.updateIfAt(key, Buffer.from('{"a":2}'), kv.modRevision)).to.equal(false);
    expect(await client.deleteIfAt(key, kv.modRevision)).to.equal(false);
    expect(await client.deleteIfAt(key)).to.equal(true);
    expect(await client.deleteIfAt(key)).to.equal(false);
  });
});
