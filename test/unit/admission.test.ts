import { expect } from 'chai';
import {
  AdmissionChain, AdmissionConfigError, AdmissionError, FORCE_LIVE_LOOKUP_MS, NamespaceCache, NamespaceLifecycle, admitHandler, buildPlugins, enabledPluginNames,
  type AdmissionPlugin, type AdmissionRequest, type JsonObject, type NamespaceStore, type Operation,
} from '../../internal/admission/index.js';
import { grpc } from '../../internal/rpc/index.js';
import type { GetResponse } from '../../internal/storage/client.js';
import type { AdmitRequest__Output as AdmitRequest } from '../../internal/rpc/gen/svc/admission/v1/AdmitRequest.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { StorageClient } from '../../internal/storage/client.js';
import { Store } from '../../internal/storage/store.js';
import { encodeStored } from '../../internal/storage/objects.js';
import { serveStorage } from '../lib/storage.js';
import { waitFor } from '../lib/cluster.js';
import type { RunningServer } from '../../internal/rpc/index.js';

/** The read of the storage client the plugin uses, over a map of namespaces. */
class FakeNamespaces implements NamespaceStore {
  readonly keys: string[] = [];
  failure?: Error;
  constructor(readonly namespaces: Record<string, JsonObject>) {}
  async get(key: string): Promise<GetResponse> {
    this.keys.push(key);
    if (this.failure) throw this.failure;
    const name = key.split('/')[3];
    const ns = this.namespaces[name];
    if (!ns || key !== `core/namespaces//${name}`) {
      throw Object.assign(new Error(`5 NOT_FOUND: ${key}`), { code: grpc.status.NOT_FOUND, details: key, metadata: new grpc.Metadata() });
    }
    return { kv: { key, value: Buffer.from(JSON.stringify(ns)), modRevision: 1, createRevision: 1, uid: 'u' }, revision: 1 };
  }
}

const namespace = (name: string, extra: { phase?: string; deletionTimestamp?: string } = {}): JsonObject => ({
  apiVersion: 'v1', kind: 'Namespace',
  metadata: { name, ...(extra.deletionTimestamp ? { deletionTimestamp: extra.deletionTimestamp } : {}) },
  status: { phase: extra.phase ?? 'Active' },
});

const store = () => new FakeNamespaces({
  default: namespace('default'),
  live: namespace('live'),
  doomed: namespace('doomed', { phase: 'Terminating' }),
  leaving: namespace('leaving', { deletionTimestamp: '2025-01-01T00:00:00Z' }),
});

/** What plugins are built from, over the fake store; nothing may ask the authorizer. */
const pluginContext = () => ({
  store: store(), namespaces: new NamespaceCache(store(), { watch: false }), storage: store() as unknown as StorageClient,
  pluginConfig: () => undefined, tolerationSeconds: { notReady: 300, unreachable: 300 },
  authorize: async () => { throw new Error('no authorizer'); }, gates: () => false,
});

function configMapRequest(operation: Operation, ns: string, name = 'cm'): AdmissionRequest {
  return {
    uid: 'req-1', kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '', name, namespace: ns, operation, user: { username: 'jane', uid: '', groups: [], extra: {} },
    object: operation === 'DELETE' ? undefined : { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns } },
    dryRun: false,
  };
}

function namespaceRequest(operation: Operation, name: string): AdmissionRequest {
  return {
    ...configMapRequest(operation, ''), name,
    kind: { group: '', version: 'v1', kind: 'Namespace' }, resource: { group: '', version: 'v1', resource: 'namespaces' },
  };
}

const lifecycle = (fake = store()) => new AdmissionChain([new NamespaceLifecycle(new NamespaceCache(fake, { watch: false }))]);

