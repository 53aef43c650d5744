import { expect } from 'chai';
import { Cluster } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';

describe('gateway --runtime-config and --serve-upstream-group-names=false', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster({ flags: { gateway: ['--runtime-config=batch/v1=false,storage.svc.io/v1beta1=true', '--serve-upstream-group-names=false'] } }).start(); });
  after(async () => { await c?.stop(); });

  it('stops serving a group version that is turned off, in paths and in discovery', async () => {
    expect((await c.request('GET', '/apis/batch/v1/namespaces/default/jobs')).status).to.equal(404);
    const groups = (await c.request('GET', '/apis')).body.groups.map((g: { name: string }) => g.name);
    expect(groups).not.to.include('batch');
  });

  it('serves a non-stable group version that is turned on', async () => {
    const res = await c.request('GET', '/apis/storage.svc.io/v1beta1');
    expect(res.status).to.equal(200);
    expect(res.body.kind).to.equal('APIResourceList');
  });

  it('serves only the svc.io names of renamed groups: upstream spellings are unknown groups', async () => {
    const groups = (await c.request('GET', '/apis')).body.groups.map((g: { name: string }) => g.name);
    expect(groups).to.include('rbac.authorization.svc.io');
    expect(groups.filter((g: string) => g.endsWith('.k8s.io'))).to.deep.equal([]);
    const aggregated = await c.request('GET', '/apis', { headers: { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
    expect(aggregated.status).to.equal(200);
    expect(aggregated.body.items.map((i: any) => i.metadata.name)).not.to.include('rbac.authorization.k8s.io');
    for (const path of ['/apis/rbac.authorization.k8s.io', '/apis/rbac.authorization.k8s.io/v1', '/apis/rbac.authorization.k8s.io/v1/clusterroles']) {
      const res = await c.request('GET', path);
      expect(res.status, path).to.equal(404);
      expect(res.body).to.include({ kind: 'Status', reason: 'NotFound' });
    }
    expect(Object.keys((await c.request('GET', '/openapi/v3')).body.paths).filter((p) => p.includes('.k8s.io'))).to.deep.equal([]);
    expect(Object.keys((await c.request('GET', '/openapi/v2')).body.paths).filter((p) => p.includes('.k8s.io'))).to.deep.equal([]);
    expect((await c.request('GET', '/openapi/v3/apis/rbac.authorization.k8s.io/v1')).status).to.equal(404);
  });

  it('still answers the upstream spellings kubectl uses on its own: reviews, Tables, aggregated discovery', async () => {
    const review = await c.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } },
    });
    expect(review.status).to.equal(201);
    expect(review.body).to.include({ apiVersion: 'authorization.k8s.io/v1' });
    const canI = await kubectl(c.kubeconfig, ['auth', 'can-i', 'create', 'pods']);
    expect(canI.stdout.trim(), canI.stderr).to.equal('yes');
    const whoami = await kubectl(c.kubeconfig, ['auth', 'whoami']);
    expect(whoami.code, whoami.stderr).to.equal(0);
    const get = await kubectl(c.kubeconfig, ['get', 'clusterroles.rbac.authorization.svc.io', 'admin']);
    expect(get.code, get.stderr).to.equal(0);
    expect(get.stdout).to.match(/^NAME\s+CREATED AT/);
  });
});
