// The Authorize RPC over an authorizer chain: the decision, how long it stays
// true, and the policy generation it was made at.
import { api, type Handlers } from '../rpc/index.js';
import type { AuthorizeRequest__Output as AuthorizeRequest } from '../rpc/gen/svc/authz/v1/AuthorizeRequest.js';
import type { AuthorizeResponse } from '../rpc/gen/svc/authz/v1/AuthorizeResponse.js';
import type { PolicyGeneration } from './generation.js';
import type { Attributes, Authorizer, UserInfo, Validity } from './types.js';

const NO_USER: UserInfo = { username: '', uid: '', groups: [], extra: {} };

export function attributesOf(request: AuthorizeRequest): Attributes {
  return {
    user: request.user ?? NO_USER,
    resource: request.resource ?? undefined,
    nonResource: request.nonResource ?? undefined,
  };
}

function validityFields(validity: Validity): Pick<AuthorizeResponse, 'validity' | 'ttlMs'> {
  if (typeof validity === 'object') return { validity: 'FOR_TTL', ttlMs: Math.max(0, Math.floor(validity.ttlMs)) };
  const names = { uncacheable: 'UNCACHEABLE', process: 'UNTIL_PROCESS_CHANGES', policy: 'UNTIL_POLICY_CHANGES' } as const;
  return { validity: names[validity], ttlMs: 0 };
}

/** The Authorize handler over an authorizer. */
export function authorizeHandler(authorizer: Authorizer, generation?: PolicyGeneration) {
  return async (request: AuthorizeRequest): Promise<AuthorizeResponse> => {
    // Read before deciding: a change during the decision makes it older than the newest generation, never newer.
    const at = generation?.current ?? '';
    const answer = await authorizer.authorize(attributesOf(request));
    return {
      decision: answer.decision, reason: answer.reason, evaluationError: answer.error ?? '',
      ...validityFields(generation ? answer.validity ?? 'policy' : 'uncacheable'), generation: at,
    };
  };
}

export const AUTHZ_SERVICE_NAME = 'svc.authz.v1.Authorization';

/** The service entry for serve(). */
export function authzService(authorizer: Authorizer, generation?: PolicyGeneration) {
  const handlers: Handlers = { Authorize: authorizeHandler(authorizer, generation) };
  return { name: AUTHZ_SERVICE_NAME, definition: api.svc.authz.v1.Authorization.service, handlers };
}
