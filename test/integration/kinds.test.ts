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
import { Cluster } from '../lib/cluster.js';

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

        const labelled = structuredClone(got.body);
        labelled.metadata.labels = { ...labelled.metadata.labels, updated: 'true' };
        const updated = await c.request('PUT', objectPath(manifest), { body: labelled });
        expect(updated.status, updated.text).to.equal(200);
        expect(updated.body.metadata.labels.updated).to.equal('true');
        expect(updated.body.metadata.generation).to.equal(created.body.metadata.generation);
        expect(Number(updated.body.metadata.resourceVersion)).to.be.greaterThan(Number(created.body.metadata.resourceVersion));

        const deleted = await c.request('DELETE', objectPath(manifest));
        expect(deleted.status, deleted.text).to.equal(200);
        // The deleted object for the kinds that say so (a CSIDriver, a VolumeAttachment, ...), else a Success Status.
        if (def.returnDeletedObject) {
          expect(deleted.body.kind).to.equal(manifest.kind);
          expect(deleted.body.metadata).to.include({ name: manifest.metadata!.name, uid: created.body.metadata.uid });
          expect(deleted.body.metadata.labels).to.deep.equal(updated.body.metadata.labels);
        }
        else expect(deleted.body).to.deep.include({ kind: 'Status', status: 'Success', details: { name: manifest.metadata!.name, ...(def.group ? { group: def.group } : {}), kind: def.resource, uid: created.body.metadata.uid } });
        expect((await c.request('GET', objectPath(manifest))).status).to.equal(404);
      });
    }
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
      const created = (await c.request('POST', jobs, { body: job('status') })).body;
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
