// The RPCs that issue service-account tokens and describe their issuer. The
// gateway has read the service account and the bound object; before a token is
// handed out the mirrors are given a moment to hold them too, so the token works
// at once. Tokens never appear in errors.
import { grpc, RpcError, type Handlers } from '../rpc/index.js';
import type { IssueServiceAccountTokenRequest__Output as IssueRequest } from '../rpc/gen/svc/authn/v1/IssueServiceAccountTokenRequest.js';
import type { IssueServiceAccountTokenResponse } from '../rpc/gen/svc/authn/v1/IssueServiceAccountTokenResponse.js';
import type { GetServiceAccountIssuerResponse } from '../rpc/gen/svc/authn/v1/GetServiceAccountIssuerResponse.js';
import { BOUND_RESOURCES, MIN_EXPIRATION_SECONDS, NoSigningKeyError, type BoundKind, type TokenIssuer } from '../serviceaccount/issuer.js';
import { jwks } from '../serviceaccount/keys.js';
import type { ObjectLookup } from '../serviceaccount/lookup.js';
import type { IssuerInfo } from './tokens.js';

const MIRROR_WAIT_MS = 3000;

const invalid = (message: string) => new RpcError(grpc.status.INVALID_ARGUMENT, message);

function checkRequest(req: IssueRequest): BoundKind | undefined {
  if (!req.namespace || !req.serviceAccount?.name || !req.serviceAccount.uid) throw invalid('namespace and service account name and uid are required');
  if (req.expirationSeconds < MIN_EXPIRATION_SECONDS) throw invalid(`expiration_seconds must be at least ${MIN_EXPIRATION_SECONDS}`);
  const kind = req.boundObjectKind;
  if (!kind) return undefined;
  if (!(kind in BOUND_RESOURCES)) throw invalid(`cannot bind a token to a ${kind}`);
  if (!req.boundObject?.name || !req.boundObject.uid) throw invalid('the bound object needs a name and a uid');
  return kind as BoundKind;
}

async function issue(issuer: TokenIssuer, lookup: ObjectLookup, req: IssueRequest): Promise<IssueServiceAccountTokenResponse> {
  const kind = checkRequest(req);
  const sa = { name: req.serviceAccount!.name, uid: req.serviceAccount!.uid };
  await lookup.waitFor('serviceaccounts', req.namespace, sa.name, sa.uid, MIRROR_WAIT_MS);
  const bound = kind ? { kind, name: req.boundObject!.name, uid: req.boundObject!.uid } : undefined;
  if (bound) await lookup.waitFor(BOUND_RESOURCES[bound.kind], req.namespace, bound.name, bound.uid, MIRROR_WAIT_MS);
  try {
    return await issuer.issue({
      namespace: req.namespace, serviceAccount: sa, audiences: req.audiences ?? [], expirationSeconds: req.expirationSeconds,
      bound, node: req.node?.name ? { name: req.node.name, uid: req.node.uid } : undefined,
    });
  } catch (err) {
    if (err instanceof NoSigningKeyError) throw new RpcError(grpc.status.FAILED_PRECONDITION, err.message);
    throw new RpcError(grpc.status.INTERNAL, 'the service-account token could not be signed');
  }
}

function describe(info: IssuerInfo): GetServiceAccountIssuerResponse {
  return {
    issuer: info.issuer, jwks: JSON.stringify(jwks(info.keys)), jwksUri: info.jwksUri,
    signingAlgorithms: [...new Set(info.keys.map((k) => k.alg))].sort(),
  };
}

/** The handlers of IssueServiceAccountToken and GetServiceAccountIssuer. */
export function issuingHandlers(issuer: TokenIssuer, lookup: ObjectLookup, info: IssuerInfo): Handlers {
  const described = describe(info);
  return {
    IssueServiceAccountToken: (req: IssueRequest) => issue(issuer, lookup, req),
    GetServiceAccountIssuer: async () => described,
  };
}
