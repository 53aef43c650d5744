// CertificateSigning: writing a CertificateSigningRequest's status (the issued
// certificate or the conditions) needs `sign` on the `signers` resource for the
// request's stored signer. A status write that changes neither passes.
import { isDeepStrictEqual } from 'node:util';
import type { Authorize } from '../authz-client.js';
import type { AdmissionRequest, JsonObject } from '../types.js';
import { SignerPermission } from './certificate-signers.js';

export const CERTIFICATE_SIGNING = 'CertificateSigning';

const statusOf = (csr: JsonObject | undefined): { certificate?: unknown; conditions?: unknown[] } => (csr?.status ?? {}) as never;

/** Whether the write changes the certificate or the conditions (an empty list the same as none). */
function signs(request: AdmissionRequest): boolean {
  const before = statusOf(request.oldObject);
  const after = statusOf(request.object);
  const conditions = (s: typeof before) => (s.conditions?.length ? s.conditions : undefined);
  return (before.certificate || undefined) !== (after.certificate || undefined) || !isDeepStrictEqual(conditions(before), conditions(after));
}

export const certificateSigning = (authorize: Authorize): SignerPermission =>
  new SignerPermission(CERTIFICATE_SIGNING, authorize, 'status', 'sign', signs);
