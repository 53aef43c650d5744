// The controllers of service accounts, the root CA, legacy tokens and TTL after
// finished, over HTTPS against one cluster; each controller acting as its own
// service account (refused once dropped from its role binding); then leader election with a second
// controller-manager: only the Lease holder acts, and a killed leader is replaced
// within the lease duration. Leases are shortened with the flags.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Cluster, waitFor } from '../lib/cluster.js';
import { serviceNodeArgs } from '../../internal/config/services.js';
import { pkiPaths } from '../../internal/pki/index.js';

const LEASE_FLAGS = ['--leader-elect-lease-duration=6s', '--leader-elect-renew-deadline=4s', '--leader-elect-retry-period=1s', '--controllers=*,root-ca-cert-publisher'];
const LEASE_MS = 6000;
const LEASE = '/apis/coordination.svc.io/v1/namespaces/svc-system/leases/svc-controller-manager';
const NS = 'ctl-a';
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('controllers: service accounts, root CA, tokens, TTL after finished, leader election', function () {
  this.timeout(120_000);
  let c: Cluster;
  let ca: string;
  before(async () => {
    c = await new Cluster({ flags: { 'controller-manager': LEASE_FLAGS } }).start();
    ca = readFileSync(pkiPaths(c.dataDir).caCert, 'utf8');
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).to.equal(201);
  });
  after(async () => c?.stop());

  const get = (path: string) => c.request('GET', path);
  const gone = (path: string, ms = 15_000) => waitFor(async () => (await get(path)).status === 404, ms, 100);

  describe('service accounts and the root CA', () => {
    const sa = `/api/v1/namespaces/${NS}/serviceaccounts/default`;
    const cm = `/api/v1/namespaces/${NS}/configmaps/svc-root-ca.crt`;

    it('a new namespace gets the default ServiceAccount and the root-CA ConfigMap', async () => {
      expect(await waitFor(async () => (await get(sa)).status === 200, 15_000), 'default ServiceAccount').to.equal(true);
      expect(await waitFor(async () => (await get(cm)).body?.data?.['ca.crt'] === ca, 15_000), 'svc-root-ca.crt').to.equal(true);
      expect((await get(cm)).body.metadata.annotations['svc.io/description']).to.match(/CA bundle/);
    });

    it('a deleted default ServiceAccount comes back, as a new object', async () => {
      const before = (await get(sa)).body.metadata.uid;
      expect((await c.request('DELETE', sa)).status).to.equal(200);
      expect(await waitFor(async () => { const r = await get(sa); return r.status === 200 && r.body.metadata.uid !== before; }, 15_000)).to.equal(true);
    });

    it('an edited root-CA ConfigMap is put back, a deleted one is created again', async () => {
      const current = (await get(cm)).body;
      expect((await c.request('PUT', cm, { body: { ...current, data: { 'ca.crt': 'forged' } } })).status).to.equal(200);
      expect(await waitFor(async () => (await get(cm)).body?.data?.['ca.crt'] === ca, 15_000), 'restored').to.equal(true);
      expect((await c.request('DELETE', cm)).status).to.equal(200);
      expect(await waitFor(async () => (await get(cm)).body?.data?.['ca.crt'] === ca, 15_000), 'recreated').to.equal(true);
    });
  });

  describe('legacy token Secrets', () => {
    const secrets = `/api/v1/namespaces/${NS}/secrets`;
    const tokenSecret = (name: string, account: string) => ({
      metadata: { name, annotations: { 'svc.io/service-account.name': account } }, type: 'svc.io/service-account-token',
    });

    it('are filled with a token that authenticates as the account, the CA and the namespace', async () => {
      expect(await waitFor(async () => (await get(`/api/v1/namespaces/${NS}/serviceaccounts/default`)).status === 200, 15_000)).to.equal(true);
      expect((await c.request('POST', secrets, { body: tokenSecret('legacy', 'default') })).status).to.equal(201);
      let secret: any;
      expect(await waitFor(async () => Boolean((secret = (await get(`${secrets}/legacy`)).body)?.data?.token), 15_000), 'token filled').to.equal(true);
      expect(secret.data['ca.crt']).to.equal(b64(ca));
      expect(secret.data.namespace).to.equal(b64(NS));
      const account = (await get(`/api/v1/namespaces/${NS}/serviceaccounts/default`)).body;
      expect(secret.metadata.annotations['svc.io/service-account.uid']).to.equal(account.metadata.uid);
      const token = Buffer.from(secret.data.token, 'base64').toString('utf8');
      const review = await c.request('POST', '/apis/authentication.svc.io/v1/selfsubjectreviews', {
        anonymous: true, headers: { Authorization: `Bearer ${token}` }, body: { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' },
      });
      expect(review.status, review.text).to.equal(201);
      expect(review.body.status.userInfo.username).to.equal(`system:serviceaccount:${NS}:default`);
      expect(review.body.status.userInfo.groups).to.include(`system:serviceaccounts:${NS}`);
    });

    it('a token Secret naming no existing account is deleted', async () => {
      expect((await c.request('POST', secrets, { body: tokenSecret('orphan', 'nobody') })).status).to.equal(201);
      expect(await gone(`${secrets}/orphan`)).to.equal(true);
    });
  });

  describe('TTL after finished', () => {
    const jobs = `/apis/batch/v1/namespaces/${NS}/jobs`;
    const job = (name: string, ttl: number) => ({
      metadata: { name },
      spec: {
        ttlSecondsAfterFinished: ttl, managedBy: 'example.com/elsewhere',
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });
    /** Finishes a Job as its controller would: Complete, through the status subresource. */
    async function finish(name: string): Promise<number> {
      const current = (await get(`${jobs}/${name}`)).body;
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const status = {
        startTime: now, completionTime: now, succeeded: 1,
        conditions: [
          { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: now, lastProbeTime: now, reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' },
          { type: 'Complete', status: 'True', lastTransitionTime: now, lastProbeTime: now, reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' },
        ],
      };
      const res = await c.request('PUT', `${jobs}/${name}/status`, { body: { ...current, status } });
      expect(res.status, res.text).to.equal(200);
      return Date.parse(now);
    }

    it('a finished Job with ttlSecondsAfterFinished 0 is deleted at once, one with 2 after two seconds', async () => {
      for (const [name, ttl] of [['ttl-zero', 0], ['ttl-two', 2]] as const) expect((await c.request('POST', jobs, { body: job(name, ttl) })).status).to.equal(201);
      await finish('ttl-zero');
      const finishedTwo = await finish('ttl-two');
      expect(await gone(`${jobs}/ttl-zero`, 10_000), 'ttl 0').to.equal(true);
      expect(await gone(`${jobs}/ttl-two`, 15_000), 'ttl 2').to.equal(true);
      // Deleted no earlier than its finish (second precision) plus its TTL.
      expect(Date.now()).to.be.at.least(finishedTwo + 2000);
    });

    it('the TTL is read afresh: shortened after the Job finished, it applies', async () => {
      expect((await c.request('POST', jobs, { body: job('ttl-later', 3600) })).status).to.equal(201);
      await finish('ttl-later');
      const patch = await c.request('PATCH', `${jobs}/ttl-later`, { body: { spec: { ttlSecondsAfterFinished: 0 } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
      expect(patch.status, patch.text).to.equal(200);
      expect(await gone(`${jobs}/ttl-later`, 10_000)).to.equal(true);
    });
  });

  describe('each controller acts as its own service account', () => {
    const binding = '/apis/rbac.authorization.svc.io/v1/clusterrolebindings/system:controller:job-controller';
    const account = { kind: 'ServiceAccount', name: 'job-controller', namespace: 'svc-system' };
    const jobs = `/apis/batch/v1/namespaces/${NS}/jobs`;
    const podsOf = async (name: string) => (await get(`/api/v1/namespaces/${NS}/pods?labelSelector=job-name%3D${name}`)).body.items as any[];

    it('its account in svc-system is made; dropped from its role binding, only it is refused, as that account; restored, it acts again', async () => {
      const original = (await get(binding)).body;
      expect(original.subjects).to.deep.include(account);
      // The controller-manager itself stays bound: a controller acting as it would go on.
      const kept = original.subjects.filter((s: any) => s.kind !== 'ServiceAccount');
      expect(kept).to.deep.equal([{ apiGroup: 'rbac.authorization.svc.io', kind: 'User', name: 'system:kube-controller-manager' }]);
      const put = await c.request('PUT', binding, { body: { ...original, subjects: kept } });
      expect(put.status, put.text).to.equal(200);
      try {
        const job = { metadata: { name: 'ident' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } };
        expect((await c.request('POST', jobs, { body: job })).status).to.equal(201);
        const refusal = `User "system:serviceaccount:svc-system:job-controller" cannot create resource "pods" in API group "" in the namespace "${NS}"`;
        const log = () => c.logs.get('controller-manager')!.join('');
        expect(await waitFor(async () => log().includes(refusal), 15_000), log().slice(-2000)).to.equal(true);
        expect(await podsOf('ident')).to.deep.equal([]);
        // The other controllers go on, each as its own account.
        expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'ctl-id' } } })).status).to.equal(201);
        expect(await waitFor(async () => (await get('/api/v1/namespaces/ctl-id/serviceaccounts/default')).status === 200, 15_000)).to.equal(true);
        for (const name of ['job-controller', 'service-account-controller']) expect((await get(`/api/v1/namespaces/svc-system/serviceaccounts/${name}`)).status, name).to.equal(200);
      } finally {
        const current = (await get(binding)).body;
        expect((await c.request('PUT', binding, { body: { ...current, subjects: original.subjects } })).status).to.equal(200);
      }
      expect(await waitFor(async () => (await podsOf('ident')).length === 1, 20_000), 'a pod once the binding is back').to.equal(true);
    });
  });

  describe('leader election', () => {
    let standby: ChildProcess | undefined;
    let standbyLog = '';
    after(() => { standby?.kill('SIGKILL'); });

    const holder = async () => (await get(LEASE)).body?.spec?.holderIdentity as string | undefined;
    const identityIn = (log: string) => /attempting to acquire leader lease \S+ as (\S+)/.exec(log)?.[1];

    it('the controller-manager holds the Lease and says so in an Event', async () => {
      const leader = identityIn(c.logs.get('controller-manager')!.join(''));
      expect(leader).to.be.a('string');
      const lease = (await get(LEASE)).body;
      expect(lease.spec).to.include({ holderIdentity: leader, leaseDurationSeconds: 6 });
      const selector = encodeURIComponent('regarding.name=svc-controller-manager,reason=LeaderElection');
      expect(await waitFor(async () => (await get(`/apis/events.svc.io/v1/namespaces/svc-system/events?fieldSelector=${selector}`)).body?.items
        ?.some((e: any) => e.note === `${leader} became leader` && e.reportingController === 'svc-controller-manager' && e.regarding.kind === 'Lease'), 10_000)).to.equal(true);
    });

    it('a second controller-manager stands by; the leader killed, it takes over within the lease duration and acts', async () => {
      const entry = fileURLToPath(new URL('../../cmd/controller-manager/main.js', import.meta.url));
      standby = spawn(process.execPath, [...serviceNodeArgs('controller-manager'), entry, `--server=https://127.0.0.1:${c.port}`, `--data-dir=${c.dataDir}`, ...LEASE_FLAGS], { stdio: ['ignore', 'pipe', 'pipe'] });
      standby.stdout!.on('data', (d) => { standbyLog += String(d); });
      standby.stderr!.on('data', (d) => { standbyLog += String(d); });
      expect(await waitFor(() => standbyLog.includes('standing by'), 15_000), standbyLog).to.equal(true);
      const leader = await holder();
      const second = identityIn(standbyLog);
      expect(leader).to.not.equal(second);
      expect(standbyLog).to.not.include('controller-manager running');
      // Only the leader acts: the standby has started no controller while the leader runs.
      const killedAt = Date.now();
      await c.kill('controller-manager', 'SIGKILL');
      expect(await waitFor(async () => (await holder()) === second, LEASE_MS + 6000, 100), standbyLog).to.equal(true);
      // The standby saw the last renewal at most a retry period before the kill: it waits out the lease, then a retry period at most.
      expect(Date.now() - killedAt).to.be.below(LEASE_MS + 2 * 1200 + 1500);
      expect(await waitFor(() => standbyLog.includes('controller-manager running'), 15_000), standbyLog).to.equal(true);
      expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'ctl-b' } } })).status).to.equal(201);
      expect(await waitFor(async () => (await get('/api/v1/namespaces/ctl-b/serviceaccounts/default')).status === 200, 15_000)).to.equal(true);
      const lease = (await get(LEASE)).body.spec;
      expect(lease.leaseTransitions).to.be.at.least(1);
    });
  });
});
