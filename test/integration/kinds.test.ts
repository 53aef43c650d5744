// Every stored kind through HTTPS: create, get, update and delete of the
// realistic manifests of test/e2e/testdata/all-kinds.yaml, then the rules of
// document 3 as a client meets them (422 Invalid naming the field, defaults).
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { splitApiVersion, type ApiObject } from '../../internal/apimachinery/meta.js';
import { group } from '../../internal/names/index.js';
import { builtinRegistry, type KindDef } from '../../internal/registry/index.js';
import { Cluster, waitFor } from '../lib/cluster.js';

const ALL_KINDS = fileURLToPath(new URL('../../../test/e2e/testdata/all-kinds.yaml', import.meta.url));
const registry = builtinRegistry();
const manifests = YAML.parseAllDocuments(readFileSync(ALL_KINDS, 'utf8')).map((d) => d.toJSON() as ApiObject);

function defOf(obj: ApiObject): KindDef {
  const { group, version } = splitApiVersion(obj.apiVersion!);
  const def = registry.lookupKind(group, version, obj.kind!);
  if (!def) throw new Error(`no resource serves ${obj.apiVersion} ${obj.kind}`);
  return def;
}

/** The collection path of an object's resource, in its namespace when it has one. */
function collectionPath(def: KindDef, namespace?: string): string {
  const root = def.group ? `/apis/${def.group}/${def.version}` : `/api/${def.version}`;
  return `${root}${def.namespaced ? `/namespaces/${namespace}` : ''}/${def.resource}`;
}

/** Where `given` is not contained in `actual` (every member kept, lists of the same length), or undefined. */
function missingPart(given: unknown, actual: unknown, path = ''): string | undefined {
  if (Array.isArray(given)) {
    if (!Array.isArray(actual) || actual.length !== given.length) return path;
    return given.map((g, i) => missingPart(g, actual[i], `${path}[${i}]`)).find((p) => p !== undefined);
  }
  if (given !== null && typeof given === 'object') {
    if (actual === null || typeof actual !== 'object') return path;
    return Object.entries(given).map(([k, v]) => missingPart(v, (actual as Record<string, unknown>)[k], `${path}.${k}`)).find((p) => p !== undefined);
  }
  return given === actual ? undefined : path;
}

/** Write-only members that the server turns into others. */
const WRITE_ONLY = new Set(['stringData']);

const causeFieldsOf = (body: any): string[] => (body.details?.causes ?? []).map((cause: any) => cause.field);

const objectPath = (obj: ApiObject) => `${collectionPath(defOf(obj), obj.metadata?.namespace)}/${obj.metadata!.name}`;

