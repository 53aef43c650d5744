import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, waitFor } from '../lib/cluster.js';
import { StorageClient } from '../../internal/storage/client.js';
import { ResourceQuota } from '../../internal/admission/index.js';
import type { AdmissionRequest } from '../../internal/admission/index.js';

const nsPath = (ns: string) => `/api/v1/namespaces/${ns}`;
const container = (resources?: object) => ({ name: 'c', image: 'nginx', ...(resources ? { resources } : {}) });
const pod = (name: string, spec: object = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [container()], ...spec } });
const small = { requests: { cpu: '600m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } };

describe('admission: ResourceQuota plugin and the quota controller', function () {
  this.timeout(120_000);
  let c: Cluster;
  const configDir = mkdtempSync(join(tmpdir(), 'quota-config-'));
  before(async () => {
    // Claims of any StorageClass need a quota that covers them (upstream's spellings of the configuration).
    const config = join(configDir, 'admission.yaml');
    writeFileSync(config, JSON.stringify({
      apiVersion: 'apiserver.config.k8s.io/v1', kind: 'AdmissionConfiguration',
      plugins: [{ name: 'ResourceQuota', configuration: {
        apiVersion: 'apiserver.config.k8s.io/v1', kind: 'ResourceQuotaConfiguration',
        limitedResources: [{ resource: 'persistentvolumeclaims', matchContains: ['.storageclass.'] }],
      } }],
    }));
    c = await new Cluster({ flags: { admission: [`--admission-control-config-file=${config}`] } }).start();
  });
  after(async () => {
    await c?.stop();
    rmSync(configDir, { recursive: true, force: true });
  });

  /** A namespace with one quota, once the controller has written its status (admission enforces status.hard). */
  async function quotaIn(ns: string, name: string, spec: Record<string, unknown>): Promise<void> {
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status).to.equal(201);
    await addQuota(ns, name, spec);
  }

  async function addQuota(ns: string, name: string, spec: Record<string, unknown>): Promise<void> {
    const created = await c.request('POST', `${nsPath(ns)}/resourcequotas`, { body: { metadata: { name }, spec } });
    expect(created.status, created.text).to.equal(201);
    const hard = Object.keys(spec.hard as object);
    const synced = await waitFor(async () => {
      const q = (await c.request('GET', `${nsPath(ns)}/resourcequotas/${name}`)).body;
      return hard.every((k) => q.status?.hard?.[k] !== undefined && q.status?.used?.[k] !== undefined);
    }, 20_000);
    expect(synced, 'quota status written by the controller').to.equal(true);
  }

  const used = async (ns: string, name: string) => (await c.request('GET', `${nsPath(ns)}/resourcequotas/${name}`)).body.status?.used ?? {};
  const createPod = (ns: string, body: object, query = '') => c.request('POST', `${nsPath(ns)}/pods${query}`, { body });

  it('a count quota admits up to its limit and refuses the next create with the platform\'s message', async () => {
    await quotaIn('q-count', 'counts', { hard: { pods: '2', 'count/configmaps': '1' } });
    expect((await used('q-count', 'counts'))).to.deep.equal({ pods: '0', 'count/configmaps': '0' });
    expect((await createPod('q-count', pod('p1'))).status).to.equal(201);
    expect((await createPod('q-count', pod('p2'))).status).to.equal(201);
    const refused = await createPod('q-count', pod('p3'));
    expect(refused.status).to.equal(403);
    expect(refused.body).to.include({ reason: 'Forbidden', code: 403 });
    expect(refused.body.message).to.equal('pods "p3" is forbidden: exceeded quota: counts, requested: pods=1, used: pods=2, limited: pods=2');
    expect((await c.request('POST', `${nsPath('q-count')}/configmaps`, { body: { metadata: { name: 'a' } } })).status).to.equal(201);
    const cm = await c.request('POST', `${nsPath('q-count')}/configmaps`, { body: { metadata: { name: 'b' } } });
    expect(cm.status).to.equal(403);
    expect(cm.body.message).to.equal('configmaps "b" is forbidden: exceeded quota: counts, requested: count/configmaps=1, used: count/configmaps=1, limited: count/configmaps=1');
    expect(await used('q-count', 'counts')).to.deep.equal({ pods: '2', 'count/configmaps': '1' });
  });

  it('a compute quota charges requests and limits, refuses past them, and refuses a pod that states none', async () => {
    await quotaIn('q-compute', 'compute', { hard: { 'requests.cpu': '1', 'requests.memory': '1Gi', 'limits.cpu': '2', 'limits.memory': '2Gi' } });
    expect((await createPod('q-compute', pod('fits', { containers: [container(small)] }))).status).to.equal(201);
    expect(await used('q-compute', 'compute')).to.deep.equal({ 'requests.cpu': '600m', 'requests.memory': '512Mi', 'limits.cpu': '1', 'limits.memory': '1Gi' });
    const over = await createPod('q-compute', pod('over', { containers: [container(small)] }));
    expect(over.status).to.equal(403);
    expect(over.body.message).to.equal('pods "over" is forbidden: exceeded quota: compute, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1');
    const bare = await createPod('q-compute', pod('bare'));
    expect(bare.status).to.equal(403);
    expect(bare.body.reason).to.equal('Forbidden');
    expect(bare.body.message).to.equal('pods "bare" is forbidden: failed quota: compute: must specify limits.cpu for: c; limits.memory for: c; requests.cpu for: c; requests.memory for: c');
  });

  it('50 concurrent creates against a count quota: exactly the limit succeed, the rest are refused', async () => {
    await quotaIn('q-race', 'race', { hard: { pods: '10' } });
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => createPod('q-race', pod(`r${i}`))));
    const codes = answers.map((a) => a.status);
    expect(codes.filter((s) => s === 201)).to.have.length(10);
    expect(codes.filter((s) => s === 403)).to.have.length(40);
    expect(answers.find((a) => a.status === 403)!.body.message).to.match(/exceeded quota: race, requested: pods=1, used: pods=10, limited: pods=10$/);
    expect((await c.request('GET', `${nsPath('q-race')}/pods`)).body.items).to.have.length(10);
    expect((await used('q-race', 'race')).pods).to.equal('10');
  });

  it('deleting objects releases their usage (the controller recomputes it) and frees room for new ones', async () => {
    await quotaIn('q-release', 'release', { hard: { pods: '2' } });
    for (const n of ['a', 'b']) expect((await createPod('q-release', pod(n))).status).to.equal(201);
    expect((await createPod('q-release', pod('c'))).status).to.equal(403);
    expect((await c.request('DELETE', `${nsPath('q-release')}/pods/a`)).status).to.equal(200);
    expect(await waitFor(async () => (await used('q-release', 'release')).pods === '1', 20_000), 'usage released').to.equal(true);
    expect((await createPod('q-release', pod('c'))).status).to.equal(201);
  });

  it('scopes: BestEffort and a PriorityClass scopeSelector charge only the pods they select', async () => {
    await quotaIn('q-scopes', 'besteffort', { hard: { pods: '1' }, scopes: ['BestEffort'] });
    expect((await createPod('q-scopes', pod('be1'))).status).to.equal(201);
    const second = await createPod('q-scopes', pod('be2'));
    expect(second.status).to.equal(403);
    expect(second.body.message).to.contain('exceeded quota: besteffort');
    expect((await createPod('q-scopes', pod('burstable', { containers: [container(small)] }))).status).to.equal(201);

    const pc = await c.request('POST', '/apis/scheduling.svc.io/v1/priorityclasses', { body: { metadata: { name: 'quota-high' }, value: 1000 } });
    expect(pc.status, pc.text).to.equal(201);
    await quotaIn('q-priority', 'high', { hard: { pods: '1' }, scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['quota-high'] }] } });
    expect((await createPod('q-priority', pod('h1', { priorityClassName: 'quota-high' }))).status).to.equal(201);
    expect((await createPod('q-priority', pod('h2', { priorityClassName: 'quota-high' }))).status).to.equal(403);
    expect((await createPod('q-priority', pod('plain'))).status).to.equal(201);
    expect((await used('q-priority', 'high')).pods).to.equal('1');
  });

  it('services: node ports and load balancers are counted by type', async () => {
    await quotaIn('q-svc', 'svc', { hard: { 'services.loadbalancers': '1', 'services.nodeports': '2' } });
    const svc = (name: string, type: string, ports: number) => ({
      metadata: { name }, spec: { type, selector: { app: 'x' }, ports: Array.from({ length: ports }, (_, i) => ({ name: `p${i}`, port: 80 + i })) },
    });
    const create = (body: object) => c.request('POST', `${nsPath('q-svc')}/services`, { body });
    expect((await create(svc('lb', 'LoadBalancer', 1))).status).to.equal(201);
    expect(await used('q-svc', 'svc')).to.deep.equal({ 'services.loadbalancers': '1', 'services.nodeports': '1' });
    const lb2 = await create(svc('lb2', 'LoadBalancer', 1));
    expect(lb2.status).to.equal(403);
    expect(lb2.body.message).to.equal('services "lb2" is forbidden: exceeded quota: svc, requested: services.loadbalancers=1, used: services.loadbalancers=1, limited: services.loadbalancers=1');
    const np = await create(svc('np', 'NodePort', 2));
    expect(np.status).to.equal(403);
    expect(np.body.message).to.equal('services "np" is forbidden: exceeded quota: svc, requested: services.nodeports=2, used: services.nodeports=1, limited: services.nodeports=2');
    const plain = await create(svc('plain', 'ClusterIP', 3));
    expect(plain.status).to.equal(201);
    // An update is charged what it adds: a ClusterIP service turned LoadBalancer.
    const turned = await c.request('PUT', `${nsPath('q-svc')}/services/plain`, { body: { ...plain.body, spec: { ...plain.body.spec, type: 'LoadBalancer' } } });
    expect(turned.status).to.equal(403);
    expect(turned.body.message).to.equal('services "plain" is forbidden: exceeded quota: svc, requested: services.loadbalancers=1,services.nodeports=3, '
      + 'used: services.loadbalancers=1,services.nodeports=1, limited: services.loadbalancers=1,services.nodeports=2');
  });

  it('claims: storage per StorageClass, and limitedResources from the configuration file need a covering quota', async () => {
    const claim = (name: string, size: string, storageClassName?: string) => ({
      metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, ...(storageClassName ? { storageClassName } : {}) },
    });
    const create = (body: object) => c.request('POST', `${nsPath('q-pvc')}/persistentvolumeclaims`, { body });
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'q-pvc' } } })).status).to.equal(201);
    const uncovered = await create(claim('gold0', '1Gi', 'gold'));
    expect(uncovered.status).to.equal(403);
    expect(uncovered.body.message).to.equal('persistentvolumeclaims "gold0" is forbidden: insufficient quota to consume: '
      + 'gold.storageclass.storage.svc.io/persistentvolumeclaims,gold.storageclass.storage.svc.io/requests.storage');
    expect((await create(claim('classless', '1Gi'))).status).to.equal(201);
    await addQuota('q-pvc', 'gold', { hard: { 'gold.storageclass.storage.svc.io/requests.storage': '10Gi', 'gold.storageclass.storage.svc.io/persistentvolumeclaims': '5', 'requests.storage': '100Gi' } });
    expect((await create(claim('gold1', '6Gi', 'gold'))).status).to.equal(201);
    const over = await create(claim('gold2', '6Gi', 'gold'));
    expect(over.status).to.equal(403);
    expect(over.body.message).to.equal('persistentvolumeclaims "gold2" is forbidden: exceeded quota: gold, requested: gold.storageclass.storage.svc.io/requests.storage=6Gi, '
      + 'used: gold.storageclass.storage.svc.io/requests.storage=6Gi, limited: gold.storageclass.storage.svc.io/requests.storage=10Gi');
    expect(await used('q-pvc', 'gold')).to.deep.equal({
      'gold.storageclass.storage.svc.io/requests.storage': '6Gi', 'gold.storageclass.storage.svc.io/persistentvolumeclaims': '1', 'requests.storage': '7Gi',
    });
  });

  it('a dry run is checked against the quota but never charged', async () => {
    await quotaIn('q-dry', 'dry', { hard: { pods: '1' } });
    expect((await createPod('q-dry', pod('d1'), '?dryRun=All')).status).to.equal(201);
    expect((await used('q-dry', 'dry')).pods).to.equal('0');
    expect((await createPod('q-dry', pod('d1'))).status).to.equal(201);
    const refused = await createPod('q-dry', pod('d2'), '?dryRun=All');
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.contain('exceeded quota: dry');
    expect((await used('q-dry', 'dry')).pods).to.equal('1');
  });

  it('two admission processes charging one quota at once never exceed it (charges are conditional writes to storage)', async () => {
    await quotaIn('q-multi', 'multi', { hard: { 'count/secrets': '7' } });
    const clients = [new StorageClient(c.addresses.storage), new StorageClient(c.addresses.storage)];
    const plugins = clients.map((s) => new ResourceQuota(s));
    try {
      const request = (i: number): AdmissionRequest => ({
        uid: `u${i}`, kind: { group: '', version: 'v1', kind: 'Secret' }, resource: { group: '', version: 'v1', resource: 'secrets' },
        subresource: '', name: `s${i}`, namespace: 'q-multi', operation: 'CREATE', user: { username: 'u', uid: '', groups: [], extra: {} },
        object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s${i}`, namespace: 'q-multi' } }, dryRun: false,
      });
      const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => plugins[i % 2].admit(request(i)).then(() => 'ok', (e) => e.code)));
      expect(outcomes.filter((o) => o === 'ok')).to.have.length(7);
      expect(outcomes.filter((o) => o === 403)).to.have.length(23);
    } finally {
      plugins.forEach((p) => p.stop());
      clients.forEach((s) => s.close());
    }
  });
});
