import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Cluster } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';

const MANIFEST = fileURLToPath(new URL('../../../test/e2e/testdata/all-kinds.yaml', import.meta.url));
const kinds = YAML.parseAllDocuments(readFileSync(MANIFEST, 'utf8')).map((d) => (d.toJSON() as { kind: string }).kind);

describe('kubectl 1.33 apply -f of one object of every kind', function () {
  this.timeout(180_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('creates every object, with schema validation on, and a second apply changes nothing it must not', async () => {
    const first = await kubectl(c.kubeconfig, ['apply', '-f', MANIFEST], { timeoutMs: 120_000 });
    expect(first.code, first.stderr).to.equal(0);
    const created = first.stdout.trim().split('\n').filter((l) => l.endsWith(' created'));
    expect(created).to.have.length(kinds.length);
    const second = await kubectl(c.kubeconfig, ['apply', '-f', MANIFEST], { timeoutMs: 120_000 });
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stdout).not.to.contain(' created');
  });

  it('lists each kind back with kubectl get', async () => {
    const r = await kubectl(c.kubeconfig, ['get', '-f', MANIFEST, '-o', 'name'], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout.trim().split('\n')).to.have.length(kinds.length);
  });
});
