// CertificateSubjectRestriction: a CertificateSigningRequest for the API
// server's client signer may not ask for the `system:masters` group (an
// organization of its subject): whoever could approve it would mint a
// credential that no authorizer can refuse.
import { GROUP_MASTERS, KUBE_APISERVER_CLIENT_SIGNER, isWellKnown } from '../../names/index.js';
import { forbiddenRequest } from '../errors.js';
import type { AdmissionPlugin, AdmissionRequest, Operation } from '../types.js';
import { onSigningRequests, signerNameOf } from './certificate-signers.js';

export const CERTIFICATE_SUBJECT_RESTRICTION = 'CertificateSubjectRestriction';

/** The organizations of the request's subject; throws when it is not a PEM certificate request. The certificate
 * library is loaded at the first such request: few admission processes ever see one. */
async function organizations(request: unknown): Promise<string[]> {
  const pem = Buffer.from(String(request ?? ''), 'base64').toString('utf8');
  if (!pem.includes('-----BEGIN CERTIFICATE REQUEST-----')) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  await import('reflect-metadata');
  const x509 = await import('@peculiar/x509');
  return new x509.Pkcs10CertificateRequest(pem).subjectName.getField('O');
}

export class CertificateSubjectRestriction implements AdmissionPlugin {
  readonly name = CERTIFICATE_SUBJECT_RESTRICTION;
  readonly phase = 'validating' as const;

  handles(operation: Operation): boolean {
    return operation === 'CREATE';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    if (!onSigningRequests(request, '')) return;
    const signer = signerNameOf(request.object);
    if (!isWellKnown(signer, KUBE_APISERVER_CLIENT_SIGNER)) return;
    let groups: string[];
    try {
      groups = await organizations((request.object?.spec as { request?: unknown } | undefined)?.request);
    } catch (err) {
      throw forbiddenRequest(request, `failed to parse CSR: ${(err as Error).message}`);
    }
    if (groups.includes(GROUP_MASTERS)) {
      throw forbiddenRequest(request, `use of ${signer} signer with ${GROUP_MASTERS} group is not allowed`);
    }
  }
}
