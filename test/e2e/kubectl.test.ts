import { expect } from 'chai';
import YAML from 'yaml';
import { Cluster } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';
import { pkiPaths } from '../../internal/pki/index.js';

const manifest = (mode: string) => `apiVersion: v1
kind: Namespace
metadata:
  name: e2e
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: e2e
data:
  mode: ${mode}
`;

/** A manifest written with the upstream group names, every object labelled app=upstream. */
const upstreamManifest = (withIngress = true) => `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: upstream, labels: {app: upstream}}
rules:
- apiGroups: [networking.k8s.io]
  resources: [ingresses]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: upstream, labels: {app: upstream}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
- {kind: ServiceAccount, name: default, namespace: upstream}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: upstream-reader, labels: {app: upstream}}
rules:
- apiGroups: [storage.k8s.io, scheduling.k8s.io]
  resources: [csidrivers, priorityclasses]
  verbs: [get]
${withIngress ? `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: upstream, labels: {app: upstream}}
spec:
  rules:
  - host: web.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
` : ''}---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: upstream, labels: {app: upstream}}
spec:
  podSelector: {}
  policyTypes: [Ingress]
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: upstream.csi.example.com, labels: {app: upstream}}
spec:
  attachRequired: false
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: upstream-high, labels: {app: upstream}}
value: 1000
description: high
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com, labels: {app: upstream}}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
`;

