// The gateway's gRPC clients of the other services, and how their failures
// become API errors.
import type { RevisionFeed } from './hub.js';
import type { ObjectCache } from './objectcache.js';
import { api, grpc, isServiceError, isUnreachable, replicated, trailers, unary } from '../internal/rpc/index.js';
import { StorageClient, STORAGE_ERROR_KEY } from '../internal/storage/client.js';
import { MetricsScraper } from '../internal/metrics/index.js';
import {
  StatusError, alreadyExists, badRequest, gone, internalError, notFound, serviceUnavailable, staleConflict, tooLargeResourceVersion,
  type GroupResource,
} from '../internal/apimachinery/status.js';
import type { AuthenticationClient } from '../internal/rpc/gen/svc/authn/v1/Authentication.js';
import type { AuthenticateRequest } from '../internal/rpc/gen/svc/authn/v1/AuthenticateRequest.js';
import type { AuthenticateResponse__Output } from '../internal/rpc/gen/svc/authn/v1/AuthenticateResponse.js';
import type { AuthenticateTokenRequest } from '../internal/rpc/gen/svc/authn/v1/AuthenticateTokenRequest.js';
import type { AuthorizationClient } from '../internal/rpc/gen/svc/authz/v1/Authorization.js';
import type { AuthorizeRequest } from '../internal/rpc/gen/svc/authz/v1/AuthorizeRequest.js';
import type { AuthorizeResponse__Output } from '../internal/rpc/gen/svc/authz/v1/AuthorizeResponse.js';
import type { CoversRulesRequest } from '../internal/rpc/gen/svc/authz/v1/CoversRulesRequest.js';
import type { CoversRulesResponse__Output } from '../internal/rpc/gen/svc/authz/v1/CoversRulesResponse.js';
import type { RulesReviewRequest } from '../internal/rpc/gen/svc/authz/v1/RulesReviewRequest.js';
import type { RulesReviewResponse__Output } from '../internal/rpc/gen/svc/authz/v1/RulesReviewResponse.js';
import type { PolicyStatusResponse__Output } from '../internal/rpc/gen/svc/authz/v1/PolicyStatusResponse.js';
import type { AdmissionClient } from '../internal/rpc/gen/svc/admission/v1/Admission.js';
import type { AdmitRequest } from '../internal/rpc/gen/svc/admission/v1/AdmitRequest.js';
import type { AdmitResponse__Output } from '../internal/rpc/gen/svc/admission/v1/AdmitResponse.js';
import type { UserInfo__Output } from '../internal/rpc/gen/svc/authn/v1/UserInfo.js';
import type { DecisionCache } from './decisions.js';
import type { AuthenticationCache } from './authncache.js';
import type { IssueServiceAccountTokenRequest } from '../internal/rpc/gen/svc/authn/v1/IssueServiceAccountTokenRequest.js';
import type { IssueServiceAccountTokenResponse__Output } from '../internal/rpc/gen/svc/authn/v1/IssueServiceAccountTokenResponse.js';
import type { GetServiceAccountIssuerResponse__Output } from '../internal/rpc/gen/svc/authn/v1/GetServiceAccountIssuerResponse.js';

export type UserInfo = UserInfo__Output;
export type { AdmitRequest };

export interface BackendAddresses {
  storage: string;
  authn: string;
  authz: string;
  admission: string;
}


export class Backends {
  readonly storage: StorageClient;
  private readonly authn: AuthenticationClient;
  private readonly authz: AuthorizationClient;
  private readonly admission: AdmissionClient;
  /** Keeps authorization decisions while they hold, when set. */
  decisions?: DecisionCache;
  /** Keeps authentication answers while they hold, when set. */
  authentications?: AuthenticationCache;
  /** Revisions storage commits, followed on its change stream (the watch hub), when set. */
  revisions?: RevisionFeed;
  /** The objects, kept current from the change stream, that reads are answered from when set. */
  cache?: ObjectCache;
  /** The metrics of the services that serve them (authn, authz, admission). */
  readonly serviceMetrics: MetricsScraper;

  constructor(readonly addresses: BackendAddresses) {
    this.storage = new StorageClient(addresses.storage);
    this.authn = replicated(api.svc.authn.v1.Authentication, addresses.authn);
    this.authz = replicated(api.svc.authz.v1.Authorization, addresses.authz);
    this.admission = replicated(api.svc.admission.v1.Admission, addresses.admission);
    this.serviceMetrics = new MetricsScraper([addresses.authn, addresses.authz, addresses.admission]);
  }

  authenticate(req: AuthenticateRequest): Promise<AuthenticateResponse__Output> {
    const ask = (r: AuthenticateRequest) => unary<AuthenticateResponse__Output>(this.authn, this.authn.Authenticate, r, 10_000).catch(rpcFailure('authentication'));
    return this.authentications ? this.authentications.authenticate(req, ask) : ask(req);
  }

