// The built-in admission plugins of the cluster kinds through HTTPS, on one
// cluster: each with a write it admits and one it refuses or changes, the
// certificate plugins with users granted and not granted the signer verbs (the
// admission service asks the authorization service), and the plugins that are
// off by default switched on by --enable-admission-plugins.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import { expect } from 'chai';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';

x509.cryptoProvider.set(webcrypto);

const RBAC = '/apis/rbac.authorization.svc.io/v1';
const CSRS = '/apis/certificates.svc.io/v1/certificatesigningrequests';

/** A PEM certificate request for `subject` (e.g. `CN=jane, O=devs`), base64 as spec.request holds it. */
async function certificateRequest(subject: string): Promise<string> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys, signingAlgorithm: algorithm });
  return Buffer.from(csr.toString('pem')).toString('base64');
}

describe('admission plugins', function () {
  this.timeout(180_000);
  let c: Cluster;
  /** The admission service's flags, changed between restarts of that one service. */
  const flags: { admission: string[] } = { admission: [] };
  before(async () => { c = await new Cluster({ flags }).start(); });
  after(async () => { await c?.stop(); });

  /** Restarts the admission service alone with `args`. */
  const restartAdmission = async (...args: string[]) => {
    flags.admission = args;
    await c.kill('admission', 'SIGTERM');
    await c.startService('admission');
  };

  const as = (user: string, method: string, path: string, body?: unknown): Promise<Response> =>
    c.request(method, path, { body, headers: { 'Impersonate-User': user } });
  const admin = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const res = await c.request(method, path, { body });
    expect(res.status, `${method} ${path}: ${res.text}`).to.be.oneOf([200, 201]);
    return res;
  };
  /** A ClusterRole of `rules` bound to `user`. */
  const grant = async (user: string, rules: unknown[]) => {
    await admin('POST', `${RBAC}/clusterroles`, { metadata: { name: `grant-${user}` }, rules });
    await admin('POST', `${RBAC}/clusterrolebindings`, {
      metadata: { name: `grant-${user}` }, roleRef: { apiGroup: 'rbac.authorization.svc.io', kind: 'ClusterRole', name: `grant-${user}` },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.svc.io', name: user }],
    });
  };
  const expectForbidden = (res: Response, message: string) => {
    expect(res.status, res.text).to.equal(403);
    expect(res.body).to.deep.include({ kind: 'Status', reason: 'Forbidden', code: 403, message });
  };

  describe('certificate signing requests', () => {
    const APPROVAL_RULE = { apiGroups: ['certificates.svc.io'], resources: ['certificatesigningrequests/approval'], verbs: ['update'] };
    const STATUS_RULE = { apiGroups: ['certificates.svc.io'], resources: ['certificatesigningrequests/status'], verbs: ['update'] };
    const signers = (verb: string, names: string[]) => ({ apiGroups: ['certificates.svc.io'], resources: ['signers'], resourceNames: names, verbs: [verb] });
    const csr = async (name: string, signerName: string, subject = `CN=${name}`) =>
      ({ metadata: { name }, spec: { request: await certificateRequest(subject), signerName, usages: ['client auth'] } });
    /** Writes without a resourceVersion: each attempt applies to what is stored then. */
    const unconditional = (stored: any) => ({ ...stored, metadata: { ...stored.metadata, resourceVersion: undefined } });
    const approve = (user: string, stored: any) => as(user, 'PUT', `${CSRS}/${stored.metadata.name}/approval`, {
      ...unconditional(stored), status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok' }] },
    });
    const issue = (user: string, stored: any) => as(user, 'PUT', `${CSRS}/${stored.metadata.name}/status`, {
      ...unconditional(stored), status: { ...stored.status, certificate: Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64') },
    });

    before(async () => {
      await grant('approver', [APPROVAL_RULE, signers('approve', ['example.com/one'])]);
      await grant('domain-approver', [APPROVAL_RULE, signers('approve', ['example.com/*'])]);
      await grant('no-approver', [APPROVAL_RULE]);
      await grant('signer', [STATUS_RULE, signers('sign', ['example.com/one'])]);
      await grant('no-signer', [STATUS_RULE, signers('sign', ['example.com/other'])]);
    });

    it('CertificateApproval: approving needs approve on the signer, by name or by its domain\'s wildcard', async () => {
      const one = (await admin('POST', CSRS, await csr('approve-one', 'example.com/one'))).body;
      const two = (await admin('POST', CSRS, await csr('approve-two', 'example.com/two'))).body;
      // The bindings reach the authorizer through its change stream: the granted user is admitted once they have.
      expect(await waitFor(async () => (await approve('approver', one)).status === 200, 10_000)).to.equal(true);
      expectForbidden(await approve('no-approver', one),
        'certificatesigningrequests.certificates.svc.io "approve-one" is forbidden: user not permitted to approve requests with signerName "example.com/one"');
      expectForbidden(await approve('approver', two),
        'certificatesigningrequests.certificates.svc.io "approve-two" is forbidden: user not permitted to approve requests with signerName "example.com/two"');
      const byDomain = await approve('domain-approver', two);
      expect(byDomain.status, byDomain.text).to.equal(200);
      expect(byDomain.body.status.conditions[0]).to.include({ type: 'Approved', status: 'True' });
    });

    it('CertificateSigning: issuing the certificate needs sign on the signer; other status writes pass', async () => {
      const stored = (await admin('POST', CSRS, await csr('sign-one', 'example.com/one'))).body;
      expect(await waitFor(async () => (await issue('signer', stored)).status === 200, 10_000)).to.equal(true);
      const fresh = (await admin('POST', CSRS, await csr('sign-two', 'example.com/one'))).body;
      expectForbidden(await issue('no-signer', fresh),
        'certificatesigningrequests.certificates.svc.io "sign-two" is forbidden: user not permitted to sign requests with signerName "example.com/one"');
      // A status write that changes neither the certificate nor the conditions is not signing.
      const unchanged = await as('no-signer', 'PUT', `${CSRS}/sign-two/status`, fresh);
      expect(unchanged.status, unchanged.text).to.equal(200);
    });

    it('CertificateSubjectRestriction: no system:masters through the API server\'s client signer', async () => {
      for (const signer of ['svc.io/kube-apiserver-client', 'kubernetes.io/kube-apiserver-client']) {
        const masters = await c.request('POST', CSRS, { body: await csr(`masters-${signer.split('/')[0]}`, signer, 'CN=mallory, O=system:masters') });
        expectForbidden(masters, `certificatesigningrequests.certificates.svc.io "masters-${signer.split('/')[0]}" is forbidden: use of ${signer} signer with system:masters group is not allowed`);
      }
      const devs = await c.request('POST', CSRS, { body: await csr('devs', 'svc.io/kube-apiserver-client', 'CN=jane, O=devs') });
      expect(devs.status, devs.text).to.equal(201);
      const elsewhere = await c.request('POST', CSRS, { body: await csr('masters-elsewhere', 'example.com/one', 'CN=mallory, O=system:masters') });
      expect(elsewhere.status, elsewhere.text).to.equal(201);
    });
  });
  describe('classes, nodes and storage', () => {
    const CLAIMS = '/api/v1/namespaces/default/persistentvolumeclaims';
    const CLASSES = '/apis/storage.svc.io/v1/storageclasses';
    const INGRESSES = '/apis/networking.svc.io/v1/namespaces/default/ingresses';
    const INGRESS_CLASSES = '/apis/networking.svc.io/v1/ingressclasses';
    const claim = (name: string, spec: Record<string, unknown> = {}) =>
      ({ metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec } });
    const ingress = (name: string, spec: Record<string, unknown> = {}, annotations?: Record<string, string>) =>
      ({ metadata: { name, annotations }, spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } }, ...spec } });
    /** What a create would store, by dry run (admission runs; nothing is kept). */
    const dryRun = async (path: string, body: unknown) => {
      const res = await c.request('POST', `${path}?dryRun=All`, { body });
      expect(res.status, res.text).to.equal(201);
      return res.body;
    };

    it('DefaultStorageClass: a claim without a class gets the default one, the newest of several; a class asked for (even "") is kept', async () => {
      expect((await dryRun(CLAIMS, claim('before'))).spec.storageClassName).to.equal(undefined);
      await admin('POST', CLASSES, { metadata: { name: 'sc-plain' }, provisioner: 'example.com/x' });
      await admin('POST', CLASSES, { metadata: { name: 'sc-old', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } }, provisioner: 'example.com/x' });
      expect(await waitFor(async () => (await dryRun(CLAIMS, claim('one'))).spec.storageClassName === 'sc-old', 10_000)).to.equal(true);
      // Created later (or in the same second, first by name): the newest default wins.
      await admin('POST', CLASSES, { metadata: { name: 'sc-new', annotations: { 'storageclass.svc.io/is-default-class': 'true' } }, provisioner: 'example.com/x' });
      expect(await waitFor(async () => (await dryRun(CLAIMS, claim('two'))).spec.storageClassName === 'sc-new', 10_000)).to.equal(true);
      const created = await admin('POST', CLAIMS, claim('defaulted'));
      expect(created.body.spec.storageClassName).to.equal('sc-new');
      expect((await dryRun(CLAIMS, claim('chosen', { storageClassName: 'sc-plain' }))).spec.storageClassName).to.equal('sc-plain');
      expect((await dryRun(CLAIMS, claim('none', { storageClassName: '' }))).spec.storageClassName).to.equal('');
      const annotated = await dryRun(CLAIMS, { ...claim('beta'), metadata: { name: 'beta', annotations: { 'volume.beta.kubernetes.io/storage-class': 'sc-plain' } } });
      expect(annotated.spec.storageClassName).to.equal(undefined);
    });

    it('DefaultIngressClass: an Ingress without a class gets the default one; a class asked for is kept', async () => {
      expect((await dryRun(INGRESSES, ingress('before'))).spec.ingressClassName).to.equal(undefined);
      await admin('POST', INGRESS_CLASSES, { metadata: { name: 'ic-default', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } }, spec: { controller: 'example.com/ingress' } });
      expect(await waitFor(async () => (await dryRun(INGRESSES, ingress('one'))).spec.ingressClassName === 'ic-default', 10_000)).to.equal(true);
      expect((await dryRun(INGRESSES, ingress('chosen', { ingressClassName: 'other' }))).spec.ingressClassName).to.equal('other');
      expect((await dryRun(INGRESSES, ingress('annotated', {}, { 'kubernetes.io/ingress.class': 'nginx' }))).spec.ingressClassName).to.equal(undefined);
    });

    it('TaintNodesByCondition: a new node gets the not-ready NoSchedule taint once', async () => {
      const plain = await admin('POST', '/api/v1/nodes', { metadata: { name: 'taint-plain' } });
      expect(plain.body.spec.taints).to.deep.equal([{ key: 'node.svc.io/not-ready', effect: 'NoSchedule' }]);
      const tainted = await admin('POST', '/api/v1/nodes', { metadata: { name: 'taint-given' }, spec: { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] } });
      expect(tainted.body.spec.taints).to.deep.equal([{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
      // Only creates: an update that drops the taint keeps it dropped.
      const updated = await admin('PUT', '/api/v1/nodes/taint-plain', { ...plain.body, spec: { ...plain.body.spec, taints: [] } });
      expect(updated.body.spec.taints ?? []).to.deep.equal([]);
    });

    it('StorageObjectInUseProtection: a claim is kept while a pod uses it and a volume while it is bound', async () => {
      const pvc = await admin('POST', CLAIMS, claim('protected', { storageClassName: '' }));
      expect(pvc.body.metadata.finalizers).to.deep.equal(['svc.io/pvc-protection']);
      await admin('POST', '/api/v1/namespaces/default/pods', {
        metadata: { name: 'user' }, spec: { nodeName: 'taint-plain', containers: [{ name: 'c', image: 'busybox' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'protected' } }] },
      });
      const deleting = await admin('DELETE', `${CLAIMS}/protected`);
      expect(deleting.body.metadata.deletionTimestamp).to.be.a('string');
      expect((await c.request('GET', `${CLAIMS}/protected`)).status).to.equal(200);
      await admin('DELETE', '/api/v1/namespaces/default/pods/user?gracePeriodSeconds=0');
      expect(await waitFor(async () => (await c.request('GET', `${CLAIMS}/protected`)).status === 404, 15_000)).to.equal(true);

      const pv = await admin('POST', '/api/v1/persistentvolumes', { metadata: { name: 'pv-protected' }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/pv' } } });
      expect(pv.body.metadata.finalizers).to.deep.equal(['svc.io/pv-protection']);
      const bound = await admin('PUT', '/api/v1/persistentvolumes/pv-protected/status', { ...pv.body, status: { phase: 'Bound' } });
      await admin('DELETE', '/api/v1/persistentvolumes/pv-protected');
      expect((await c.request('GET', '/api/v1/persistentvolumes/pv-protected')).status).to.equal(200);
      const current = (await admin('GET', '/api/v1/persistentvolumes/pv-protected')).body;
      await admin('PUT', '/api/v1/persistentvolumes/pv-protected/status', { ...current, status: { ...bound.body.status, phase: 'Released' } });
      expect(await waitFor(async () => (await c.request('GET', '/api/v1/persistentvolumes/pv-protected')).status === 404, 15_000)).to.equal(true);
    });

    it('PersistentVolumeClaimResize: a bound claim grows only when its class allows expansion', async () => {
      await admin('POST', CLASSES, { metadata: { name: 'sc-grow' }, provisioner: 'example.com/x', allowVolumeExpansion: true });
      const grow = (name: string) => async () => {
        const stored = (await admin('GET', `${CLAIMS}/${name}`)).body;
        return c.request('PUT', `${CLAIMS}/${name}`, { body: { ...stored, spec: { ...stored.spec, resources: { requests: { storage: '2Gi' } } } } });
      };
      const bind = async (name: string) => {
        const stored = (await admin('GET', `${CLAIMS}/${name}`)).body;
        await admin('PUT', `${CLAIMS}/${name}/status`, { ...stored, status: { phase: 'Bound', capacity: { storage: '1Gi' } } });
      };
      await admin('POST', CLAIMS, claim('growing', { storageClassName: 'sc-grow', volumeName: 'pv-grow' }));
      await bind('growing');
      expect(await waitFor(async () => (await grow('growing')()).status === 200, 10_000)).to.equal(true);
      await admin('POST', CLAIMS, claim('fixed', { storageClassName: 'sc-plain', volumeName: 'pv-fixed' }));
      await bind('fixed');
      expectForbidden(await grow('fixed')(),
        'persistentvolumeclaims "fixed" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    });
  });

  describe('plugins off by default, switched on by the flags', () => {
    const SERVICES = '/api/v1/namespaces/default/services';
    const service = (name: string, externalIPs?: string[]) => ({ metadata: { name }, spec: { ports: [{ port: 80 }], ...(externalIPs ? { externalIPs } : {}) } });
    const pod = (name: string) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox', imagePullPolicy: 'IfNotPresent' }], initContainers: [{ name: 'i', image: 'busybox', imagePullPolicy: 'Never' }] } });

    it('are off: external IPs, pull policies and missing namespaces pass as sent', async () => {
      expect((await admin('POST', SERVICES, service('ext-before', ['192.0.2.10']))).body.spec.externalIPs).to.deep.equal(['192.0.2.10']);
      const created = await admin('POST', '/api/v1/namespaces/default/pods', pod('pull-before'));
      expect(created.body.spec.containers[0].imagePullPolicy).to.equal('IfNotPresent');
      expect((await c.request('POST', '/api/v1/namespaces/nowhere/configmaps', { body: { metadata: { name: 'x' } } })).status).to.equal(404);
    });

    it('AlwaysAdmit, NamespaceAutoProvision, AlwaysPullImages and DenyServiceExternalIPs', async () => {
      await restartAdmission('--enable-admission-plugins=AlwaysAdmit,NamespaceAutoProvision,AlwaysPullImages,DenyServiceExternalIPs');
      const provisioned = await c.request('POST', '/api/v1/namespaces/provisioned/configmaps', { body: { metadata: { name: 'x' } } });
      expect(provisioned.status, provisioned.text).to.equal(201);
      expect((await admin('GET', '/api/v1/namespaces/provisioned')).body.status.phase).to.equal('Active');
      expect((await c.request('POST', '/api/v1/namespaces/dry/configmaps?dryRun=All', { body: { metadata: { name: 'x' } } })).status).to.equal(404);

      const created = await admin('POST', '/api/v1/namespaces/default/pods', pod('pull-always'));
      expect(created.body.spec.containers[0].imagePullPolicy).to.equal('Always');
      expect(created.body.spec.initContainers[0].imagePullPolicy).to.equal('Always');

      expectForbidden(await c.request('POST', SERVICES, { body: service('ext', ['192.0.2.11']) }),
        'services "ext" is forbidden: use of external IPs is denied by admission control');
      // An update may keep the addresses the service has, not add one.
      const kept = (await admin('GET', `${SERVICES}/ext-before`)).body;
      expect((await c.request('PUT', `${SERVICES}/ext-before`, { body: { ...kept, metadata: { ...kept.metadata, labels: { a: 'b' } } } })).status).to.equal(200);
      const relabelled = (await admin('GET', `${SERVICES}/ext-before`)).body;
      expectForbidden(await c.request('PUT', `${SERVICES}/ext-before`, { body: { ...relabelled, spec: { ...relabelled.spec, externalIPs: ['192.0.2.10', '192.0.2.12'] } } }),
        'services "ext-before" is forbidden: use of external IPs is denied by admission control');
      expect((await admin('POST', SERVICES, service('ext-none'))).status).to.equal(201);
    });

    it('NamespaceExists refuses content of a namespace that does not exist', async () => {
      await restartAdmission('--enable-admission-plugins=NamespaceExists', '--disable-admission-plugins=NamespaceLifecycle');
      const res = await c.request('POST', '/api/v1/namespaces/missing/configmaps', { body: { metadata: { name: 'x' } } });
      expect(res.status, res.text).to.equal(404);
      expect(res.body).to.deep.include({ reason: 'NotFound', message: 'namespaces "missing" not found' });
      expect((await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'exists' } } })).status).to.equal(201);
    });

    it('AlwaysDeny refuses every write', async () => {
      await restartAdmission('--enable-admission-plugins=AlwaysDeny');
      expectForbidden(await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'denied' } } }),
        'configmaps "denied" is forbidden: admission control is denying all modifications');
      expect((await c.request('GET', '/api/v1/namespaces/default/configmaps')).status).to.equal(200);
    });
  });
});
