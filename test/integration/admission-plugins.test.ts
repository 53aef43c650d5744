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
  before(async () => { c = await new Cluster({ withoutControllerManager: true }).start(); });
  after(async () => { await c?.stop(); });

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
});