  authenticateToken(req: AuthenticateTokenRequest): Promise<AuthenticateResponse__Output> {
    return unary<AuthenticateResponse__Output>(this.authn, this.authn.AuthenticateToken, req, 10_000).catch(rpcFailure('authentication'));
  }

  /** Signs a service-account token (TokenRequest); failures never carry the token. */
  issueServiceAccountToken(req: IssueServiceAccountTokenRequest): Promise<IssueServiceAccountTokenResponse__Output> {
    return unary<IssueServiceAccountTokenResponse__Output>(this.authn, this.authn.IssueServiceAccountToken, req, 10_000).catch(issuingFailure);
  }

  serviceAccountIssuer(): Promise<GetServiceAccountIssuerResponse__Output> {
    return unary<GetServiceAccountIssuerResponse__Output>(this.authn, this.authn.GetServiceAccountIssuer, {}, 10_000).catch(rpcFailure('authentication'));
  }

  authorize(req: AuthorizeRequest): Promise<AuthorizeResponse__Output> {
    const ask = (r: AuthorizeRequest) => unary<AuthorizeResponse__Output>(this.authz, this.authz.Authorize, r, 10_000).catch(rpcFailure('authorization'));
    return this.decisions ? this.decisions.authorize(req, ask) : ask(req);
  }

  /** Whether the user's RBAC rules cover the rules asked for (escalation prevention). */
  coversRules(req: CoversRulesRequest): Promise<CoversRulesResponse__Output> {
    return unary<CoversRulesResponse__Output>(this.authz, this.authz.CoversRules, req, 10_000).catch(rpcFailure('authorization'));
  }

  rulesReview(req: RulesReviewRequest): Promise<RulesReviewResponse__Output> {
    return unary<RulesReviewResponse__Output>(this.authz, this.authz.RulesReview, req, 10_000).catch(rpcFailure('authorization'));
  }

  policyStatus(): Promise<PolicyStatusResponse__Output> {
    return unary<PolicyStatusResponse__Output>(this.authz, this.authz.PolicyStatus, {}, 2_000).catch(rpcFailure('authorization'));
  }

  admit(req: AdmitRequest): Promise<AdmitResponse__Output> {
    return unary<AdmitResponse__Output>(this.admission, this.admission.Admit, req, 30_000).catch(rpcFailure('admission'));
  }

  close(): void {
    this.storage.close();
    this.authn.close();
    this.authz.close();
    this.admission.close();
    this.serviceMetrics.close();
  }
}

/** A failed call to a service the request cannot do without. */
function rpcFailure(service: string) {
  return (err: unknown): never => {
    if (isUnreachable(err)) throw serviceUnavailable(`the ${service} service is unavailable: ${(err as grpc.ServiceError).details}`);
    throw internalError(`${service}: ${(err as Error).message}`);
  };
}

/** No signing key: the token sub-resource is not served, as upstream; a refused request is the caller's error. */
function issuingFailure(err: unknown): never {
  if (isServiceError(err) && err.code === grpc.status.FAILED_PRECONDITION) throw new StatusError(404, 'NotFound', `the server could not find the requested resource (${err.details})`);
  if (isServiceError(err) && err.code === grpc.status.INVALID_ARGUMENT) throw new StatusError(400, 'BadRequest', err.details);
  return rpcFailure('authentication')(err);
}

/** Maps a storage failure on one object to the API error a client expects. */
export function storageError(err: unknown, gr: GroupResource, name: string): StatusError {
  if (err instanceof StatusError) return err;
  if (!isServiceError(err)) return internalError((err as Error)?.message ?? String(err));
  switch (err.code) {
    case grpc.status.NOT_FOUND: return notFound(gr, name);
    case grpc.status.ALREADY_EXISTS: return alreadyExists(gr, name);
    case grpc.status.FAILED_PRECONDITION: return staleConflict(gr, name);
    case grpc.status.OUT_OF_RANGE: return revisionError(err);
    // Storage refuses only arguments that came from the request (a key, a limit, a continue key).
    case grpc.status.INVALID_ARGUMENT: return badRequest(err.details);
    default:
      if (isUnreachable(err)) return serviceUnavailable(`storage is unavailable: ${err.details}`);
      return internalError(err.details);
  }
}

/** OUT_OF_RANGE: a compacted revision is 410 Gone, a future one 504 Too large resource version. */
export function revisionError(err: grpc.ServiceError, requested = 0, current = 0): StatusError {
  return trailers(err)[STORAGE_ERROR_KEY] === 'future'
    ? tooLargeResourceVersion(requested, current)
    : gone(`The resourceVersion for the provided request is too old: ${err.details}`);
}
