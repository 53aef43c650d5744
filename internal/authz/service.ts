// The Authorize RPC over an authorizer chain.
import { api, type Handlers } from '../rpc/index.js';
import type { AuthorizeRequest__Output as AuthorizeRequest } from '../rpc/gen/svc/authz/v1/AuthorizeRequest.js';
import type { AuthorizeResponse } from '../rpc/gen/svc/authz/v1/AuthorizeResponse.js';
import type { Attributes, Authorizer, UserInfo } from './types.js';

const NO_USER: UserInfo = { username: '', uid: '', groups: [], extra: {} };

export function attributesOf(request: AuthorizeRequest): Attributes {
  return {
    user: request.user ?? NO_USER,
    resource: request.resource ?? undefined,
    nonResource: request.nonResource ?? undefined,
  };
}

/** The Authorize handler over an authorizer. */
export function authorizeHandler(authorizer: Authorizer) {
  return async (request: AuthorizeRequest): Promise<AuthorizeResponse> => {
    const answer = await authorizer.authorize(attributesOf(request));
    return { decision: answer.decision, reason: answer.reason, evaluationError: answer.error ?? '' };
  };
}

export const AUTHZ_SERVICE_NAME = 'svc.authz.v1.Authorization';

/** The service entry for serve(). */
export function authzService(authorizer: Authorizer) {
  const handlers: Handlers = { Authorize: authorizeHandler(authorizer) };
  return { name: AUTHZ_SERVICE_NAME, definition: api.svc.authz.v1.Authorization.service, handlers };
}
