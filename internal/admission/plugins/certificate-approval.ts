// CertificateApproval: approving or denying a CertificateSigningRequest (its
// `approval` sub-resource) needs `approve` on the `signers` resource for the
// request's signer, as stored: a change of signerName in the same write does
// not count.
import { forbiddenRequest } from '../errors.js';
import type { Authorize } from '../authz-client.js';
import type { AdmissionPlugin, AdmissionRequest, Operation } from '../types.js';
import { authorizedForSigner, onSigningRequests, signerNameOf } from './certificate-signers.js';

export const CERTIFICATE_APPROVAL = 'CertificateApproval';

export class CertificateApproval implements AdmissionPlugin {
  readonly name = CERTIFICATE_APPROVAL;
  readonly phase = 'validating' as const;

  constructor(private readonly authorize: Authorize) {}

  handles(operation: Operation): boolean {
    return operation === 'UPDATE';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    if (!onSigningRequests(request, 'approval')) return;
    const signer = signerNameOf(request.oldObject);
    if (await authorizedForSigner(this.authorize, request.user, 'approve', signer)) return;
    throw forbiddenRequest(request, `user not permitted to approve requests with signerName ${JSON.stringify(signer)}`);
  }
}
