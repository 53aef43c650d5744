import { expect } from 'chai';
import { Cluster, waitFor } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';

const CMS = '/api/v1/namespaces/default/configmaps';

describe('garbage collection: the background, orphan and foreground deletion policies', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  /** An owner and a dependent naming it in its ownerReferences. */
  async function family(name: string): Promise<void> {
    const owner = (await c.request('POST', CMS, { body: { metadata: { name } } })).body;
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name, uid: owner.metadata.uid };
    expect((await c.request('POST', CMS, { body: { metadata: { name: `${name}-child`, ownerReferences: [ref] } } })).status).to.equal(201);
  }
  const gone = (name: string) => waitFor(async () => (await c.request('GET', `${CMS}/${name}`)).status === 404, 10_000);

  it('Background (the default): the dependent goes after its owner, and so do its own dependents', async () => {
    await family('b');
    const child = (await c.request('GET', `${CMS}/b-child`)).body;
    const grandchild = { metadata: { name: 'b-grandchild', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'b-child', uid: child.metadata.uid }] } };
    expect((await c.request('POST', CMS, { body: grandchild })).status).to.equal(201);
    expect((await c.request('DELETE', `${CMS}/b`)).status).to.equal(200);
    expect((await c.request('GET', `${CMS}/b`)).status).to.equal(404);
    expect(await gone('b-child')).to.equal(true);
    expect(await gone('b-grandchild')).to.equal(true);
  });

  it('Background: a dependent with another owner that exists stays, without the reference to the one gone', async () => {
    const a = (await c.request('POST', CMS, { body: { metadata: { name: 'two-a' } } })).body;
    const b = (await c.request('POST', CMS, { body: { metadata: { name: 'two-b' } } })).body;
    const refs = [a, b].map((o) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: o.metadata.name, uid: o.metadata.uid }));
    expect((await c.request('POST', CMS, { body: { metadata: { name: 'two-child', ownerReferences: refs } } })).status).to.equal(201);
    expect((await c.request('DELETE', `${CMS}/two-a`)).status).to.equal(200);
    const kept = await waitFor(async () => {
      const res = await c.request('GET', `${CMS}/two-child`);
      return res.status === 200 && res.body.metadata.ownerReferences?.length === 1;
    }, 10_000);
    expect(kept).to.equal(true);
    expect((await c.request('GET', `${CMS}/two-child`)).body.metadata.ownerReferences[0].name).to.equal('two-b');
  });

  it('Background: a dependent held by its own finalizer is marked for deletion, and goes once released', async () => {
    const owner = (await c.request('POST', CMS, { body: { metadata: { name: 'bh' } } })).body;
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'bh', uid: owner.metadata.uid };
    const child = { metadata: { name: 'bh-child', ownerReferences: [ref], finalizers: ['example.com/keep'] } };
    expect((await c.request('POST', CMS, { body: child })).status).to.equal(201);
    expect((await c.request('DELETE', `${CMS}/bh`)).status).to.equal(200);
    const marked = await waitFor(async () => Boolean((await c.request('GET', `${CMS}/bh-child`)).body.metadata?.deletionTimestamp), 10_000);
    expect(marked).to.equal(true);
    const release = await c.request('PATCH', `${CMS}/bh-child`, { body: { metadata: { finalizers: null } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(release.status).to.equal(200);
    expect(await gone('bh-child')).to.equal(true);
  });

  it('Background: a namespaced dependent of a cluster-scoped owner goes with it', async () => {
    const owner = (await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'gc-owner' } } })).body;
    const ref = { apiVersion: 'v1', kind: 'Namespace', name: 'gc-owner', uid: owner.metadata.uid };
    expect((await c.request('POST', CMS, { body: { metadata: { name: 'ns-child', ownerReferences: [ref] } } })).status).to.equal(201);
    expect((await c.request('DELETE', '/api/v1/namespaces/gc-owner')).status).to.equal(200);
    expect(await waitFor(async () => (await c.request('GET', '/api/v1/namespaces/gc-owner')).status === 404, 10_000)).to.equal(true);
    expect(await gone('ns-child')).to.equal(true);
  });

  it('Background: a dependent naming an owner that exists under another uid goes; one naming the right uid through an upstream group name stays', async () => {
    const owner = (await c.request('POST', CMS, { body: { metadata: { name: 'recreated', labels: { big: 'yes' } }, data: { d: 'x'.repeat(1000) } } })).body;
    const stale = { apiVersion: 'v1', kind: 'ConfigMap', name: 'recreated', uid: '00000000-0000-0000-0000-000000000000' };
    expect((await c.request('POST', CMS, { body: { metadata: { name: 'stale-child', ownerReferences: [stale] } } })).status).to.equal(201);
    const role = (await c.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: { metadata: { name: 'gc-role-owner' } } })).body;
    const upstream = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'gc-role-owner', uid: role.metadata.uid };
    expect((await c.request('POST', CMS, { body: { metadata: { name: 'role-child', ownerReferences: [upstream] } } })).status).to.equal(201);
    expect(await gone('stale-child')).to.equal(true);
    expect((await c.request('GET', `${CMS}/role-child`)).status).to.equal(200);
    expect((await c.request('GET', `${CMS}/${owner.metadata.name}`)).status).to.equal(200);
    expect((await c.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/gc-role-owner')).status).to.equal(200);
    expect(await gone('role-child')).to.equal(true);
  });

  it('Orphan: the owner goes, the dependent stays without its owner reference', async () => {
    await family('o');
    expect((await c.request('DELETE', `${CMS}/o?propagationPolicy=Orphan`)).status).to.equal(200);
    expect(await gone('o')).to.equal(true);
    const child = await c.request('GET', `${CMS}/o-child`);
    expect(child.status).to.equal(200);
    expect(child.body.metadata.ownerReferences).to.equal(undefined);
  });

  it('Foreground: the dependent goes first, then the owner', async () => {
    await family('f');
    expect((await c.request('DELETE', `${CMS}/f?propagationPolicy=Foreground`)).status).to.equal(200);
    expect(await gone('f')).to.equal(true);
    expect((await c.request('GET', `${CMS}/f-child`)).status).to.equal(404);
  });

  it('the controller-manager keeps collecting after the gateway restarts (its informers list again)', async () => {
    await c.kill('gateway');
    await c.startService('gateway');
    await family('again');
    expect((await c.request('DELETE', `${CMS}/again`)).status).to.equal(200);
    expect(await waitFor(async () => (await c.request('GET', `${CMS}/again-child`)).status === 404, 20_000)).to.equal(true);
  });

  it('kubectl delete --cascade=orphan and --cascade=foreground return once done', async () => {
    await family('k1');
    await family('k2');
    const orphan = await kubectl(c.kubeconfig, ['delete', 'configmap', 'k1', '--cascade=orphan', '--timeout=20s'], { timeoutMs: 30_000 });
    expect(orphan.code, orphan.stderr).to.equal(0);
    const foreground = await kubectl(c.kubeconfig, ['delete', 'configmap', 'k2', '--cascade=foreground', '--timeout=20s'], { timeoutMs: 30_000 });
    expect(foreground.code, foreground.stderr).to.equal(0);
    expect((await c.request('GET', `${CMS}/k1-child`)).status).to.equal(200);
    expect((await c.request('GET', `${CMS}/k2-child`)).status).to.equal(404);
  });
});
