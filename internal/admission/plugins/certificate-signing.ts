// CertificateSigning: writing a CertificateSigningRequest's status (the issued
// certificate or the conditions) needs `sign` on the `signers` resource for the
// request's stored signer. A status write that changes neither passes.
import { isDeepStrictEqual } from 'node:util';
import { forbiddenRequest } from '../errors.js';
import type { Authorize } from '../authz-client.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject, Operation } from '../types.js';
import { authorizedForSigner, onSigningRequests, signerNameOf } from './certificate-signers.js';

export const CERTIFICATE_SIGNING = 'CertificateSigning';

const statusOf = (csr: JsonObject | undefined): { certificate?: unknown; conditions?: unknown[] } => (csr?.status ?? {}) as never;

/** Whether the write changes the certificate or the conditions (an empty list the same as none). */
function signs(request: AdmissionRequest): boolean {
  const before = statusOf(request.oldObject);
  const after = statusOf(request.object);
  const conditions = (s: typeof before) => (s.conditions?.length ? s.conditions : undefined);
  return (before.certificate || undefined) !== (after.certificate || undefined) || !isDeepStrictEqual(conditions(before), conditions(after));
}

export class CertificateSigning implements AdmissionPlugin {
  readonly name = CERTIFICATE_SIGNING;
  readonly phase = 'validating' as const;

  constructor(private readonly authorize: Authorize) {}

  handles(operation: Operation): boolean {
    return operation === 'UPDATE';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    if (!onSigningRequests(request, 'status') || !signs(request)) return;
    const signer = signerNameOf(request.oldObject);
    if (await authorizedForSigner(this.authorize, request.user, 'sign', signer)) return;
    throw forbiddenRequest(request, `user not permitted to sign requests with signerName ${JSON.stringify(signer)}`);
  }
}
