// The pod admission plugins on by default: ServiceAccount, LimitRanger,
// DefaultTolerationSeconds, Priority and RuntimeClass, each with a pod it
// changes or lets through and one it refuses (upstream's messages), the
// system PriorityClasses, dry run, and --disable-admission-plugins.
import { expect } from 'chai';
import { Cluster, type Response } from '../lib/cluster.js';

const NS = 'podadm';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const SAS = `/api/v1/namespaces/${NS}/serviceaccounts`;
const PRIORITY_CLASSES = '/apis/scheduling.svc.io/v1/priorityclasses';
const RUNTIME_CLASSES = '/apis/node.svc.io/v1/runtimeclasses';
const MOUNT_PATH = '/var/run/secrets/svc.io/serviceaccount';
const POLL_MS = 50;
const POLL_LIMIT = 200;

const pod = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, ...metadata },
  spec: { containers: [{ name: 'app', image: 'busybox' }], ...spec },
});

function expectForbidden(res: Response, message: string): void {
  expect(res.status, res.text).to.equal(403);
  expect(res.body, res.text).to.include({ kind: 'Status', reason: 'Forbidden' });
  expect(res.body.message).to.equal(message);
}

describe('admission: pod plugins', function () {
  this.timeout(120_000);
  const flags = { admission: [] as string[] };
  let c: Cluster;
  const create = (body: unknown, query = '') => c.request('POST', `${PODS}${query}`, { body });

  /** Creates pods until one is answered as `done` says (a plugin's memory follows writes within moments). */
  async function createUntil(make: (i: number) => unknown, done: (res: Response) => boolean): Promise<Response> {
    let res: Response | undefined;
    for (let i = 0; i < POLL_LIMIT; i++) {
      res = await create(make(i));
      if (done(res)) return res;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    return res!;
  }

  before(async () => {
    c = await new Cluster({ flags }).start();
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).to.equal(201);
  });
  after(async () => { await c?.stop(); });

  describe('ServiceAccount', () => {
    it('runs a pod as default, mounts the projected token in every container and copies pull secrets', async () => {
      const sa = await c.request('POST', SAS, { body: { metadata: { name: 'puller' }, imagePullSecrets: [{ name: 'registry' }] } });
      expect(sa.status, sa.text).to.equal(201);
      const res = await create(pod('sa-default', { initContainers: [{ name: 'init', image: 'busybox' }] }));
      expect(res.status, res.text).to.equal(201);
      const spec = res.body.spec;
      expect(spec.serviceAccountName).to.equal('default');
      const volume = spec.volumes.find((v: any) => v.name.startsWith('svc-api-access-'));
      expect(volume.name).to.match(/^svc-api-access-[a-z0-9]{5}$/);
      expect(volume.projected.sources).to.deep.equal([
        { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
        { configMap: { name: 'svc-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ]);
      for (const container of [...spec.containers, ...spec.initContainers]) {
        expect(container.volumeMounts).to.deep.include({ name: volume.name, readOnly: true, mountPath: MOUNT_PATH });
      }
      const pulled = await createUntil((i) => pod(`sa-puller-${i}`, { serviceAccountName: 'puller' }), (r) => r.status !== 403);
      expect(pulled.status, pulled.text).to.equal(201);
      expect(pulled.body.spec.imagePullSecrets).to.deep.equal([{ name: 'registry' }]);
    });

    it('refuses a pod whose service account does not exist, and mirror pods naming one', async () => {
      expectForbidden(await create(pod('sa-missing', { serviceAccountName: 'ghost' })),
        `pods "sa-missing" is forbidden: error looking up service account ${NS}/ghost: serviceaccount "ghost" not found`);
      expectForbidden(await create(pod('sa-mirror', { serviceAccountName: 'default', nodeName: 'n1' }, { annotations: { 'svc.io/config.mirror': 'x' } })),
        'pods "sa-mirror" is forbidden: a mirror pod may not reference service accounts');
    });

    it('mounts nothing when the account turns automount off, and enforces mountable secrets', async () => {
      const body = { metadata: { name: 'strict', annotations: { 'svc.io/enforce-mountable-secrets': 'true' } }, automountServiceAccountToken: false, secrets: [{ name: 'allowed' }] };
      expect((await c.request('POST', SAS, { body })).status).to.equal(201);
      const secretVolume = (name: string) => ({ serviceAccountName: 'strict', volumes: [{ name: 's', secret: { secretName: name } }] });
      const ok = await createUntil((i) => pod(`sa-strict-${i}`, secretVolume('allowed')), (r) => r.status !== 403);
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body.spec.volumes.map((v: any) => v.name)).to.deep.equal(['s']);
      expect(ok.body.spec.containers[0].volumeMounts ?? []).to.deep.equal([]);
      expectForbidden(await create(pod('sa-unlisted', secretVolume('other'))),
        'pods "sa-unlisted" is forbidden: volume with secret.secretName="other" is not allowed because service account strict does not reference that secret');
    });
  });

  describe('LimitRanger', () => {
    it('defaults container resources, bounds containers and claims', async () => {
      const limits = [
        { type: 'Container', default: { cpu: '500m', memory: '128Mi' }, defaultRequest: { cpu: '250m' }, max: { cpu: '1' } },
        { type: 'PersistentVolumeClaim', max: { storage: '1Gi' } },
      ];
      const lr = await c.request('POST', `/api/v1/namespaces/${NS}/limitranges`, { body: { metadata: { name: 'bounds' }, spec: { limits } } });
      expect(lr.status, lr.text).to.equal(201);
      const res = await createUntil((i) => pod(`lr-default-${i}`), (r) => r.body?.spec?.containers?.[0]?.resources?.limits !== undefined);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.spec.containers[0].resources).to.deep.equal({ limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m', memory: '128Mi' } });
      expect(res.body.status.qosClass).to.equal('Burstable');
      expect(res.body.metadata.annotations['svc.io/limit-ranger']).to.equal('LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app');

      const big = pod('lr-big', { containers: [{ name: 'app', image: 'busybox', resources: { limits: { cpu: '2' } } }] });
      expectForbidden(await create(big), 'pods "lr-big" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
      const claim = { metadata: { name: 'lr-claim' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } } } };
      expectForbidden(await c.request('POST', `/api/v1/namespaces/${NS}/persistentvolumeclaims`, { body: claim }),
        'persistentvolumeclaims "lr-claim" is forbidden: maximum storage usage per PersistentVolumeClaim is 1Gi, but request is 5Gi');
      expect((await c.request('DELETE', `/api/v1/namespaces/${NS}/limitranges/bounds`)).status).to.equal(200);
    });
  });

  describe('DefaultTolerationSeconds', () => {
    it('adds the not-ready and unreachable tolerations unless the pod has its own', async () => {
      const res = await create(pod('dts-default'));
      expect(res.status, res.text).to.equal(201);
      expect(res.body.spec.tolerations).to.deep.include.members([
        { key: 'node.svc.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.svc.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ]);
      const own = { key: 'node.svc.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 };
      const kept = await create(pod('dts-own', { tolerations: [own] }));
      expect(kept.status, kept.text).to.equal(201);
      expect(kept.body.spec.tolerations.filter((t: any) => t.key === 'node.svc.io/not-ready')).to.deep.equal([own]);
    });
  });

  describe('Priority', () => {
    it('has the system classes from the start, reported by readyz, which cannot be deleted', async () => {
      const node = await c.request('GET', `${PRIORITY_CLASSES}/system-node-critical`);
      expect(node.status, node.text).to.equal(200);
      expect(node.body).to.include({ value: 2000001000, preemptionPolicy: 'PreemptLowerPriority' });
      expect((await c.request('GET', `${PRIORITY_CLASSES}/system-cluster-critical`)).body.value).to.equal(2000000000);
      const readyz = await c.request('GET', '/readyz?verbose');
      expect(readyz.text).to.include('[+]poststarthook/scheduling/bootstrap-system-priority-classes ok');
      expectForbidden(await c.request('DELETE', `${PRIORITY_CLASSES}/system-node-critical`),
        'priorityclasses.scheduling.svc.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted');
      const reserved = await c.request('POST', PRIORITY_CLASSES, { body: { metadata: { name: 'system-mine' }, value: 5 } });
      expect(reserved.status, reserved.text).to.equal(422);
    });

    it('resolves the class to priority and policy, refuses unknown classes and wrong priorities', async () => {
      const res = await create(pod('prio-system', { priorityClassName: 'system-cluster-critical' }));
      expect(res.status, res.text).to.equal(201);
      expect(res.body.spec).to.include({ priority: 2000000000, preemptionPolicy: 'PreemptLowerPriority' });
      expectForbidden(await create(pod('prio-unknown', { priorityClassName: 'nope' })), 'pods "prio-unknown" is forbidden: no PriorityClass with name nope was found');
      expectForbidden(await create(pod('prio-wrong', { priorityClassName: 'system-cluster-critical', priority: 7 })),
        'pods "prio-wrong" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 2000000000 from the given PriorityClass name');
    });

    it('gives pods the global default class and allows one default only', async () => {
      const low = await c.request('POST', PRIORITY_CLASSES, { body: { metadata: { name: 'low' }, value: 10, globalDefault: true, preemptionPolicy: 'Never' } });
      expect(low.status, low.text).to.equal(201);
      const res = await createUntil((i) => pod(`prio-default-${i}`), (r) => r.body?.spec?.priorityClassName === 'low');
      expect(res.body.spec).to.include({ priorityClassName: 'low', priority: 10, preemptionPolicy: 'Never' });
      expectForbidden(await c.request('POST', PRIORITY_CLASSES, { body: { metadata: { name: 'other' }, value: 20, globalDefault: true } }),
        'priorityclasses.scheduling.svc.io "other" is forbidden: PriorityClass low is already marked as default. Only one default can exist');
      expect((await c.request('DELETE', `${PRIORITY_CLASSES}/low`)).status).to.equal(200);
    });
  });

  describe('RuntimeClass', () => {
    it('sets overhead and merges scheduling; refuses unknown classes, conflicts and foreign overhead', async () => {
      const rc = {
        metadata: { name: 'gvisor' }, handler: 'runsc', overhead: { podFixed: { cpu: '100m' } },
        scheduling: { nodeSelector: { sandbox: 'yes' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] },
      };
      expect((await c.request('POST', RUNTIME_CLASSES, { body: rc })).status).to.equal(201);
      const res = await createUntil((i) => pod(`rc-ok-${i}`, { runtimeClassName: 'gvisor', nodeSelector: { zone: 'a' } }), (r) => r.status !== 403);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.spec.overhead).to.deep.equal({ cpu: '100m' });
      expect(res.body.spec.nodeSelector).to.deep.equal({ zone: 'a', sandbox: 'yes' });
      expect(res.body.spec.tolerations).to.deep.include({ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' });
      expectForbidden(await create(pod('rc-unknown', { runtimeClassName: 'kata' })), 'pods "rc-unknown" is forbidden: pod rejected: RuntimeClass "kata" not found');
      expectForbidden(await create(pod('rc-conflict', { runtimeClassName: 'gvisor', nodeSelector: { sandbox: 'no' } })),
        'pods "rc-conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = yes; pod.spec.nodeSelector[sandbox] = no');
      expectForbidden(await create(pod('rc-overhead', { overhead: { cpu: '1' } })),
        'pods "rc-overhead" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
    });
  });

  describe('dry run and flags', () => {
    it('dry run shows every mutation and stores nothing', async () => {
      const res = await create(pod('dry-pod'), '?dryRun=All');
      expect(res.status, res.text).to.equal(201);
      expect(res.body.spec).to.include({ serviceAccountName: 'default', priority: 0 });
      expect(res.body.spec.volumes.some((v: any) => v.name.startsWith('svc-api-access-'))).to.equal(true);
      expect(res.body.spec.tolerations).to.have.length(2);
      expect((await c.request('GET', `${PODS}/dry-pod`)).status).to.equal(404);
      expectForbidden(await create(pod('dry-refused', { serviceAccountName: 'ghost' }), '?dryRun=All'),
        `pods "dry-refused" is forbidden: error looking up service account ${NS}/ghost: serviceaccount "ghost" not found`);
    });

    it('--disable-admission-plugins turns each off', async () => {
      flags.admission.push('--disable-admission-plugins=ServiceAccount,LimitRanger,DefaultTolerationSeconds,Priority,RuntimeClass');
      await c.kill('admission', 'SIGTERM');
      await c.startService('admission');
      const res = await createUntil((i) => pod(`off-${i}`, { serviceAccountName: 'ghost', runtimeClassName: 'kata', priorityClassName: 'nope' }), (r) => r.status === 201);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.spec).to.not.have.any.keys('volumes', 'tolerations', 'priority');
    });
  });
});
