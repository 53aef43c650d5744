import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';
import { group } from '../../internal/names/index.js';

const CRD = `apiVersion: ${group('apiextensions')}/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
    categories: [all-crons]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec: {type: string}
              replicas: {type: integer}
          status:
            type: object
            properties:
              replicas: {type: integer}
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
`;

const objects = ['a', 'b'].map((name) => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: ${name}
spec:
  cronSpec: "* * * * */5"
  replicas: 1
`).join('---\n');

describe('kubectl 1.33 with CustomResourceDefinitions', function () {
  this.timeout(180_000);
  let c: Cluster;
  let cacheDir: string;
  /** kubectl with a discovery cache of this test's own, so what it learnt before a CRD came does not hide it. */
  const k = (args: string[], stdin?: string) => kubectl(c.kubeconfig, [`--cache-dir=${cacheDir}`, ...args], { stdin });

  before(async () => {
    c = await new Cluster().start();
    cacheDir = mkdtempSync(join(tmpdir(), 'kubectl-cache-'));
  });
  after(async () => {
    await c?.stop();
    rmSync(cacheDir, { recursive: true, force: true });
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
