// What the certificate plugins share: whether a user may perform a verb
// (`approve`, `sign`) on the synthetic `signers` resource for a signer name, by
// the name itself or by its domain's wildcard (`example.com/*`), and the checks
// that a request is on CertificateSigningRequests.
import { group } from '../../names/index.js';
import type { Authorize } from '../authz-client.js';
import type { AdmissionRequest, JsonObject } from '../types.js';

export const CERTIFICATES_GROUP = group('certificates');

/** A request on certificatesigningrequests (or one of its sub-resources, `subresource`). */
export const onSigningRequests = (request: AdmissionRequest, subresource: string): boolean =>
  request.resource.group === CERTIFICATES_GROUP && request.resource.resource === 'certificatesigningrequests' && request.subresource === subresource;

export const signerNameOf = (csr: JsonObject | undefined): string => String((csr?.spec as { signerName?: unknown } | undefined)?.signerName ?? '');

/** Whether the user may `verb` signers named `signer`, or every signer of its domain. Only ALLOW allows (an
 * evaluation error beside another decision is no); a service that cannot be asked fails the request. */
export async function authorizedForSigner(authorize: Authorize, user: AdmissionRequest['user'], verb: string, signer: string): Promise<boolean> {
  const domain = signer.split('/')[0];
  for (const name of [signer, `${domain}/*`]) {
    const resource = { verb, group: CERTIFICATES_GROUP, version: '*', resource: 'signers', name };
    const answer = await authorize(user, { resource });
    if (answer.decision === 'ALLOW') return true;
  }
  return false;
}
