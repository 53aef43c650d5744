// kubectl 1.33 against the kinds of CustomResourceDefinitions.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { Cluster, waitFor } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';
import { crdManifest } from '../lib/crd.js';
import { group } from '../../internal/names/index.js';

const DOCS_GROUP = 'docs.example.com';

/** A namespaced kind whose schema documents its fields, with printer columns and list markers. */
const sprockets = () => ({
  apiVersion: `${group('apiextensions')}/v1`, kind: 'CustomResourceDefinition', metadata: { name: `sprockets.${DOCS_GROUP}` },
  spec: {
    group: DOCS_GROUP, scope: 'Namespaced',
    names: { plural: 'sprockets', singular: 'sprocket', kind: 'Sprocket', listKind: 'SprocketList', shortNames: ['spr'] },
    versions: [{
      name: 'v1', served: true, storage: true,
      schema: {
        openAPIV3Schema: {
          type: 'object', description: 'Sprocket is a toothed wheel.',
          properties: {
            spec: {
              type: 'object', description: 'The desired sprocket.',
              properties: {
                teeth: { type: 'integer', description: 'Number of teeth on the wheel.' },
                color: { type: 'string', description: 'Paint color.' },
                port: { 'x-svc-int-or-string': true, description: 'Port number or name.' },
                ports: {
                  type: 'array', 'x-svc-list-type': 'map', 'x-svc-list-map-keys': ['name'],
                  items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
                },
                notes: { type: 'array', items: { type: 'string' } },
              },
            },
          },
        },
      },
      additionalPrinterColumns: [
        { name: 'Teeth', type: 'integer', jsonPath: '.spec.teeth' },
        { name: 'Color', type: 'string', jsonPath: '.spec.color', priority: 1 },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    }],
  },
});

/** CronTab: short name and category, a status and a scale sub-resource; given to kubectl as YAML. */
const CRD = YAML.stringify(((m) => ({ ...m, spec: { ...m.spec, names: { ...m.spec.names, shortNames: ['ct'], categories: ['all-crons'] } } }))(crdManifest('stable.example.com', 'CronTab', {
  type: 'object',
  properties: {
    spec: { type: 'object', properties: { cronSpec: { type: 'string' }, replicas: { type: 'integer' } } },
    status: { type: 'object', properties: { replicas: { type: 'integer' } } },
  },
}, { subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } } })));

