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

  describe('upstream group names', () => {
    const aggregatedAccept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

    it('lists each renamed group under its upstream name too, after every group of ours', async () => {
      const res = await c.request('GET', '/apis');
      const names: string[] = res.body.groups.map((g: any) => g.name);
      const firstAlias = names.findIndex((n) => n.endsWith('.k8s.io'));
      expect(firstAlias).to.be.greaterThan(0);
      expect(names.slice(firstAlias).every((n) => n.endsWith('.k8s.io'))).to.equal(true);
      for (const own of names.filter((n) => n.endsWith('.svc.io'))) expect(names).to.include(own.replace(/\.svc\.io$/, '.k8s.io'));
      const rbac = res.body.groups.find((g: any) => g.name === 'rbac.authorization.k8s.io');
      expect(rbac.preferredVersion).to.deep.equal({ groupVersion: 'rbac.authorization.k8s.io/v1', version: 'v1' });
      expect(names).not.to.include('apps.k8s.io');
    });

    it('serves /apis/<upstream group> and its resource lists in the upstream spelling', async () => {
      const group = await c.request('GET', '/apis/networking.k8s.io');
      expect(group.status).to.equal(200);
      expect(group.body).to.include({ kind: 'APIGroup', name: 'networking.k8s.io' });
      const list = await c.request('GET', '/apis/networking.k8s.io/v1');
      expect(list.status).to.equal(200);
      expect(list.body.groupVersion).to.equal('networking.k8s.io/v1');
      expect(list.body.resources.map((r: any) => r.name)).to.include.members(['ingresses', 'ingresses/status', 'networkpolicies']);
      expect((await c.request('GET', '/apis/nothing.k8s.io/v1')).status).to.equal(404);
    });

    it('lists the aliases in aggregated discovery with response kinds in their spelling, without categories', async () => {
      const res = await c.request('GET', '/apis', { headers: { Accept: aggregatedAccept } });
      expect(res.status).to.equal(200);
      const item = res.body.items.find((i: any) => i.metadata.name === 'admissionregistration.k8s.io');
      const own = res.body.items.find((i: any) => i.metadata.name === 'admissionregistration.svc.io');
      const hooks = item.versions[0].resources.find((r: any) => r.resource === 'validatingwebhookconfigurations');
      expect(hooks.responseKind).to.deep.equal({ group: 'admissionregistration.k8s.io', version: 'v1', kind: 'ValidatingWebhookConfiguration' });
      expect(hooks).not.to.have.property('categories');
      expect(own.versions[0].resources.find((r: any) => r.resource === 'validatingwebhookconfigurations').categories).to.include('api-extensions');
      const policies = item.versions[0].resources.find((r: any) => r.resource === 'validatingadmissionpolicies');
      expect(policies.subresources[0].responseKind.group).to.equal('admissionregistration.k8s.io');
    });

    it('answers discovery documents with an ETag and 304 when the client holds it', async () => {
      const first = await c.request('GET', '/apis', { headers: { Accept: aggregatedAccept } });
      const etag = first.headers.etag as string;
      expect(etag).to.match(/^"[0-9A-F]+"$/);
      const again = await c.request('GET', '/apis', { headers: { Accept: aggregatedAccept, 'If-None-Match': etag } });
      expect(again.status).to.equal(304);
      const legacy = await c.request('GET', '/apis');
      expect(legacy.headers.etag).to.be.a('string').and.not.equal(etag);
    });

    it('lists serviceaccounts/token as a TokenRequest create, and other sub-resources with their own kinds', async () => {
      const legacy = await c.request('GET', '/api/v1');
      const entry = (name: string) => legacy.body.resources.find((r: any) => r.name === name);
      expect(entry('serviceaccounts/token')).to.deep.equal({
        name: 'serviceaccounts/token', singularName: '', namespaced: true, group: 'authentication.svc.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'],
      });
      expect(entry('pods/eviction')).to.include({ group: 'policy', version: 'v1', kind: 'Eviction' });
      expect(entry('pods/eviction').verbs).to.deep.equal(['create']);
      expect(entry('pods/binding')).to.include({ kind: 'Binding' }).and.not.have.property('group');
      expect(entry('pods/exec').verbs).to.deep.equal(['create', 'get']);
      expect(entry('replicationcontrollers/scale')).to.include({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
      expect(entry('pods/status')).to.include({ kind: 'Pod' }).and.not.have.property('group');
      const aggregated = await c.request('GET', '/api', { headers: { Accept: aggregatedAccept } });
      const sa = aggregated.body.items[0].versions[0].resources.find((r: any) => r.resource === 'serviceaccounts');
      expect(sa.subresources).to.deep.include({ subresource: 'token', responseKind: { group: 'authentication.svc.io', version: 'v1', kind: 'TokenRequest' }, verbs: ['create'] });
      const apps = await c.request('GET', '/apis/apps/v1');
      expect(apps.body.resources.find((r: any) => r.name === 'deployments/scale')).to.include({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    });

    it('serves OpenAPI v3 per upstream group version, schemas marked with the upstream group', async () => {
      const index = await c.request('GET', '/openapi/v3');
      const entry = index.body.paths['apis/rbac.authorization.k8s.io/v1'];
      expect(entry.serverRelativeURL).to.match(/^\/openapi\/v3\/apis\/rbac\.authorization\.k8s\.io\/v1\?hash=/);
      expect(index.body.paths).to.have.property('apis/rbac.authorization.svc.io/v1');
      const doc = await c.request('GET', entry.serverRelativeURL);
      expect(doc.status).to.equal(200);
      expect(doc.headers.etag).to.be.a('string');
      expect(Object.keys(doc.body.paths)).to.include('/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/{name}');
      expect(Object.keys(doc.body.paths).some((p) => p.includes('.svc.io'))).to.equal(false);
      const role = Object.entries(doc.body.components.schemas).find(([n]) => n.endsWith('.rbac.v1.Role'))![1] as any;
      expect(role['x-kubernetes-group-version-kind']).to.deep.equal([{ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role' }]);
      const get = doc.body.paths['/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/{name}'].get;
      expect(get['x-kubernetes-group-version-kind']).to.deep.equal({ group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'Role' });
    });

    describe('answers through an upstream group name', () => {
      const RB = '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings';
      before(async () => {
        const binding = {
          apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'spelled' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'User', name: 'ann' }],
        };
        expect((await c.request('POST', RB, { body: binding })).status).to.equal(201);
      });

      it('an object and a list carry the upstream group names in apiVersion and contents; ours stores ours', async () => {
        const got = (await c.request('GET', `${RB}/spelled`)).body;
        expect(got.apiVersion).to.equal('rbac.authorization.k8s.io/v1');
        expect(got.roleRef.apiGroup).to.equal('rbac.authorization.k8s.io');
        expect(got.subjects[0].apiGroup).to.equal('rbac.authorization.k8s.io');
        const list = (await c.request('GET', RB)).body;
        expect(list.apiVersion).to.equal('rbac.authorization.k8s.io/v1');
        expect(list.items.find((i: any) => i.metadata.name === 'spelled').roleRef.apiGroup).to.equal('rbac.authorization.k8s.io');
        const own = (await c.request('GET', '/apis/rbac.authorization.svc.io/v1/namespaces/default/rolebindings/spelled')).body;
        expect(own.roleRef.apiGroup).to.equal('rbac.authorization.svc.io');
        const yaml = await c.request('GET', `${RB}/spelled`, { headers: { Accept: 'application/yaml' } });
        expect(yaml.text).to.match(/^apiVersion: rbac\.authorization\.k8s\.io\/v1$/m).and.match(/apiGroup: rbac\.authorization\.k8s\.io$/m);
      });

      it('Table rows and PartialObjectMetadata in the spellings asked for', async () => {
        const table = await c.request('GET', `${RB}?includeObject=Object`, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
        expect(table.body).to.include({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
        const row = table.body.rows.find((r: any) => r.object.metadata.name === 'spelled');
        expect(row.object.apiVersion).to.equal('rbac.authorization.k8s.io/v1');
        expect(row.object.roleRef.apiGroup).to.equal('rbac.authorization.k8s.io');
        const meta = await c.request('GET', `${RB}/spelled`, { headers: { Accept: 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io' } });
        expect(meta.body).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
        const metaList = await c.request('GET', RB, { headers: { Accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' } });
        expect(metaList.body).to.include({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1' });
      });

      it('a 404 Status names the group in the upstream spelling, in details and message', async () => {
        const res = await c.request('GET', `${RB}/missing`);
        expect(res.status).to.equal(404);
        expect(res.body.message).to.equal('rolebindings.rbac.authorization.k8s.io "missing" not found');
        expect(res.body.details).to.deep.equal({ name: 'missing', group: 'rbac.authorization.k8s.io', kind: 'rolebindings' });
        const own = await c.request('GET', '/apis/rbac.authorization.svc.io/v1/namespaces/default/rolebindings/missing');
        expect(own.body.details.group).to.equal('rbac.authorization.svc.io');
        const deleted = await c.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/aliased');
        expect(deleted.status).to.equal(200);
        expect(deleted.body.details).to.include({ group: 'rbac.authorization.k8s.io', name: 'aliased' });
      });

      it('a watch sends its events and bookmarks in the upstream spelling', async () => {
        const rv = (await c.request('GET', RB)).body.metadata.resourceVersion;
        const watching = c.watch(`${RB}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rv}`, {
          until: (events) => events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'watched'), timeoutMs: 15_000,
        });
        const binding = { metadata: { name: 'watched' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [] };
        await new Promise((r) => setTimeout(r, 500));
        expect((await c.request('POST', '/apis/rbac.authorization.svc.io/v1/namespaces/default/rolebindings', { body: binding })).status).to.equal(201);
        const { events } = await watching;
        const bookmark = events.find((e) => e.type === 'BOOKMARK');
        expect(bookmark.object.apiVersion).to.equal('rbac.authorization.k8s.io/v1');
        const added = events.find((e) => e.object.metadata.name === 'watched');
        expect(added.object.apiVersion).to.equal('rbac.authorization.k8s.io/v1');
        expect(added.object.roleRef.apiGroup).to.equal('rbac.authorization.k8s.io');
        expect(events.every((e) => e.object.apiVersion === 'rbac.authorization.k8s.io/v1')).to.equal(true);
      });
    });

    it('serves OpenAPI v2 with the aliases\' paths and both group-version-kinds on a renamed kind', async () => {
      const res = await c.request('GET', '/openapi/v2');
      expect(res.body.paths).to.have.property('/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses');
      expect(res.body.paths).to.have.property('/apis/networking.svc.io/v1/namespaces/{namespace}/ingresses');
      const ingress = Object.entries(res.body.definitions).find(([n]) => n.endsWith('.networking.v1.Ingress'))![1] as any;
      expect(ingress['x-kubernetes-group-version-kind']).to.deep.equal([
        { group: 'networking.svc.io', version: 'v1', kind: 'Ingress' }, { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
      ]);
      const cm = Object.entries(res.body.definitions).find(([n]) => n.endsWith('.core.v1.ConfigMap'))![1] as any;
      expect(cm['x-kubernetes-group-version-kind']).to.deep.equal([{ group: '', version: 'v1', kind: 'ConfigMap' }]);
    });
  });
});
