// The admission service's client of the authorization service: plugins that
// decide on what the requesting user may do (the certificate plugins, the
// `authorizer` of policies) ask the Authorize RPC. Nothing is kept: a decision
// could only be invalidated by following the service's policy generations, and
// these questions are few (a CSR approval, a policy that asks).
import { api, grpc, isUnreachable, replicated, unary } from '../rpc/index.js';
import type { AuthorizationClient } from '../rpc/gen/svc/authz/v1/Authorization.js';
import type { AuthorizeRequest } from '../rpc/gen/svc/authz/v1/AuthorizeRequest.js';
import type { AuthorizeResponse__Output } from '../rpc/gen/svc/authz/v1/AuthorizeResponse.js';
import type { UserInfo__Output as UserInfo } from '../rpc/gen/svc/authn/v1/UserInfo.js';
import { AdmissionError } from './types.js';

/** What is asked: a request on a resource or on a non-resource path (exactly one). */
export type AuthorizeAttributes = Omit<AuthorizeRequest, 'user'>;
/** The service's answer: decision ALLOW, DENY or NO_OPINION, with its reason and any evaluation error. */
export type AuthorizeDecision = AuthorizeResponse__Output;
export type Authorize = (user: UserInfo, attributes: AuthorizeAttributes) => Promise<AuthorizeDecision>;

const TIMEOUT_MS = 10_000;

export class AuthzClient {
  private readonly client: AuthorizationClient;

  constructor(address: string) {
    this.client = replicated(api.svc.authz.v1.Authorization, address);
  }

  /** The decision on one request of a user; an unreachable service is a 503 the client may retry. */
  readonly authorize: Authorize = async (user, attributes) => {
    try {
      return await unary<AuthorizeDecision>(this.client, this.client.Authorize, { ...attributes, user }, TIMEOUT_MS);
    } catch (err) {
      const detail = (err as grpc.ServiceError).details ?? (err as Error).message;
      if (isUnreachable(err)) throw new AdmissionError(503, 'ServiceUnavailable', `the authorization service is unavailable: ${detail}`);
      throw new Error(`the authorization service failed: ${detail}`);
    }
  };

  close(): void {
    this.client.close();
  }
}