describe('kubectl 1.33 end to end', function () {
  this.timeout(120_000);
  let c: Cluster;
  const k = (args: string[], stdin?: string) => kubectl(c.kubeconfig, args, { stdin });
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('get ns lists the initial namespaces as a table', async () => {
    const r = await k(['get', 'ns']);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).to.match(/^NAME\s+STATUS\s+AGE$/);
    for (const ns of ['default', 'svc-system', 'svc-public', 'svc-node-lease']) {
      expect(r.stdout).to.match(new RegExp(`^${ns}\\s+Active\\s+\\d+s`, 'm'));
    }
  });

  it('get ns default -o yaml prints the object', async () => {
    const r = await k(['get', 'ns', 'default', '-o', 'yaml']);
    expect(r.code, r.stderr).to.equal(0);
    const ns = YAML.parse(r.stdout);
    expect(ns).to.deep.include({ apiVersion: 'v1', kind: 'Namespace' });
    expect(ns.metadata.name).to.equal('default');
    expect(ns.status.phase).to.equal('Active');
  });

  it('create -f then apply -f twice with a change, and get cm -o json', async () => {
    const created = await k(['create', '-f', '-', '--validate=false'], manifest('one'));
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stdout).to.contain('namespace/e2e created').and.contain('configmap/settings created');
    const applied = await k(['apply', '-f', '-', '--validate=false'], manifest('one'));
    expect(applied.code, applied.stderr).to.equal(0);
    const changed = await k(['apply', '-f', '-', '--validate=false'], manifest('two'));
    expect(changed.code, changed.stderr).to.equal(0);
    expect(changed.stdout).to.contain('configmap/settings configured');
    const got = await k(['get', 'cm', 'settings', '-n', 'e2e', '-o', 'json']);
    expect(got.code, got.stderr).to.equal(0);
    const cm = JSON.parse(got.stdout);
    expect(cm.data).to.deep.equal({ mode: 'two' });
    expect(cm.metadata.annotations).to.have.property('kubectl.kubernetes.io/last-applied-configuration');
  });

  it('apply -f creates what does not exist', async () => {
    const r = await k(['apply', '-f', '-', '--validate=false'], manifest('one').replace(/e2e/g, 'e2e-apply'));
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('namespace/e2e-apply created').and.contain('configmap/settings created');
  });

  it('get cm --watch shows a change and ends at --request-timeout', async () => {
    const watching = k(['get', 'cm', '-n', 'e2e', '--watch', '--request-timeout=4s']);
    await new Promise((r) => setTimeout(r, 1500));
    const cm = (await c.request('GET', '/api/v1/namespaces/e2e/configmaps/settings')).body;
    await c.request('PUT', '/api/v1/namespaces/e2e/configmaps/settings', { body: { ...cm, data: { mode: 'three', extra: 'x' } } });
    const r = await watching;
    const rows = r.stdout.trim().split('\n');
    expect(rows[0]).to.match(/^NAME\s+DATA\s+AGE$/);
    expect(rows.slice(1).filter((l) => l.startsWith('settings'))).to.have.length.of.at.least(2);
    expect(rows.at(-1)).to.match(/^settings\s+2\s+/);
  });

  it('delete removes the objects and get then answers NotFound', async () => {
    const del = await k(['delete', 'cm', 'settings', '-n', 'e2e']);
    expect(del.code, del.stderr).to.equal(0);
    expect(del.stdout).to.contain('configmap "settings" deleted');
    const missing = await k(['get', 'cm', 'settings', '-n', 'e2e']);
    expect(missing.code).to.not.equal(0);
    expect(missing.stderr).to.contain('NotFound').and.contain('configmaps "settings" not found');
    const ns = await k(['delete', 'ns', 'e2e', '--wait=true', '--timeout=20s']);
    expect(ns.code, ns.stderr).to.equal(0);
    const gone = await k(['get', 'ns', 'e2e']);
    expect(gone.stderr).to.contain('NotFound');
  });

  it('create namespace, configmap --from-literal and secret generic (Protobuf bodies)', async () => {
    for (const args of [['create', 'namespace', 'pb'], ['create', 'configmap', 'c1', '-n', 'pb', '--from-literal=a=b'],
      ['create', 'secret', 'generic', 's1', '-n', 'pb', '--from-literal=p=q']]) {
      const r = await k(args);
      expect(r.code, r.stderr).to.equal(0);
    }
    const cm = await c.request('GET', '/api/v1/namespaces/pb/configmaps/c1');
    expect(cm.body.data).to.deep.equal({ a: 'b' });
    const secret = await c.request('GET', '/api/v1/namespaces/pb/secrets/s1');
    expect(Buffer.from(secret.body.data.p, 'base64').toString()).to.equal('q');
  });

  it('create secret tls sends kubernetes.io/tls, which gets the TLS secret\'s rules', async () => {
    const pki = pkiPaths(c.dataDir);
    const good = await k(['create', 'secret', 'tls', 'tls-good', '-n', 'pb', `--cert=${pki.servingCert}`, `--key=${pki.servingKey}`]);
    expect(good.code, good.stderr).to.equal(0);
    expect((await c.request('GET', '/api/v1/namespaces/pb/secrets/tls-good')).body.type).to.equal('kubernetes.io/tls');
    // A key of another certificate: kubectl itself refuses the pair, nothing is sent.
    const mismatched = await k(['create', 'secret', 'tls', 'tls-bad', '-n', 'pb', `--cert=${pki.servingCert}`, `--key=${pki.caKey}`]);
    expect(mismatched.code).to.not.equal(0);
    expect(mismatched.stderr).to.contain('private key does not match public key');
    expect((await c.request('GET', '/api/v1/namespaces/pb/secrets/tls-bad')).status).to.equal(404);
    // A pair without its key reaches the server, which refuses it as for svc.io/tls.
    for (const type of ['kubernetes.io/tls', 'svc.io/tls']) {
      const keyless = await k(['create', 'secret', 'generic', 'tls-keyless', '-n', 'pb', `--type=${type}`, `--from-file=tls.crt=${pki.servingCert}`]);
      expect(keyless.code, type).to.not.equal(0);
      expect(keyless.stderr, type).to.contain('Secret "tls-keyless" is invalid: data[tls.key]: Required value');
    }
  });

  it('get events lists an Event written through events/v1, and the events/v1 view lists one written through v1', async () => {
    const v1 = await c.request('POST', '/apis/events.svc.io/v1/namespaces/pb/events', { body: {
      metadata: { name: 'scaled' }, eventTime: '2025-01-01T00:00:00.000000Z', reportingController: 'example.com/scaler', reportingInstance: 'scaler-0',
      action: 'Scale', reason: 'Scaled', type: 'Normal', note: 'Scaled up to 2', regarding: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'pb' },
    } });
    expect(v1.status, v1.text).to.equal(201);
    const core = await c.request('POST', '/api/v1/namespaces/pb/events', { body: {
      metadata: { name: 'started' }, involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'web-0', namespace: 'pb' }, reason: 'Started', message: 'Started container', type: 'Normal',
    } });
    expect(core.status, core.text).to.equal(201);
    const table = await k(['get', 'events', '-n', 'pb']);
    expect(table.code, table.stderr).to.equal(0);
    expect(table.stdout).to.match(/Normal\s+Scaled\s+deployment\/web\s+Scaled up to 2/);
    const viewed = await k(['get', 'events.v1.events.k8s.io', 'started', '-n', 'pb', '-o', 'json']);
    expect(viewed.code, viewed.stderr).to.equal(0);
    expect(JSON.parse(viewed.stdout)).to.deep.include({ apiVersion: 'events.k8s.io/v1', note: 'Started container', reason: 'Started' });
  });

  it('create job --image and create clusterrole (Protobuf bodies of other groups)', async () => {
    const job = await k(['create', 'job', 'j1', '-n', 'pb', '--image=busybox']);
    expect(job.code, job.stderr).to.equal(0);
    expect(job.stdout).to.contain('job.batch/j1 created');
    const stored = (await c.request('GET', '/apis/batch/v1/namespaces/pb/jobs/j1')).body;
    expect(stored.spec.template.spec.containers[0].image).to.equal('busybox');
    expect(stored.spec.backoffLimit).to.equal(6);
    const role = await k(['create', 'clusterrole', 'reader', '--verb=get,list', '--resource=pods']);
    expect(role.code, role.stderr).to.equal(0);
    const binding = await k(['create', 'rolebinding', 'read', '--clusterrole=reader', '--user=bob', '-n', 'pb']);
    expect(binding.code, binding.stderr).to.equal(0);
    const bound = (await c.request('GET', '/apis/rbac.authorization.svc.io/v1/namespaces/pb/rolebindings/read')).body;
    expect(bound.roleRef.apiGroup).to.equal('rbac.authorization.svc.io');
    expect(bound.subjects[0].apiGroup).to.equal('rbac.authorization.svc.io');
    const rules = (await c.request('GET', '/apis/rbac.authorization.svc.io/v1/clusterroles/reader')).body.rules;
    expect(rules[0].verbs).to.deep.equal(['get', 'list']);
    expect(rules[0].resources).to.deep.equal(['pods']);
  });

  it('create deployment --replicas=0 keeps the zero (a pointer field in a Protobuf body)', async () => {
    const created = await k(['create', 'deployment', 'idle', '-n', 'pb', '--image=nginx', '--replicas=0']);
    expect(created.code, created.stderr).to.equal(0);
    const stored = (await c.request('GET', '/apis/apps/v1/namespaces/pb/deployments/idle')).body;
    expect(stored.spec.replicas).to.equal(0);
    expect(stored.spec.paused).to.equal(undefined);
  });

  it('run, expose and rollout restart (bodies with null fields, as kubectl writes them)', async () => {
    const run = await k(['run', 'web', '--image=nginx', '-n', 'pb']);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain('pod/web created');
    const deploy = await k(['create', 'deployment', 'site', '--image=nginx', '-n', 'pb']);
    expect(deploy.code, deploy.stderr).to.equal(0);
    const expose = await k(['expose', 'deployment', 'site', '--port=80', '-n', 'pb']);
    expect(expose.code, expose.stderr).to.equal(0);
    const svc = (await c.request('GET', '/api/v1/namespaces/pb/services/site')).body;
    expect(svc.spec.clusterIP).to.match(/^\d+\.\d+\.\d+\.\d+$/);
    expect(svc.spec.selector).to.deep.equal({ app: 'site' });
    const restart = await k(['rollout', 'restart', 'deployment/site', '-n', 'pb']);
    expect(restart.code, restart.stderr).to.equal(0);
    const annotations = (await c.request('GET', '/apis/apps/v1/namespaces/pb/deployments/site')).body.spec.template.metadata.annotations;
    expect(Object.keys(annotations)).to.include('kubectl.kubernetes.io/restartedAt');
  });

  describe('manifests written with the upstream group names', () => {
    before(async () => { expect((await k(['create', 'namespace', 'upstream'])).code).to.equal(0); });

    it('apply -f creates them, and a second apply reports every object unchanged', async () => {
      const first = await k(['apply', '-f', '-'], upstreamManifest());
      expect(first.code, first.stderr).to.equal(0);
      for (const name of ['role.rbac.authorization.k8s.io/reader', 'rolebinding.rbac.authorization.k8s.io/reader', 'clusterrole.rbac.authorization.k8s.io/upstream-reader',
        'ingress.networking.k8s.io/web', 'networkpolicy.networking.k8s.io/deny', 'csidriver.storage.k8s.io/upstream.csi.example.com',
        'priorityclass.scheduling.k8s.io/upstream-high', 'customresourcedefinition.apiextensions.k8s.io/widgets.example.com']) {
        expect(first.stdout).to.contain(`${name} created`);
      }
      const second = await k(['apply', '-f', '-'], upstreamManifest());
      expect(second.code, second.stderr).to.equal(0);
      const lines = second.stdout.trim().split('\n');
      expect(lines).to.have.length(8);
      for (const line of lines) expect(line).to.match(/ unchanged$/);
      const diff = await k(['diff', '-f', '-'], upstreamManifest());
      expect(diff.stdout).to.equal('');
      expect(diff.code, diff.stderr).to.equal(0);
    });

    it('apply --server-side of the same manifest twice succeeds without conflicts', async () => {
      for (let i = 0; i < 2; i++) {
        const r = await k(['apply', '--server-side', '-f', '-'], upstreamManifest());
        expect(r.code, r.stderr).to.equal(0);
        expect(r.stdout.trim().split('\n').every((l) => l.endsWith(' serverside-applied'))).to.equal(true);
      }
      const diff = await k(['diff', '--server-side', '-f', '-'], upstreamManifest());
      expect(diff.code, `${diff.stdout}${diff.stderr}`).to.equal(0);
    });

    it('get by the fully-qualified upstream name answers in that spelling, group names in contents too', async () => {
      const r = await k(['get', 'roles.v1.rbac.authorization.k8s.io', 'reader', '-n', 'upstream', '-o', 'json']);
      expect(r.code, r.stderr).to.equal(0);
      const role = JSON.parse(r.stdout);
      expect(role.apiVersion).to.equal('rbac.authorization.k8s.io/v1');
      expect(role.rules[0].apiGroups).to.deep.equal(['networking.k8s.io']);
      const binding = JSON.parse((await k(['get', 'rolebindings.rbac.authorization.k8s.io', 'reader', '-n', 'upstream', '-o', 'json'])).stdout);
      expect(binding.roleRef.apiGroup).to.equal('rbac.authorization.k8s.io');
      const own = (await c.request('GET', '/apis/rbac.authorization.svc.io/v1/namespaces/upstream/rolebindings/reader')).body;
      expect(own.roleRef.apiGroup).to.equal('rbac.authorization.svc.io');
      expect(own.subjects[0].apiGroup).to.equal('rbac.authorization.svc.io');
      const missing = await k(['get', 'roles.v1.rbac.authorization.k8s.io', 'nope', '-n', 'upstream']);
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.contain('Error from server (NotFound): roles.rbac.authorization.k8s.io "nope" not found');
      const table = await k(['get', 'ingresses.networking.k8s.io', '-n', 'upstream']);
      expect(table.code, table.stderr).to.equal(0);
      expect(table.stdout).to.match(/^NAME\s+CLASS\s+HOSTS/).and.contain('web.example.com');
    });

    it('api-resources lists both spellings', async () => {
      const r = await k(['api-resources', '-o', 'name']);
      expect(r.code, r.stderr).to.equal(0);
      const names = r.stdout.trim().split('\n');
      expect(names).to.include.members(['roles.rbac.authorization.svc.io', 'roles.rbac.authorization.k8s.io', 'ingresses.networking.svc.io', 'ingresses.networking.k8s.io']);
      const explain = await k(['explain', 'roles.rbac.authorization.k8s.io.rules']);
      expect(explain.code, explain.stderr).to.equal(0);
      expect(explain.stdout).to.contain('GROUP:      rbac.authorization.k8s.io').and.contain('apiGroups');
    });

    it('apply --prune -l with the default allow-list prunes the Ingress left out of the manifest', async () => {
      const r = await k(['apply', '--prune', '-l', 'app=upstream', '-f', '-'], upstreamManifest(false));
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.contain('ingress.networking.k8s.io/web pruned');
      expect((await c.request('GET', '/apis/networking.svc.io/v1/namespaces/upstream/ingresses/web')).status).to.equal(404);
    });
  });
});
