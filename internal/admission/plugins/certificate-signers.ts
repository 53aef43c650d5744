// What the certificate plugins share: whether a user may perform a verb
// (`approve`, `sign`) on the synthetic `signers` resource for a signer name, by
// the name itself or by its domain's wildcard (`example.com/*`), and the checks
// that a request is on CertificateSigningRequests.
import { group } from '../../names/index.js';
import type { Authorize } from '../authz-client.js';
import { forbiddenRequest } from '../errors.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject, Operation } from '../types.js';

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

/** A validating plugin: an update of one CertificateSigningRequest sub-resource that `applies` needs `verb`
 * on the request's stored signer (a change of signerName in the same write does not count). */
export class SignerPermission implements AdmissionPlugin {
  readonly phase = 'validating' as const;

  constructor(readonly name: string, private readonly authorize: Authorize, private readonly subresource: string,
    private readonly verb: string, private readonly applies: (request: AdmissionRequest) => boolean = () => true) {}

  handles(operation: Operation): boolean {
    return operation === 'UPDATE';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    if (!onSigningRequests(request, this.subresource) || !this.applies(request)) return;
    const signer = signerNameOf(request.oldObject);
    if (await authorizedForSigner(this.authorize, request.user, this.verb, signer)) return;
    throw forbiddenRequest(request, `user not permitted to ${this.verb} requests with signerName ${JSON.stringify(signer)}`);
  }
}