const objects = ['a', 'b'].map((name) => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: ${name}
spec:
  cronSpec: "* * * * */5"
  replicas: 1
`).join('---\n');

const sprocket = (name: string, spec: Record<string, unknown>) => ({ apiVersion: `${DOCS_GROUP}/v1`, kind: 'Sprocket', metadata: { name, namespace: 'default' }, spec });

describe('kubectl 1.33 with CustomResourceDefinitions: apply, wait, get, scale, delete, explain, columns, server-side apply', function () {
  this.timeout(180_000);
  let c: Cluster;
  let dir: string;
  const file = (name: string, doc: unknown) => { const p = join(dir, name); writeFileSync(p, YAML.stringify(doc)); return p; };
  const run = (...args: string[]) => kubectl(c.kubeconfig, args, { timeoutMs: 60_000 });
  /** kubectl with a discovery cache of this test's own, so what it learnt before a CRD came does not hide it. */
  const k = (args: string[], stdin?: string) => kubectl(c.kubeconfig, [`--cache-dir=${join(dir, 'cache')}`, ...args], { stdin, timeoutMs: 60_000 });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-crd-docs-'));
    c = await new Cluster().start();
    const r = await run('apply', '-f', file('crd.yaml', sprockets()));
    expect(r.code, r.stderr).to.equal(0);
    expect(await waitFor(async () => (await c.request('GET', `/apis/${DOCS_GROUP}/v1/namespaces/default/sprockets`)).status === 200, 10_000, 100)).to.equal(true);
  });
  after(async () => {
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('explains the kind and one of its fields from the published schema', async () => {
    // kubectl reads discovery and OpenAPI once served: retried while its cache catches up.
    let r = await run('explain', 'sprockets');
    for (let i = 0; i < 20 && r.code !== 0; i++) { await new Promise((f) => setTimeout(f, 250)); r = await run('explain', 'sprockets'); }
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(new RegExp(`GROUP:\\s+${DOCS_GROUP}\nKIND:\\s+Sprocket\nVERSION:\\s+v1\n`));
    expect(r.stdout).to.contain('Sprocket is a toothed wheel.').and.contain('metadata\t<ObjectMeta>').and.contain('spec\t<Object>');
    const field = await run('explain', 'sprockets.spec.teeth');
    expect(field.code, field.stderr).to.equal(0);
    expect(field.stdout).to.match(/FIELD:\s+teeth <integer>/).and.contain('Number of teeth on the wheel.');
    const spec = await run('explain', 'sprockets.spec');
    expect(spec.code, spec.stderr).to.equal(0);
    expect(spec.stdout).to.contain('port\t<Object>').and.contain('teeth\t<integer>').and.contain('ports\t<[]Object>');
    const meta = await run('explain', 'spr.metadata.labels');
    expect(meta.code, meta.stderr).to.equal(0);
    expect(meta.stdout).to.match(/FIELD:\s+labels <map\[string\]string>/);
  });

  it('shows the printer columns with get, and the priority ones with -o wide', async () => {
    const created = await run('apply', '-f', file('s1.yaml', sprocket('s1', { teeth: 12, color: 'red' })));
    expect(created.code, created.stderr).to.equal(0);
    const get = await run('get', 'sprockets');
    expect(get.code, get.stderr).to.equal(0);
    const [head, row] = get.stdout.trim().split('\n');
    expect(head.split(/\s+/)).to.deep.equal(['NAME', 'TEETH', 'AGE']);
    expect(row.split(/\s+/).slice(0, 2)).to.deep.equal(['s1', '12']);
    expect(row.split(/\s+/)[2]).to.match(/^\d+s$/);
    const wide = await run('get', 'spr', '-o', 'wide');
    expect(wide.stdout.trim().split('\n')[0].split(/\s+/)).to.deep.equal(['NAME', 'TEETH', 'COLOR', 'AGE']);
    expect(wide.stdout).to.match(/s1\s+12\s+red\s+/);
  });

  it('applies client-side (merge patch) and server-side, merging list items by key and reporting conflicts', async () => {
    const changed = await run('apply', '-f', file('s1.yaml', sprocket('s1', { teeth: 14, color: 'red' })));
    expect(changed.code, changed.stderr).to.equal(0);
    expect(changed.stdout).to.contain(`sprocket.${DOCS_GROUP}/s1 configured`);
    const ssa1 = await run('apply', '--server-side', '--field-manager=one', '-f', file('s2a.yaml', sprocket('s2', { teeth: 8, ports: [{ name: 'a', port: 1 }], notes: ['first'] })));
    expect(ssa1.code, ssa1.stderr).to.equal(0);
    expect(ssa1.stdout).to.contain(`sprocket.${DOCS_GROUP}/s2 serverside-applied`);
    const ssa2 = await run('apply', '--server-side', '--field-manager=two', '-f', file('s2b.yaml', sprocket('s2', { ports: [{ name: 'b', port: 2 }] })));
    expect(ssa2.code, ssa2.stderr).to.equal(0);
    const got = await run('get', 'sprocket', 's2', '-o', 'json');
    expect(JSON.parse(got.stdout).spec.ports).to.deep.equal([{ name: 'a', port: 1 }, { name: 'b', port: 2 }]);
    const conflict = await run('apply', '--server-side', '--field-manager=two', '-f', file('s2c.yaml', sprocket('s2', { notes: ['second'] })));
    expect(conflict.code).to.not.equal(0);
    expect(conflict.stderr).to.contain('conflict').and.contain('.spec.notes');
    const forced = await run('apply', '--server-side', '--field-manager=two', '--force-conflicts', '-f', file('s2c.yaml', sprocket('s2', { notes: ['second'] })));
    expect(forced.code, forced.stderr).to.equal(0);
  });

  it('apply -f of a CRD, wait for Established, then apply -f of its objects', async () => {
    const crd = await k(['apply', '-f', '-'], CRD);
    expect(crd.code, crd.stderr).to.equal(0);
    expect(crd.stdout).to.include('customresourcedefinition.apiextensions');
    const wait = await k(['wait', '--for=condition=established', '--timeout=30s', 'crd/crontabs.stable.example.com']);
    expect(wait.code, wait.stderr).to.equal(0);
    const applied = await k(['apply', '-f', '-'], objects);
    expect(applied.code, applied.stderr).to.equal(0);
    expect(applied.stdout).to.include('crontab.stable.example.com/a created');
    const again = await k(['apply', '-f', '-'], objects);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.include('crontab.stable.example.com/a unchanged');
  });

  it('get by plural, short name and category', async () => {
    for (const what of ['crontabs', 'ct', 'all-crons', 'crontab.stable.example.com']) {
      const got = await k(['get', what, '-o', 'name']);
      expect(got.code, got.stderr).to.equal(0);
      expect(got.stdout.trim().split('\n'), what).to.deep.equal(['crontab.stable.example.com/a', 'crontab.stable.example.com/b']);
    }
    const json = await k(['get', 'ct', 'a', '-o', 'json']);
    expect(JSON.parse(json.stdout)).to.deep.include({ apiVersion: 'stable.example.com/v1', kind: 'CronTab' });
  });

  it('scale changes the replicas at the spec path', async () => {
    const scaled = await k(['scale', 'crontab/a', '--replicas=3']);
    expect(scaled.code, scaled.stderr).to.equal(0);
    const got = await k(['get', 'ct', 'a', '-o', 'jsonpath={.spec.replicas}']);
    expect(got.stdout).to.equal('3');
  });

  it('delete of objects, then of the CRD: its resources are gone from kubectl', async () => {
    const deleted = await k(['delete', 'ct', 'b']);
    expect(deleted.code, deleted.stderr).to.equal(0);
    expect((await k(['get', 'ct', '-o', 'name'])).stdout.trim()).to.equal('crontab.stable.example.com/a');
    const crd = await k(['delete', 'crd', 'crontabs.stable.example.com', '--timeout=60s']);
    expect(crd.code, crd.stderr).to.equal(0);
    const gone = await k(['get', 'crontabs']);
    expect(gone.code).to.not.equal(0);
    // From a discovery cache that still lists them the list itself is 404; from fresh discovery the type is unknown.
    expect(gone.stderr).to.match(/the server could not find the requested resource|the server doesn't have a resource type "crontabs"/);
  });
});
