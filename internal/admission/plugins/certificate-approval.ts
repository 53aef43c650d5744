// CertificateApproval: approving or denying a CertificateSigningRequest (its
// `approval` sub-resource) needs `approve` on the `signers` resource for the
// request's signer, as stored.
import type { Authorize } from '../authz-client.js';
import { SignerPermission } from './certificate-signers.js';

export const CERTIFICATE_APPROVAL = 'CertificateApproval';

export const certificateApproval = (authorize: Authorize): SignerPermission =>
  new SignerPermission(CERTIFICATE_APPROVAL, authorize, 'approval', 'approve');
