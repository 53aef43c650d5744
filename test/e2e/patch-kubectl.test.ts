import { expect } from 'chai';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Cluster } from '../lib/cluster.js';
import { kubectl } from '../lib/kubectl.js';

const NS = 'patch-e2e';

const configMap = (name: string, data: Record<string, string>, labels: Record<string, string> = {}) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: ${NS}
  labels: ${JSON.stringify(labels)}
data: ${JSON.stringify(data)}
`;

describe('kubectl 1.33 apply, patch, edit, label and annotate', function () {
  this.timeout(120_000);
  let c: Cluster;
  const k = async (args: string[], stdin?: string) => kubectl(c.kubeconfig, args, { stdin });
  const ok = async (args: string[], stdin?: string) => {
    const r = await k(args, stdin);
    expect(r.code, `kubectl ${args.join(' ')}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const getJson = async (...args: string[]) => JSON.parse(await ok(['get', ...args, '-n', NS, '-o', 'json', '--show-managed-fields']));
  const managers = (obj: any) => (obj.metadata.managedFields ?? []).map((e: any) => `${e.manager}/${e.operation}`);

  before(async () => {
    c = await new Cluster().start();
    await ok(['create', 'namespace', NS]);
  });
  after(async () => { await c?.stop(); });

  it('apply (client-side) creates, then three-way merges with its last-applied annotation', async () => {
    expect(await ok(['apply', '-f', '-', '--validate=false'], configMap('csa', { a: '1', b: '2' }, { app: 'x' }))).to.contain('configmap/csa created');
    await ok(['patch', 'configmap', 'csa', '-n', NS, '--type=merge', '-p', '{"data":{"live":"kept"}}']);
    expect(await ok(['apply', '-f', '-', '--validate=false'], configMap('csa', { a: '1', c: '3' }, { app: 'x' }))).to.contain('configmap/csa configured');
    const cm = await getJson('configmap', 'csa');
    expect(cm.data).to.deep.equal({ a: '1', c: '3', live: 'kept' });
    expect(JSON.parse(cm.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).data).to.deep.equal({ a: '1', c: '3' });
    expect(await ok(['apply', '-f', '-', '--validate=false'], configMap('csa', { a: '1', c: '3' }, { app: 'x' }))).to.contain('configmap/csa unchanged');
  });

  it('apply --server-side creates, records the kubectl applier and reports unchanged objects', async () => {
    expect(await ok(['apply', '--server-side', '-f', '-', '--validate=false'], configMap('ssa', { a: '1', b: '2' }))).to.contain('configmap/ssa serverside-applied');
    const cm = await getJson('configmap', 'ssa');
    expect(managers(cm)).to.deep.equal(['kubectl/Apply']);
    expect(cm.metadata.managedFields[0].fieldsV1).to.deep.equal({ 'f:data': { 'f:a': {}, 'f:b': {} } });
    const rv = cm.metadata.resourceVersion;
    await ok(['apply', '--server-side', '-f', '-', '--validate=false'], configMap('ssa', { a: '1', b: '2' }));
    expect((await getJson('configmap', 'ssa')).metadata.resourceVersion).to.equal(rv);
  });

  it('apply --server-side by another manager fails on a conflict, and --force-conflicts takes the field', async () => {
    const other = ['apply', '--server-side', '--field-manager=other', '-f', '-', '--validate=false'];
    const clash = await k(other, configMap('ssa', { a: 'mine' }));
    expect(clash.code).to.equal(1);
    expect(clash.stderr).to.contain('Apply failed with 1 conflict: conflict with "kubectl": .data.a').and.contain('--force-conflicts');
    const shared = await k(other, configMap('ssa', { b: '2' }));
    expect(shared.code, shared.stderr).to.equal(0);
    await ok([...other, '--force-conflicts'], configMap('ssa', { a: 'mine', b: '2' }));
    const cm = await getJson('configmap', 'ssa');
    expect(cm.data).to.deep.equal({ a: 'mine', b: '2' });
    const kubectlEntry = cm.metadata.managedFields.find((e: any) => e.manager === 'kubectl');
    expect(kubectlEntry.fieldsV1['f:data']).to.deep.equal({ 'f:b': {} });
  });

  it('apply --server-side drops what the applier no longer sets, and --dry-run=server writes nothing', async () => {
    await ok(['apply', '--server-side', '--field-manager=other', '-f', '-', '--validate=false'], configMap('ssa', { a: 'mine' }));
    expect((await getJson('configmap', 'ssa')).data).to.deep.equal({ a: 'mine', b: '2' });
    await ok(['apply', '--server-side', '-f', '-', '--validate=false'], configMap('ssa', {}));
    expect((await getJson('configmap', 'ssa')).data).to.deep.equal({ a: 'mine' });
    const before = await getJson('configmap', 'ssa');
    const dry = await ok(['apply', '--server-side', '--force-conflicts', '--dry-run=server', '-f', '-', '-o', 'json', '--validate=false'], configMap('ssa', { a: 'dry' }));
    expect(JSON.parse(dry).data).to.deep.equal({ a: 'dry' });
    expect(await getJson('configmap', 'ssa')).to.deep.equal(before);
  });

  it('apply --server-side takes over from client-side apply without conflicts', async () => {
    await ok(['apply', '-f', '-', '--validate=false'], configMap('move', { a: '1' }));
    const r = await k(['apply', '--server-side', '-f', '-', '--validate=false'], configMap('move', { a: '2' }));
    expect(r.code, r.stderr).to.equal(0);
    const cm = await getJson('configmap', 'move');
    expect(cm.data).to.deep.equal({ a: '2' });
    expect(managers(cm)).to.include('kubectl/Apply');
    expect(JSON.parse(cm.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).data).to.deep.equal({ a: '2' });
  });

  it('patch --type=json, merge and strategic', async () => {
    await ok(['create', 'configmap', 'p', '-n', NS, '--from-literal=a=1']);
    const patch = (type: string, p: string) => ok(['patch', 'configmap', 'p', '-n', NS, `--type=${type}`, '-p', p]);
    expect(await patch('json', '[{"op":"add","path":"/data/j","value":"json"},{"op":"remove","path":"/data/a"}]')).to.contain('configmap/p patched');
    await patch('merge', '{"data":{"m":"merge"},"metadata":{"labels":{"l":"1"}}}');
    await patch('strategic', '{"metadata":{"finalizers":["example.com/f"]},"data":{"s":"strategic"}}');
    const cm = await getJson('configmap', 'p');
    expect(cm.data).to.deep.equal({ j: 'json', m: 'merge', s: 'strategic' });
    expect(cm.metadata.finalizers).to.deep.equal(['example.com/f']);
    expect(await patch('strategic', '{"data":{"s":"strategic"}}')).to.contain('configmap/p patched (no change)');
    const failed = await k(['patch', 'configmap', 'p', '-n', NS, '--type=json', '-p', '[{"op":"test","path":"/data/j","value":"other"}]']);
    expect(failed.code).to.equal(1);
    expect(failed.stderr).to.contain('The request is invalid').and.contain('testing value /data/j failed: test operation failed');
    await patch('json', '[{"op":"remove","path":"/metadata/finalizers"}]');
  });

  it('edit saves what the editor changed', async () => {
    await ok(['create', 'configmap', 'e', '-n', NS, '--from-literal=mode=before']);
    const editor = join(c.dataDir, 'editor.sh');
    writeFileSync(editor, '#!/bin/sh\nsed -i "s/mode: before/mode: after/" "$1"\n');
    chmodSync(editor, 0o755);
    process.env.KUBE_EDITOR = editor;
    try {
      expect(await ok(['edit', 'configmap', 'e', '-n', NS])).to.contain('configmap/e edited');
    } finally {
      delete process.env.KUBE_EDITOR;
    }
    expect((await getJson('configmap', 'e')).data).to.deep.equal({ mode: 'after' });
  });

  it('label and annotate config maps, secrets and namespaces, overwriting and removing', async () => {
    await ok(['create', 'secret', 'generic', 'sec', '-n', NS, '--from-literal=k=v']);
    for (const target of [['configmap', 'e', '-n', NS], ['secret', 'sec', '-n', NS], ['namespace', NS]]) {
      expect(await ok(['label', ...target, 'tier=front'])).to.match(/ labeled$/m);
      expect((await k(['label', ...target, 'tier=back'])).code).to.equal(1);
      await ok(['label', ...target, 'tier=back', '--overwrite']);
      expect(await ok(['annotate', ...target, 'note=hello'])).to.match(/ annotated$/m);
      const obj = JSON.parse(await ok(['get', ...target, '-o', 'json']));
      expect(obj.metadata.labels.tier).to.equal('back');
      expect(obj.metadata.annotations.note).to.equal('hello');
      await ok(['label', ...target, 'tier-']);
      await ok(['annotate', ...target, 'note-']);
      const cleared = JSON.parse(await ok(['get', ...target, '-o', 'json']));
      expect(cleared.metadata.labels ?? {}).not.to.have.property('tier');
      expect(cleared.metadata.annotations ?? {}).not.to.have.property('note');
    }
    expect((await getJson('secret', 'sec')).data).to.deep.equal({ k: Buffer.from('v').toString('base64') });
  });

  it('deployments: containers merge by name in client-side apply, patch and server-side apply', async () => {
    const deployment = (containers: string, name = 'web') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${NS}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers: ${containers}
`;
    const names = async (name: string) => (await getJson('deployment', name)).spec.template.spec.containers.map((x: any) => `${x.name}=${x.image}`);
    await ok(['apply', '-f', '-', '--validate=false'], deployment('[{name: app, image: "nginx:1"}, {name: side, image: busybox}]'));
    await ok(['apply', '-f', '-', '--validate=false'], deployment('[{name: app, image: "nginx:2"}, {name: side, image: busybox}]'));
    expect(await names('web')).to.deep.equal(['app=nginx:2', 'side=busybox']);
    await ok(['patch', 'deployment', 'web', '-n', NS, '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox:2"}]}}}}']);
    expect(await names('web')).to.deep.equal(['app=nginx:2', 'side=busybox:2']);
    await ok(['apply', '-f', '-', '--validate=false'], deployment('[{name: app, image: "nginx:2"}]'));
    expect(await names('web')).to.deep.equal(['app=nginx:2']);

    const ssa = ['apply', '--server-side', '-f', '-', '--validate=false'];
    await ok(ssa, deployment('[{name: app, image: "nginx:1"}]', 'mesh'));
    await ok([...ssa, '--field-manager=mesh'], deployment('[{name: proxy, image: envoy}]', 'mesh').replace(/ {2}selector.*\n/, ''));
    expect(await names('mesh')).to.deep.equal(['app=nginx:1', 'proxy=envoy']);
    const clash = await k([...ssa, '--field-manager=mesh'], deployment('[{name: app, image: "nginx:9"}, {name: proxy, image: envoy}]', 'mesh'));
    expect(clash.code).to.equal(1);
    expect(clash.stderr).to.contain('conflict with "kubectl": .spec.template.spec.containers[name="app"].image');
    await ok(ssa, deployment('[]', 'mesh'));
    expect(await names('mesh')).to.deep.equal(['proxy=envoy']);
  });

  it('apply --server-side of a namespace and a secret', async () => {
    const manifest = `apiVersion: v1
kind: Namespace
metadata:
  name: ${NS}-applied
  labels: {team: a}
---
apiVersion: v1
kind: Secret
metadata:
  name: token
  namespace: ${NS}-applied
stringData:
  token: abc
`;
    const out = await ok(['apply', '--server-side', '-f', '-', '--validate=false'], manifest);
    expect(out).to.contain(`namespace/${NS}-applied serverside-applied`).and.contain('secret/token serverside-applied');
    const secret = JSON.parse(await ok(['get', 'secret', 'token', '-n', `${NS}-applied`, '-o', 'json']));
    expect(secret.data).to.deep.equal({ token: Buffer.from('abc').toString('base64') });
  });
});