describe('admission', () => {
  describe('NamespaceLifecycle', () => {
    it('admits content into an existing namespace, looking it up in storage', async () => {
      const fake = store();
      const res = await lifecycle(fake).admit(configMapRequest('CREATE', 'live'));
      expect(res.allowed).to.equal(true);
      expect(fake.keys).to.deep.equal(['core/namespaces//live']);
    });

    it('refuses content in a namespace that does not exist with 404 NotFound', async () => {
      for (const op of ['CREATE', 'UPDATE'] as const) {
        const res = await lifecycle().admit(configMapRequest(op, 'missing'));
        expect(res, op).to.deep.include({ allowed: false, code: 404, reason: 'NotFound', message: 'namespaces "missing" not found', causes: [] });
      }
    });

    it('refuses new content in a terminating namespace with 403 and a NamespaceTerminating cause', async () => {
      const res = await lifecycle().admit(configMapRequest('CREATE', 'doomed'));
      expect(res).to.deep.include({
        allowed: false, code: 403, reason: 'Forbidden',
        message: 'configmaps "cm" is forbidden: unable to create new content in namespace doomed because it is being terminated',
        causes: [{ type: 'NamespaceTerminating', message: 'namespace doomed is being terminated', field: 'metadata.namespace' }],
      });
    });

    it('counts a namespace with a deletion timestamp as terminating', async () => {
      const res = await lifecycle().admit(configMapRequest('CREATE', 'leaving'));
      expect(res).to.deep.include({ allowed: false, code: 403 });
    });

    it('names the object by its generateName when it has no name yet, and qualifies the resource by its group', async () => {
      const req = {
        ...configMapRequest('CREATE', 'doomed', ''),
        kind: { group: 'batch', version: 'v1', kind: 'Job' }, resource: { group: 'batch', version: 'v1', resource: 'jobs' },
        object: { metadata: { generateName: 'job-' } },
      };
      const res = await lifecycle().admit(req);
      expect(res.allowed === false && res.message).to.match(/^jobs\.batch "job-" is forbidden: /);
    });

    it('lets updates and deletes through in a terminating namespace', async () => {
      expect((await lifecycle().admit(configMapRequest('UPDATE', 'doomed'))).allowed).to.equal(true);
      expect((await lifecycle().admit(configMapRequest('DELETE', 'doomed'))).allowed).to.equal(true);
    });

    it('lets deletes through without a lookup, even in a missing namespace', async () => {
      const fake = store();
      expect((await lifecycle(fake).admit(configMapRequest('DELETE', 'missing'))).allowed).to.equal(true);
      expect(fake.keys).to.deep.equal([]);
    });

    it('refuses deleting the immortal namespaces', async () => {
      for (const name of ['default', 'svc-system', 'svc-public']) {
        const res = await lifecycle().admit(namespaceRequest('DELETE', name));
        expect(res, name).to.deep.include({
          allowed: false, code: 403, reason: 'Forbidden', message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
        });
      }
    });

    it('lets any other namespace operation through without a lookup', async () => {
      const fake = store();
      expect((await lifecycle(fake).admit(namespaceRequest('DELETE', 'live'))).allowed).to.equal(true);
      expect((await lifecycle(fake).admit(namespaceRequest('CREATE', 'fresh'))).allowed).to.equal(true);
      expect((await lifecycle(fake).admit(namespaceRequest('UPDATE', 'default'))).allowed).to.equal(true);
      expect(fake.keys).to.deep.equal([]);
    });

    it('lets cluster-scoped objects and local access reviews through', async () => {
      const node = { ...configMapRequest('CREATE', ''), kind: { group: '', version: 'v1', kind: 'Node' } };
      expect((await lifecycle().admit(node)).allowed).to.equal(true);
      const review = {
        ...configMapRequest('CREATE', 'missing'),
        resource: { group: 'authorization.svc.io', version: 'v1', resource: 'localsubjectaccessreviews' },
      };
      expect((await lifecycle().admit(review)).allowed).to.equal(true);
    });

    it('does not handle CONNECT', () => {
      const plugin = new NamespaceLifecycle(new NamespaceCache(store(), { watch: false }));
      expect(['CREATE', 'UPDATE', 'DELETE', 'CONNECT'].map((op) => plugin.handles(op as Operation))).to.deep.equal([true, true, true, false]);
    });

    it('answers 503 when storage cannot be reached, 500 when it fails otherwise', async () => {
      const fake = store();
      fake.failure = Object.assign(new Error('14 UNAVAILABLE: no connection'), { code: grpc.status.UNAVAILABLE, details: 'x' });
      const down = await lifecycle(fake).admit(configMapRequest('CREATE', 'live'));
      expect(down).to.deep.include({ allowed: false, code: 503, reason: 'ServiceUnavailable' });
      expect(down.allowed === false && down.message).to.include('the storage service is unavailable: 14 UNAVAILABLE');
      fake.failure = Object.assign(new Error('13 INTERNAL: disk full'), { code: grpc.status.INTERNAL, details: 'disk full' });
      const broken = await lifecycle(fake).admit(configMapRequest('CREATE', 'live'));
      expect(broken).to.deep.include({ allowed: false, code: 500, reason: 'InternalError' });
      expect(broken.allowed === false && broken.message).to.include('Internal error occurred: NamespaceLifecycle: 13 INTERNAL');
    });

    it('judges dry-run requests the same way', async () => {
      const res = await lifecycle().admit({ ...configMapRequest('CREATE', 'missing'), dryRun: true });
      expect(res).to.deep.include({ allowed: false, code: 404 });
    });
  });

  describe('chain', () => {
    const plugin = (name: string, phase: 'mutating' | 'validating', admit: AdmissionPlugin['admit'], ops: Operation[] = ['CREATE']): AdmissionPlugin =>
      ({ name, phase, handles: (op) => ops.includes(op), admit });

    it('runs mutating plugins before validating ones, each seeing the object as mutated so far', async () => {
      const seen: string[] = [];
      const label = (value: string) => async (req: AdmissionRequest) => {
        seen.push(`mutate ${value}`);
        const metadata = req.object!.metadata as JsonObject;
        return { object: { ...req.object, metadata: { ...metadata, labels: { ...(metadata.labels as object), [value]: 'yes' } } } };
      };
      const validate = plugin('check', 'validating', async (req) => {
        seen.push(`validate ${Object.keys((req.object!.metadata as { labels: object }).labels).join(',')}`);
        return { warnings: ['looked at it'], auditAnnotations: { 'check/seen': 'true' } };
      });
      const chain = new AdmissionChain([validate, plugin('a', 'mutating', label('a')), plugin('b', 'mutating', label('b'))]);
      const res = await chain.admit(configMapRequest('CREATE', 'live'));
      expect(seen).to.deep.equal(['mutate a', 'mutate b', 'validate a,b']);
      expect(res).to.deep.include({ allowed: true, warnings: ['looked at it'], auditAnnotations: { 'check/seen': 'true' } });
      expect(res.allowed && (res.object?.metadata as JsonObject).labels).to.deep.equal({ a: 'yes', b: 'yes' });
    });

    it('stops at the first refusal and skips plugins that do not handle the operation', async () => {
      let reached = false;
      const chain = new AdmissionChain([
        plugin('update-only', 'mutating', async () => { throw new AdmissionError(400, 'BadRequest', 'not me'); }, ['UPDATE']),
        plugin('refuse', 'validating', async () => { throw new AdmissionError(422, 'Invalid', 'bad', [{ type: 'FieldValueInvalid', message: 'm', field: 'f' }]); }),
        plugin('after', 'validating', async () => { reached = true; }),
      ]);
      const res = await chain.admit(configMapRequest('CREATE', 'live'));
      expect(res).to.deep.include({ allowed: false, code: 422, reason: 'Invalid', message: 'bad' });
      expect(reached).to.equal(false);
    });

    it('turns an unexpected plugin failure into an internal error', async () => {
      const chain = new AdmissionChain([plugin('broken', 'mutating', async () => { throw new TypeError('oops'); })]);
      expect(await chain.admit(configMapRequest('CREATE', 'live'))).to.deep.include({ allowed: false, code: 500, reason: 'InternalError' });
    });
  });

  describe('plugin selection', () => {
    it('enables the default plugins, in run order, and others when asked', () => {
      const defaults = enabledPluginNames([], []);
      expect(defaults).to.include.members(['NamespaceLifecycle', 'CertificateApproval']).and.not.include('NodeRestriction');
      expect(enabledPluginNames(['NamespaceLifecycle'], [])).to.deep.equal(defaults);
      expect(enabledPluginNames(['NodeRestriction'], []).filter((n) => n !== 'NodeRestriction')).to.deep.equal(defaults);
      const plugins = buildPlugins([], [], pluginContext());
      expect([...new Set(plugins.map((p) => p.name))]).to.deep.equal(defaults);
      plugins.forEach((p) => p.stop?.());
    });

    it('disables a default plugin', () => {
      expect(enabledPluginNames([], ['NamespaceLifecycle'])).to.deep.equal(enabledPluginNames([], []).filter((n) => n !== 'NamespaceLifecycle'));
    });

    it('refuses unknown names and a plugin both enabled and disabled', () => {
      expect(() => enabledPluginNames(['Nope'], [])).to.throw(AdmissionConfigError, 'enable-admission-plugins plugin "Nope" is unknown');
      expect(() => enabledPluginNames([], ['Gone'])).to.throw(AdmissionConfigError, 'disable-admission-plugins plugin "Gone" is unknown');
      expect(() => enabledPluginNames(['NamespaceLifecycle'], ['NamespaceLifecycle']))
        .to.throw(AdmissionConfigError, '[NamespaceLifecycle] in enable-admission-plugins and disable-admission-plugins overlapped');
    });
  });

  describe('Admit handler', () => {
    const admitRequest = (ns: string, object: JsonObject): AdmitRequest => ({
      uid: 'u1', kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' },
      subresource: '', name: 'cm', namespace: ns, operation: 'CREATE', user: null,
      object: Buffer.from(JSON.stringify(object)), oldObject: Buffer.alloc(0), dryRun: false, options: Buffer.alloc(0),
      requestKind: null, requestResource: null, requestSubResource: '',
    });

    it('answers a refusal with its code, reason, message and causes', async () => {
      const res = await admitHandler(lifecycle())(admitRequest('doomed', { metadata: { name: 'cm' } }));
      expect(res).to.deep.include({ allowed: false, code: 403, reason: 'Forbidden' });
      expect(res.causes).to.have.length(1);
    });

    it('answers an admitted, unchanged object with an empty object', async () => {
      const res = await admitHandler(lifecycle())(admitRequest('live', { metadata: { name: 'cm' } }));
      expect(res.allowed).to.equal(true);
      expect(Buffer.from(res.object as Buffer).length).to.equal(0);
    });

    it('returns the mutated object as JSON', async () => {
      const chain = new AdmissionChain([{
        name: 'm', phase: 'mutating', handles: () => true,
        admit: async (req) => ({ object: { ...req.object, data: { added: 'x' } } }),
      }]);
      const res = await admitHandler(chain)(admitRequest('live', { metadata: { name: 'cm' } }));
      expect(JSON.parse(Buffer.from(res.object as Buffer).toString())).to.deep.equal({ metadata: { name: 'cm' }, data: { added: 'x' } });
    });

    it('rejects an object that is not JSON as an invalid argument', async () => {
      const bad = { ...admitRequest('live', {}), object: Buffer.from('{nope') };
      let code: number | undefined;
      await admitHandler(lifecycle())(bad).catch((err: { code: number }) => { code = err.code; });
      expect(code).to.equal(grpc.status.INVALID_ARGUMENT);
    });
  });

  describe('NamespaceCache over a storage service', () => {
    let dir: string;
    let store: Store;
    let server: RunningServer;
    let client: StorageClient;
    let now = 0;
    let registry: Registry;
    let cache: NamespaceCache;
    const reads = async (): Promise<Record<string, number>> => Object.fromEntries(
      (await registry.getSingleMetric('admission_namespace_storage_reads_total')!.get()).values.map((v) => [v.labels.reason, v.value]));
    const put = (name: string, extra: { phase?: string } = {}) =>
      client.create(`core/namespaces//${name}`, encodeStored(namespace(name, extra) as any), `uid-${name}`);

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'admission-ns-'));
      store = await Store.open(join(dir, 'storage'), { compactionIntervalMs: 0 });
      server = await serveStorage(store);
      client = new StorageClient(`127.0.0.1:${server.port}`);
      await put('known');
      await put('closing', { phase: 'Terminating' });
      registry = new Registry();
      cache = new NamespaceCache(client, { registry, clock: () => now }).start();
      // In memory once a lookup reads storage no more.
      const total = async () => Object.values(await reads()).reduce((a, b) => a + b, 0);
      expect(await waitFor(async () => { const before = await total(); await cache.get('known'); return await total() === before; }, 5000, 20)).to.equal(true);
      registry.resetMetrics();
    });
    after(async () => {
      cache.stop();
      client.close();
      await server.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const state = async (name: string) => {
      const found = await cache.get(name);
      return found && { terminating: found.terminating, name: found.namespace.metadata?.name };
    };

    it('answers known active namespaces from memory, reading storage on a miss and to confirm a terminating one', async () => {
      expect(await state('known')).to.deep.equal({ terminating: false, name: 'known' });
      expect(await reads()).to.deep.equal({});
      expect(await state('closing')).to.deep.equal({ terminating: true, name: 'closing' });
      expect(await reads()).to.deep.equal({ terminating: 1 });
      await put('brand-new');
      expect(await state('brand-new')).to.deep.equal({ terminating: false, name: 'brand-new' });
      expect(await cache.get('absent')).to.equal(undefined);
      expect((await reads()).miss).to.be.at.least(1);
    });

    it('reads storage for a namespace whose deletion was admitted, for 30 seconds', async () => {
      cache.deleting('known');
      expect(await state('known')).to.deep.equal({ terminating: false, name: 'known' });
      expect((await reads())['recently-deleted']).to.equal(1);
      now += FORCE_LIVE_LOOKUP_MS + 1;
      await cache.get('known');
      expect((await reads())['recently-deleted']).to.equal(1);
    });
  });
});