describe('kinds over HTTPS', function () {
  this.timeout(120_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('the manifests hold one object of every stored kind', () => {
    const served = registry.all().filter((d) => !d.ephemeral && d.verbs.includes('create') && !d.storageVersion).map((d) => `${d.group}/${d.kind}`);
    const given = manifests.map((m) => `${defOf(m).group}/${m.kind}`);
    expect([...given].sort()).to.deep.equal([...served].sort());
  });

  describe('create, get, update and delete', () => {
    const [namespace, ...objects] = manifests;

    before(async () => {
      const res = await c.request('POST', collectionPath(defOf(namespace)), { body: namespace });
      expect(res.status, res.text).to.equal(201);
      // Pods run as the namespace's default ServiceAccount, which its controller makes a moment later.
      const account = `/api/v1/namespaces/${namespace.metadata!.name}/serviceaccounts/default`;
      expect(await waitFor(async () => (await c.request('GET', account)).status === 200, 20_000)).to.equal(true);
    });

    for (const manifest of objects) {
      it(`${manifest.apiVersion} ${manifest.kind}`, async () => {
        const def = defOf(manifest);
        const created = await c.request('POST', collectionPath(def, manifest.metadata?.namespace), { body: manifest });
        expect(created.status, created.text).to.equal(201);
        expect(created.body).to.deep.include({ apiVersion: manifest.apiVersion, kind: manifest.kind });
        const kept = Object.fromEntries(Object.entries(manifest).filter(([k]) => !WRITE_ONLY.has(k)));
        expect(missingPart(kept, created.body), 'a field of the manifest was lost').to.equal(undefined);
        if (def.tracksGeneration) expect(created.body.metadata.generation).to.equal(1);

        const got = await c.request('GET', objectPath(manifest));
        expect(got.status, got.text).to.equal(200);
        expect(got.body).to.deep.equal(created.body);

        const label = (obj: any) => ({ ...obj, metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, updated: 'true' } } });
        let updated = await c.request('PUT', objectPath(manifest), { body: label(got.body) });
        // A controller may write the object meanwhile (a CRD's conditions, in several steps): again on what is stored now.
        for (let i = 0; i < 10 && updated.status === 409; i++) {
          updated = await c.request('PUT', objectPath(manifest), { body: label((await c.request('GET', objectPath(manifest))).body) });
        }
        expect(updated.status, updated.text).to.equal(200);
        expect(updated.body.metadata.labels.updated).to.equal('true');
        expect(updated.body.metadata.generation).to.equal(created.body.metadata.generation);
        expect(Number(updated.body.metadata.resourceVersion)).to.be.greaterThan(Number(created.body.metadata.resourceVersion));

        const deleted = await c.request('DELETE', objectPath(manifest));
        expect(deleted.status, deleted.text).to.equal(200);
        // The deleted object for the kinds that say so (a CSIDriver, a VolumeAttachment, ...) or that a server
        // finalizer holds (a CRD, or a claim or volume admission protected at create, until its controller lets it
        // go), else a Success Status.
        const held = def.deletionFinalizer ?? created.body.metadata.finalizers?.[0];
        if (held) {
          expect(deleted.body.metadata.finalizers).to.include(held);
          expect(await waitFor(async () => (await c.request('GET', objectPath(manifest))).status === 404, 20_000)).to.equal(true);
        } else if (def.returnDeletedObject) {
          expect(deleted.body.kind).to.equal(manifest.kind);
          expect(deleted.body.metadata).to.include({ name: manifest.metadata!.name, uid: created.body.metadata.uid });
          expect(deleted.body.metadata.labels).to.deep.equal(updated.body.metadata.labels);
        }
        else expect(deleted.body).to.deep.include({ kind: 'Status', status: 'Success', details: { name: manifest.metadata!.name, ...(def.group ? { group: def.group } : {}), kind: def.resource, uid: created.body.metadata.uid } });
        expect((await c.request('GET', objectPath(manifest))).status).to.equal(404);
      });
    }
  });

  describe('well-known keys in upstream spelling', () => {
    const secrets = '/api/v1/namespaces/default/secrets';

    it('a kubernetes.io/tls Secret gets the TLS rules: both keys required, the type kept as sent and immutable', async () => {
      const missing = await c.request('POST', secrets, { body: { metadata: { name: 'up-tls' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'c' } } });
      expect(missing.status, missing.text).to.equal(422);
      expect(missing.body.details.causes).to.deep.equal([{ reason: 'FieldValueRequired', message: 'Required value', field: 'data[tls.key]' }]);
      const made = await c.request('POST', secrets, { body: { metadata: { name: 'up-tls' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'c', 'tls.key': 'k' } } });
      expect(made.status, made.text).to.equal(201);
      expect(made.body.type).to.equal('kubernetes.io/tls');
      const listed = await c.request('GET', `${secrets}?fieldSelector=${encodeURIComponent('type=kubernetes.io/tls')}`);
      expect(listed.body.items.map((i: ApiObject) => i.metadata!.name)).to.deep.equal(['up-tls']);
      const retyped = await c.request('PUT', `${secrets}/up-tls`, { body: { ...made.body, type: 'svc.io/tls' } });
      expect(retyped.status, retyped.text).to.equal(422);
      expect(causeFieldsOf(retyped.body)).to.deep.equal(['type']);
    });

    it('a namespace carries its name under both spellings of the name label, whatever the client wrote, and is selected by either', async () => {
      const made = await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'labelled', labels: { 'kubernetes.io/metadata.name': 'lie' } } } });
      expect(made.status, made.text).to.equal(201);
      expect(made.body.metadata.labels).to.deep.equal({ 'kubernetes.io/metadata.name': 'labelled', 'svc.io/metadata.name': 'labelled' });
      const relabelled = await c.request('PUT', '/api/v1/namespaces/labelled', { body: { ...made.body, metadata: { ...made.body.metadata, labels: { 'kubernetes.io/metadata.name': 'lie' } } } });
      expect(relabelled.status, relabelled.text).to.equal(200);
      expect(relabelled.body.metadata.labels).to.deep.equal({ 'kubernetes.io/metadata.name': 'labelled', 'svc.io/metadata.name': 'labelled' });
      for (const key of ['kubernetes.io/metadata.name', 'svc.io/metadata.name']) {
        const listed = await c.request('GET', `/api/v1/namespaces?labelSelector=${encodeURIComponent(`${key}=labelled`)}`);
        expect(listed.body.items.map((i: ApiObject) => i.metadata!.name), key).to.deep.equal(['labelled']);
      }
    });

    it('a namespace created with upstream\'s `kubernetes` finalizer keeps it alone, and is emptied and removed on delete', async () => {
      const made = await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'upstream-finalizer' }, spec: { finalizers: ['kubernetes'] } } });
      expect(made.status, made.text).to.equal(201);
      expect(made.body.spec.finalizers).to.deep.equal(['kubernetes']);
      const cm = await c.request('POST', '/api/v1/namespaces/upstream-finalizer/configmaps', { body: { metadata: { name: 'inside' } } });
      expect(cm.status, cm.text).to.equal(201);
      expect((await c.request('DELETE', '/api/v1/namespaces/upstream-finalizer')).status).to.equal(200);
      expect(await waitFor(async () => (await c.request('GET', '/api/v1/namespaces/upstream-finalizer')).status === 404, 30_000, 200)).to.equal(true);
    });

    it('/finalize takes the namespace finalizer in either spelling and refuses a name that is neither standard nor qualified', async () => {
      const ns = '/api/v1/namespaces/finalize-either';
      const made = await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'finalize-either' } } });
      expect(made.body.spec.finalizers).to.deep.equal(['svc']);
      const withSpec = (finalizers: string[]) => ({ ...made.body, metadata: { name: 'finalize-either' }, spec: { finalizers } });
      const bad = await c.request('PUT', `${ns}/finalize`, { body: withSpec(['bogus']) });
      expect(bad.status, bad.text).to.equal(422);
      expect(causeFieldsOf(bad.body)).to.deep.equal(['spec.finalizers[0]']);
      const swapped = await c.request('PUT', `${ns}/finalize`, { body: withSpec(['kubernetes', 'example.com/keep']) });
      expect(swapped.status, swapped.text).to.equal(200);
      expect(swapped.body.spec.finalizers).to.deep.equal(['kubernetes', 'example.com/keep']);
      // Deleted: the controller drops `kubernetes` as its own, and the namespace waits for the other.
      expect((await c.request('DELETE', ns)).status).to.equal(200);
      const dropped = async () => JSON.stringify((await c.request('GET', ns)).body.spec?.finalizers) === '["example.com/keep"]';
      expect(await waitFor(dropped, 30_000, 200)).to.equal(true);
      const released = await c.request('PUT', `${ns}/finalize`, { body: withSpec([]) });
      expect(released.status, released.text).to.equal(200);
      expect(await waitFor(async () => (await c.request('GET', ns)).status === 404, 10_000, 100)).to.equal(true);
    });

    it('kubectl\'s last-applied annotation is kept as written and counts toward the 256 KiB of annotations, in bytes', async () => {
      const cms = '/api/v1/namespaces/default/configmaps';
      const key = 'kubectl.kubernetes.io/last-applied-configuration';
      const written = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied"},"data":{"k":"${'v'.repeat(200_000)}"}}\n`;
      const kept = await c.request('POST', cms, { body: { metadata: { name: 'applied', annotations: { [key]: written } } } });
      expect(kept.status, kept.text).to.equal(201);
      expect(kept.body.metadata.annotations[key]).to.equal(written);
      const wide = await c.request('POST', cms, { body: { metadata: { name: 'wide', annotations: { [key]: '€'.repeat(90_000) } } } });
      expect(wide.status, wide.text).to.equal(422);
      expect(wide.body.details.causes).to.deep.equal([{ reason: 'FieldValueTooLong', message: 'Too long: may not be more than 262144 bytes', field: 'metadata.annotations' }]);
    });

    it('a ClusterRole labelled rbac.authorization.k8s.io/aggregate-to-view aggregates into view', async () => {
      const rule = { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] };
      const roles = `/apis/${group('rbac.authorization')}/v1/clusterroles`;
      const made = await c.request('POST', roles, { body: { metadata: { name: 'widget-viewer', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } }, rules: [rule] } });
      expect(made.status, made.text).to.equal(201);
      const hasRule = async () => ((await c.request('GET', `${roles}/view`)).body.rules ?? []).some((r: any) => r.apiGroups?.[0] === 'example.com');
      expect(await waitFor(hasRule, 10_000, 100)).to.equal(true);
      const upstream = await c.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/widget-viewer');
      expect(upstream.body.metadata.labels).to.deep.equal({ 'rbac.authorization.k8s.io/aggregate-to-view': 'true' });
      const view = await c.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view');
      expect(view.body.metadata.labels).to.include({ 'rbac.authorization.svc.io/aggregate-to-edit': 'true' });
    });

    it('a Job\'s pod template carries the job labels in both spellings', async () => {
      const res = await c.request('POST', '/apis/batch/v1/namespaces/default/jobs', { body: {
        metadata: { name: 'labels' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'pi', image: 'perl:5.34' }] } } },
      } });
      expect(res.status, res.text).to.equal(201);
      const uid = res.body.metadata.uid;
      expect(res.body.spec.template.metadata.labels).to.deep.equal({
        'job-name': 'labels', 'controller-uid': uid, 'batch.svc.io/job-name': 'labels', 'batch.svc.io/controller-uid': uid,
        'batch.kubernetes.io/job-name': 'labels', 'batch.kubernetes.io/controller-uid': uid,
      });
    });
  });

  describe('Events: one store, two views (core/v1 and events.svc.io/v1)', () => {
    const CORE = '/api/v1/namespaces/default/events';
    const V1 = `/apis/${group('events')}/v1/namespaces/default/events`;
    const pod = { apiVersion: 'v1', kind: 'Pod', name: 'web-0', namespace: 'default', uid: 'p-1' };
    const coreEvent = (name: string) => ({
      metadata: { name }, involvedObject: pod, reason: 'Started', message: 'Started container web', type: 'Normal',
      source: { component: 'kubelet', host: 'node-1' }, firstTimestamp: '2025-01-01T00:00:00Z', lastTimestamp: '2025-01-01T00:01:00Z', count: 3,
    });
    const v1Event = (name: string, extra: Record<string, unknown> = {}) => ({
      apiVersion: `${group('events')}/v1`, kind: 'Event', metadata: { name }, eventTime: '2025-01-01T00:00:00.000000Z',
      reportingController: 'example.com/scaler', reportingInstance: 'scaler-0', action: 'Scale', reason: 'Scaled', type: 'Normal',
      note: 'Scaled up', regarding: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'default' },
      series: { count: 2, lastObservedTime: '2025-01-01T00:02:00.000000Z' }, ...extra,
    });
    const names = (list: any) => list.items.map((i: ApiObject) => i.metadata!.name);

    it('an Event created through core/v1 is read through events/v1 with its fields mapped', async () => {
      const made = await c.request('POST', CORE, { body: coreEvent('from-core') });
      expect(made.status, made.text).to.equal(201);
      const got = await c.request('GET', `${V1}/from-core`);
      expect(got.status, got.text).to.equal(200);
      expect(got.body).to.deep.include({
        apiVersion: `${group('events')}/v1`, kind: 'Event', regarding: pod, reason: 'Started', note: 'Started container web', type: 'Normal',
        deprecatedSource: { component: 'kubelet', host: 'node-1' }, deprecatedFirstTimestamp: '2025-01-01T00:00:00Z',
        deprecatedLastTimestamp: '2025-01-01T00:01:00Z', deprecatedCount: 3,
      });
      expect(got.body).to.not.have.any.keys('involvedObject', 'message', 'source', 'count');
      expect(got.body.metadata).to.deep.equal(made.body.metadata);
      expect(names((await c.request('GET', V1)).body)).to.include('from-core');
      const upstream = await c.request('GET', '/apis/events.k8s.io/v1/namespaces/default/events/from-core');
      expect(upstream.status, upstream.text).to.equal(200);
      expect(upstream.body).to.deep.include({ apiVersion: 'events.k8s.io/v1', note: 'Started container web' });
    });

    it('an Event created through events/v1 is read through core/v1 with its fields mapped', async () => {
      const made = await c.request('POST', V1, { body: v1Event('from-v1') });
      expect(made.status, made.text).to.equal(201);
      const got = await c.request('GET', `${CORE}/from-v1`);
      expect(got.status, got.text).to.equal(200);
      expect(got.body).to.deep.include({
        apiVersion: 'v1', kind: 'Event', involvedObject: v1Event('').regarding, message: 'Scaled up', reportingComponent: 'example.com/scaler',
        reportingInstance: 'scaler-0', action: 'Scale', reason: 'Scaled', eventTime: '2025-01-01T00:00:00.000000Z',
        series: { count: 2, lastObservedTime: '2025-01-01T00:02:00.000000Z' },
      });
      expect(got.body).to.not.have.any.keys('regarding', 'note', 'reportingController');
      expect(names((await c.request('GET', CORE)).body)).to.include('from-v1');
    });

    it('field selectors work in each view\'s own terms', async () => {
      const v1 = (selector: string) => c.request('GET', `${V1}?fieldSelector=${encodeURIComponent(selector)}`);
      const core = (selector: string) => c.request('GET', `${CORE}?fieldSelector=${encodeURIComponent(selector)}`);
      expect(names((await v1('regarding.name=web-0')).body)).to.deep.equal(['from-core']);
      expect(names((await v1('regarding.kind=Deployment,reportingController=example.com/scaler')).body)).to.deep.equal(['from-v1']);
      expect(names((await core('involvedObject.name=web')).body)).to.deep.equal(['from-v1']);
      expect(names((await core('reportingComponent=example.com/scaler')).body)).to.deep.equal(['from-v1']);
      const unknown = await v1('involvedObject.name=web');
      expect(unknown.status, unknown.text).to.equal(400);
    });

    it('updates and deletes through one view are seen through the other', async () => {
      const core = (await c.request('GET', `${CORE}/from-v1`)).body;
      const labelled = await c.request('PUT', `${CORE}/from-v1`, { body: { ...core, metadata: { ...core.metadata, labels: { seen: 'core' } } } });
      expect(labelled.status, labelled.text).to.equal(200);
      const v1 = (await c.request('GET', `${V1}/from-v1`)).body;
      expect(v1.metadata.labels).to.deep.equal({ seen: 'core' });
      expect(v1.metadata.resourceVersion).to.equal(labelled.body.metadata.resourceVersion);
      const series = await c.request('PUT', `${V1}/from-v1`, { body: { ...v1, series: { count: 3, lastObservedTime: '2025-01-01T00:03:00.000000Z' } } });
      expect(series.status, series.text).to.equal(200);
      expect((await c.request('GET', `${CORE}/from-v1`)).body.series.count).to.equal(3);
      expect((await c.request('DELETE', `${V1}/from-core`)).status).to.equal(200);
      expect((await c.request('GET', `${CORE}/from-core`)).status).to.equal(404);
    });

    it('a watch through either view sees writes through the other, in its own shape', async () => {
      const rv = (await c.request('GET', V1)).body.metadata.resourceVersion;
      const v1Watch = c.watch(`${V1}?watch=1&resourceVersion=${rv}`, { until: (e) => e.length >= 1, timeoutMs: 10_000 });
      const coreWatch = c.watch(`${CORE}?watch=1&resourceVersion=${rv}`, { until: (e) => e.length >= 2, timeoutMs: 10_000 });
      await new Promise((r) => setTimeout(r, 300));
      expect((await c.request('POST', CORE, { body: coreEvent('watched-core') })).status).to.equal(201);
      expect((await c.request('POST', V1, { body: v1Event('watched-v1') })).status).to.equal(201);
      const seenV1 = (await v1Watch).events[0];
      expect(seenV1.type).to.equal('ADDED');
      expect(seenV1.object).to.deep.include({ apiVersion: `${group('events')}/v1`, note: 'Started container web', regarding: pod });
      const seenCore = (await coreWatch).events.map((e: any) => [e.type, e.object.metadata.name, e.object.message]);
      expect(seenCore).to.deep.equal([['ADDED', 'watched-core', 'Started container web'], ['ADDED', 'watched-v1', 'Scaled up']]);
    });

    it('events/v1 requires what upstream requires on create and keeps its fields on update; core/v1 is laxer', async () => {
      const bare = { metadata: { name: 'bare' }, reason: 'X', type: 'Normal', regarding: pod };
      const untimed = await c.request('POST', V1, { body: bare });
      expect(untimed.status, untimed.text).to.equal(422);
      expect(causeFieldsOf(untimed.body)).to.deep.equal(['eventTime']);
      const unreported = await c.request('POST', V1, { body: { ...bare, eventTime: '2025-01-01T00:00:00.000000Z', type: 'Odd', series: { count: 1 } } });
      expect(unreported.status, unreported.text).to.equal(422);
      expect(causeFieldsOf(unreported.body)).to.deep.equal(['reportingController', 'reportingInstance', 'action', 'series.count', 'series.lastObservedTime', 'type']);
      const deprecated = await c.request('POST', V1, { body: v1Event('deprecated', { deprecatedCount: 1 }) });
      expect(deprecated.status, deprecated.text).to.equal(422);
      expect(causeFieldsOf(deprecated.body)).to.deep.equal(['deprecatedCount']);
      const lax = await c.request('POST', CORE, { body: { metadata: { name: 'bare' }, reason: 'X', type: 'Normal', involvedObject: pod } });
      expect(lax.status, lax.text).to.equal(201);
      const viewed = (await c.request('GET', `${V1}/bare`)).body;
      expect(viewed.reason).to.equal('X');
      const changed = await c.request('PUT', `${V1}/watched-v1`, { body: { ...(await c.request('GET', `${V1}/watched-v1`)).body, note: 'rewritten' } });
      expect(changed.status, changed.text).to.equal(422);
      expect(causeFieldsOf(changed.body)).to.deep.equal(['note']);
    });
  });

  describe('document 3 through HTTPS', () => {
    const jobs = '/apis/batch/v1/namespaces/default/jobs';
    const job = (name: string, spec: Record<string, unknown> = {}, restartPolicy = 'Never') => ({
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name },
      spec: { template: { spec: { restartPolicy, containers: [{ name: 'pi', image: 'perl:5.34' }] } }, ...spec },
    });
    const causeFields = (body: any) => (body.details?.causes ?? []).map((cause: any) => cause.field);

    it('a Job shows its defaults and generated selector on create, and drops unknown fields', async () => {
      const res = await c.request('POST', jobs, { body: { ...job('defaults'), spec: { ...job('defaults').spec, unknownField: 1 } } });
      expect(res.status, res.text).to.equal(201);
      const spec = res.body.spec;
      expect(spec).to.include({ backoffLimit: 6, completions: 1, parallelism: 1, completionMode: 'NonIndexed', suspend: false });
      expect(spec).to.not.have.property('unknownField');
      const uid = res.body.metadata.uid;
      expect(Object.values(spec.selector.matchLabels)).to.deep.equal([uid]);
      expect(Object.values(spec.template.metadata.labels)).to.include.members([uid, 'defaults']);
    });

    it('answers 422 Invalid naming the field for each kind of rule', async () => {
      const cases: Array<[string, unknown, string]> = [
        [jobs, job('always', {}, 'Always'), 'spec.template.spec.restartPolicy'],
        [jobs, job('indexed', { completionMode: 'Indexed', parallelism: 2 }), 'spec.completions'],
        [jobs, job('codes', { podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [3, 1] } }] } }), 'spec.podFailurePolicy.rules[0].onExitCodes.values'],
        [jobs, job('managed', { managedBy: `example.com/${'x'.repeat(60)}` }), 'spec.managedBy'],
        [collectionPath(registry.lookupKind(group('networking'), 'v1', 'NetworkPolicy')!, 'default'),
          { metadata: { name: 'np' }, spec: { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.1.0.0/24'] } }] }] } },
          'spec.ingress[0].from[0].ipBlock.except[0]'],
      ];
      for (const [path, body, field] of cases) {
        const res = await c.request('POST', path, { body });
        expect(res.status, `${field}: ${res.text}`).to.equal(422);
        expect(res.body).to.include({ kind: 'Status', reason: 'Invalid', code: 422 });
        expect(causeFields(res.body), res.text).to.include(field);
      }
    });

    it('refuses a change of an immutable field with 422', async () => {
      const created = await c.request('POST', jobs, { body: job('immutable', { completions: 2 }) });
      expect(created.status, created.text).to.equal(201);
      const changed = structuredClone(created.body);
      changed.spec.completions = 3;
      const res = await c.request('PUT', `${jobs}/immutable`, { body: changed });
      expect(res.status, res.text).to.equal(422);
      expect(causeFields(res.body)).to.deep.equal(['spec.completions']);
    });

    it('the Job /status sub-resource takes only the status and applies the JobStatus rules', async () => {
      // Managed elsewhere: the Job controller leaves its status to this test.
      const created = (await c.request('POST', jobs, { body: job('status', { managedBy: 'example.com/elsewhere' }) })).body;
      const start = '2025-01-01T00:05:00Z';
      const running = await c.request('PUT', `${jobs}/status/status`, { body: { ...created, spec: { ...created.spec, backoffLimit: 1 }, status: { startTime: start, active: 1 } } });
      expect(running.status, running.text).to.equal(200);
      expect(running.body.spec.backoffLimit).to.equal(6);
      expect(running.body.status).to.deep.equal({ startTime: start, active: 1 });
      const early = { ...running.body, status: { startTime: start, completionTime: '2025-01-01T00:00:00Z', succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] } };
      const refused = await c.request('PUT', `${jobs}/status/status`, { body: early });
      expect(refused.status, refused.text).to.equal(422);
      expect(causeFields(refused.body)).to.include('status.completionTime');
      const both = { ...running.body, status: { startTime: start, conditions: [{ type: 'Complete', status: 'True' }, { type: 'Failed', status: 'True' }] } };
      expect(causeFields((await c.request('PUT', `${jobs}/status/status`, { body: both })).body)).to.include('status.conditions');
    });

    it('the VolumeAttachment /status sub-resource: attached is set there, the spec stays as created', async () => {
      const manifest = manifests.find((m) => m.kind === 'VolumeAttachment')!;
      const created = (await c.request('POST', collectionPath(defOf(manifest)), { body: manifest })).body;
      expect(created.status).to.deep.equal({ attached: false });
      const path = `${objectPath(manifest)}/status`;
      const res = await c.request('PUT', path, { body: { ...created, spec: { ...created.spec, nodeName: 'elsewhere' }, status: { attached: true, attachmentMetadata: { devicePath: '/dev/xvdf' } } } });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.spec.nodeName).to.equal((manifest.spec as any).nodeName);
      expect(res.body.status).to.deep.equal({ attached: true, attachmentMetadata: { devicePath: '/dev/xvdf' } });
      const moved = await c.request('PUT', objectPath(manifest), { body: { ...res.body, spec: { ...res.body.spec, nodeName: 'elsewhere' } } });
      expect(moved.status, moved.text).to.equal(422);
      expect(causeFields(moved.body)).to.deep.equal(['spec']);
    });

    it('a spec write ignores the status it carries and counts the generation', async () => {
      const created = await c.request('POST', jobs, { body: job('generation', { parallelism: 1, completions: 4 }) });
      const next = structuredClone(created.body);
      next.spec.parallelism = 2;
      next.status = { active: 5 };
      const res = await c.request('PUT', `${jobs}/generation`, { body: next });
      expect(res.status, res.text).to.equal(200);
      expect(res.body.metadata.generation).to.equal(2);
      expect(res.body.status).to.deep.equal({});
    });
  });
});
