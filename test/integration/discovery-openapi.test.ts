import { expect } from 'chai';
import { Cluster } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';

describe('aggregated discovery and OpenAPI', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  for (const g of ['apidiscovery.svc.io', 'apidiscovery.k8s.io']) {
    it(`answers /api in the aggregated form when asked in ${g}`, async () => {
      const accept = `application/json;g=${g};v=v2;as=APIGroupDiscoveryList,application/json`;
      const res = await c.request('GET', '/api', { headers: { Accept: accept } });
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.equal(`application/json;g=${g};v=v2;as=APIGroupDiscoveryList`);
      expect(res.body).to.include({ kind: 'APIGroupDiscoveryList', apiVersion: `${g}/v2` });
      const v1 = res.body.items[0].versions[0];
      expect(v1.version).to.equal('v1');
      const cms = v1.resources.find((r: any) => r.resource === 'configmaps');
      expect(cms).to.deep.include({ scope: 'Namespaced', singularResource: 'configmap', shortNames: ['cm'] });
      expect(cms.responseKind).to.deep.equal({ group: '', version: 'v1', kind: 'ConfigMap' });
    });
  }

  it('answers the legacy form without the aggregated Accept', async () => {
    const res = await c.request('GET', '/api');
    expect(res.body.kind).to.equal('APIVersions');
  });

  it('serves /openapi/v3 with one document per group version, carrying the upstream GVK marker', async () => {
    const index = await c.request('GET', '/openapi/v3');
    expect(index.status).to.equal(200);
    const url = index.body.paths['api/v1'].serverRelativeURL;
    expect(url).to.match(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]+$/);
    const doc = await c.request('GET', url);
    expect(doc.body.openapi).to.equal('3.0.0');
    const cm = Object.entries(doc.body.components.schemas).find(([n]) => n.endsWith('.core.v1.ConfigMap'))![1] as any;
    expect(cm['x-kubernetes-group-version-kind']).to.deep.equal([{ group: '', kind: 'ConfigMap', version: 'v1' }]);
    const patch = doc.body.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].patch;
    expect(patch.parameters.map((p: any) => p.name)).to.include('fieldValidation');
  });

  it('serves /openapi/v2 with every definition', async () => {
    const res = await c.request('GET', '/openapi/v2');
    expect(res.body.swagger).to.equal('2.0');
    expect(Object.keys(res.body.definitions).length).to.be.greaterThan(500);
  });

  it('kubectl explain and apply work without --validate=false', async () => {
    const explain = await kubectl(c.kubeconfig, ['explain', 'configmap']);
    expect(explain.code, explain.stderr).to.equal(0);
    expect(explain.stdout).to.contain('KIND:       ConfigMap').and.contain('binaryData');
    const apply = await kubectl(c.kubeconfig, ['apply', '-f', '-'], { stdin: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: validated\n  namespace: default\ndata:\n  a: b\n' });
    expect(apply.code, apply.stderr).to.equal(0);
    expect(apply.stdout).to.contain('configmap/validated created');
  });

  it('serves a group under its upstream name too, answering in the spelling asked for', async () => {
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'aliased' }, rules: [] };
    const created = await c.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: role });
    expect(created.status).to.equal(201);
    expect(created.body.apiVersion).to.equal('rbac.authorization.k8s.io/v1');
    const own = await c.request('GET', '/apis/rbac.authorization.svc.io/v1/clusterroles/aliased');
    expect(own.body.apiVersion).to.equal('rbac.authorization.svc.io/v1');
    const list = await c.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles');
    expect(list.body).to.include({ kind: 'ClusterRoleList', apiVersion: 'rbac.authorization.k8s.io/v1' });
  });
});
