// The Admit RPC over an admission chain.
import { api, grpc, RpcError, type Handlers } from '../rpc/index.js';
import type { AdmitRequest__Output as AdmitRequest } from '../rpc/gen/svc/admission/v1/AdmitRequest.js';
import type { AdmitResponse } from '../rpc/gen/svc/admission/v1/AdmitResponse.js';
import type { AdmissionChain } from './chain.js';
import type { AdmissionRequest, JsonObject } from './types.js';

const NO_USER = { username: '', uid: '', groups: [], extra: {} };

function json(field: string, bytes: Buffer | undefined): JsonObject | undefined {
  if (!bytes || bytes.length === 0) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8')) as JsonObject;
  } catch (err) {
    throw new RpcError(grpc.status.INVALID_ARGUMENT, `${field} is not JSON: ${(err as Error).message}`);
  }
}

const NO_KIND = { group: '', version: '', kind: '' };
const NO_RESOURCE = { group: '', version: '', resource: '' };

export function admissionRequestOf(request: AdmitRequest): AdmissionRequest {
  const kind = request.kind ?? NO_KIND;
  const resource = request.resource ?? NO_RESOURCE;
  return {
    uid: request.uid,
    kind, resource,
    subresource: request.subresource,
    // A caller that does not tell what the client asked for asked for the object's own version.
    requestKind: request.requestKind?.kind ? request.requestKind : kind,
    requestResource: request.requestResource?.resource ? request.requestResource : resource,
    requestSubResource: request.requestResource?.resource ? request.requestSubResource : request.subresource,
    name: request.name,
    namespace: request.namespace,
    operation: request.operation,
    user: request.user ?? NO_USER,
    object: json('object', request.object),
    oldObject: json('old_object', request.oldObject),
    dryRun: request.dryRun,
    options: json('options', request.options),
  };
}

/** The Admit handler over a chain. */
export function admitHandler(chain: AdmissionChain) {
  return async (request: AdmitRequest): Promise<AdmitResponse> => {
    const outcome = await chain.admit(admissionRequestOf(request));
    const { warnings, auditAnnotations } = outcome;
    if (!outcome.allowed) {
      const { code, reason, message, causes } = outcome;
      return { allowed: false, code, reason, message, causes, warnings, auditAnnotations };
    }
    const object = outcome.object ? Buffer.from(JSON.stringify(outcome.object)) : Buffer.alloc(0);
    return { allowed: true, object, code: 0, reason: '', message: '', causes: [], warnings, auditAnnotations };
  };
}

export const ADMISSION_SERVICE_NAME = 'svc.admission.v1.Admission';

/** The service entry for serve(). */
export function admissionService(chain: AdmissionChain) {
  const handlers: Handlers = { Admit: admitHandler(chain) };
  return { name: ADMISSION_SERVICE_NAME, definition: api.svc.admission.v1.Admission.service, handlers };
}
