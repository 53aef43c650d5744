// The Authenticate RPC: builds the authenticator chain from the service's
// options and answers with the caller's identity or the reason it was refused.
import { readFileSync } from 'node:fs';
import { api } from '../rpc/index.js';
import type { Handlers } from '../rpc/index.js';
import type { AuthenticateRequest__Output as AuthenticateRequest } from '../rpc/gen/svc/authn/v1/AuthenticateRequest.js';
import type { AuthenticateResponse } from '../rpc/gen/svc/authn/v1/AuthenticateResponse.js';
import type { UserInfo } from '../rpc/gen/svc/authn/v1/UserInfo.js';
import type { AuthenticateTokenRequest__Output as AuthenticateTokenRequest } from '../rpc/gen/svc/authn/v1/AuthenticateTokenRequest.js';
import { BearerTokenAuthenticator, authenticateToken } from './bearer.js';
import { AuthenticationChain, NO_CREDENTIALS, withAuthenticatedGroup } from './chain.js';
import { RequestHeaderAuthenticator, credentialHeaderNames, type RequestHeaderConfig } from './requestheader.js';
import { loadTokenFile, TokenFileAuthenticator } from './tokenfile.js';
import type { RequestAuthenticator, RequestCredentials, TokenAuthenticator, User } from './types.js';
import { webhookTokenAuthenticator, type WebhookTokenOptions } from './webhook.js';
import { X509Authenticator } from './x509.js';
import { setUpJWT, type JWTOptions, type JWTSetup } from './jwtsetup.js';

export interface AuthnOptions {
  /** PEM bundle of the CAs that sign client certificates; none disables x509. */
  clientCaFile?: string;
  /** CSV of static tokens; none disables them. */
  tokenAuthFile?: string;
  anonymousAuth: boolean;
  /** The authorization modes of the server: AlwaysAllow turns anonymous access off. */
  authorizationModes?: string[];
  /** JWT authentication: the --oidc-* flags or --authentication-config. */
  jwt?: JWTOptions;
  /** The API's own audiences (--api-audiences, else the issuers): those of static and webhook tokens that name none. */
  apiAudiences?: string[];
  /** The token webhook; none without a configuration file. */
  webhook?: WebhookTokenOptions;
  /** The authenticating proxy: its CA (none disables it) and headers. */
  requestHeader?: RequestHeaderConfig & { clientCaFile: string };
  /** Token authenticators built elsewhere (service-account and bootstrap tokens), tried after the token file, before OIDC. */
  tokenAuthenticators?: TokenAuthenticator[];
}

/** A configuration the service cannot start with. */
export class AuthnConfigError extends Error {}

export interface BuiltChain {
  chain: AuthenticationChain;
  /** The bearer token authenticators, in order, for token reviews. */
  tokenAuthenticators: TokenAuthenticator[];
  /** The authenticating proxy's headers, when one is configured. */
  requestHeader?: RequestHeaderConfig;
  /** Things worth logging at start (skipped token records, ...). */
  warnings: string[];
  /** Stops background work (key fetches, following the configuration file). */
  close(): void;
}

function clientCertificateAuthenticator(path: string): X509Authenticator {
  try {
    return X509Authenticator.fromPem(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new AuthnConfigError(`unable to load client CA file '${path}': ${(err as Error).message}`);
  }
}

/** Builds one part of the chain; a failure is a configuration error naming the part. */
function configured<T>(what: string, build: () => T): T {
  try {
    return build();
  } catch (err) {
    throw new AuthnConfigError(`${what}: ${(err as Error).message}`);
  }
}

/** The authenticating proxy, when its CA is configured. */
function requestHeaderAuthenticator(opts: AuthnOptions): RequestHeaderAuthenticator | undefined {
  const config = opts.requestHeader;
  if (!config?.clientCaFile) return undefined;
  return configured('--requestheader-client-ca-file', () => RequestHeaderAuthenticator.fromFile(config.clientCaFile, config));
}

/** The authenticators in the order of the Kubernetes API server: the
 * authenticating proxy, client certificates, then bearer tokens (static file,
 * JWT, the webhook last); anonymous after all of them. */
export function buildAuthenticationChain(opts: AuthnOptions): BuiltChain {
  const warnings: string[] = [];
  const requestAuthenticators: RequestAuthenticator[] = [];
  const tokenAuthenticators: TokenAuthenticator[] = [];
  const proxy = requestHeaderAuthenticator(opts);
  if (proxy) requestAuthenticators.push(proxy);
  if (opts.clientCaFile) requestAuthenticators.push(clientCertificateAuthenticator(opts.clientCaFile));
  if (opts.tokenAuthFile) {
    const file = configured('--token-auth-file', () => loadTokenFile(opts.tokenAuthFile!));
    warnings.push(...file.warnings);
    tokenAuthenticators.push(new TokenFileAuthenticator(file.tokens, opts.apiAudiences));
  }
  tokenAuthenticators.push(...(opts.tokenAuthenticators ?? []));
  const jwt = jwtAuthentication(opts.jwt);
  if (jwt) tokenAuthenticators.push(jwt.authenticators);
  if (opts.webhook?.configFile) {
    tokenAuthenticators.push(configured('--authentication-token-webhook-config-file', () => webhookTokenAuthenticator({ apiAudiences: opts.apiAudiences, ...opts.webhook! })));
  }
  if (tokenAuthenticators.length) requestAuthenticators.push(new BearerTokenAuthenticator(tokenAuthenticators));
  let anonymousAuth = opts.anonymousAuth;
  if (anonymousAuth && opts.authorizationModes?.includes('AlwaysAllow')) {
    warnings.push('AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer');
    anonymousAuth = false;
  }
  // The configuration file's anonymous section replaces the flag (and is not reset by AlwaysAllow).
  const fileAnonymous = jwt?.anonymous;
  const chain = fileAnonymous
    ? new AuthenticationChain(requestAuthenticators, fileAnonymous.enabled, fileAnonymous.conditions.map((c) => c.path))
    : new AuthenticationChain(requestAuthenticators, anonymousAuth);
  return { chain, tokenAuthenticators, requestHeader: proxy && opts.requestHeader, warnings, close: () => jwt?.close() };
}

function jwtAuthentication(opts: JWTOptions | undefined): JWTSetup | undefined {
  try {
    return opts && setUpJWT(opts);
  } catch (err) {
    throw new AuthnConfigError((err as Error).message);
  }
}

export function credentialsOf(request: AuthenticateRequest): RequestCredentials {
  const headers = new Map<string, string[]>();
  for (const h of request.headers ?? []) {
    const name = h.name.toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), ...h.values]);
  }
  return {
    headers, peerCertificates: request.peerCertificates ?? [], remoteAddress: request.remoteAddress ?? '', audiences: request.audiences ?? [], path: request.path ?? '',
    warnings: [],
  };
}

export const toUserInfo = (user: User): UserInfo => ({
  username: user.username,
  uid: user.uid,
  groups: user.groups,
  extra: Object.fromEntries(Object.entries(user.extra).map(([k, values]) => [k, { values }])),
});

/** Told of every presented credential that was refused. */
export type RefusalLogger = (remoteAddress: string, error: string) => void;

const refused = (error: string, warnings: string[] = []): AuthenticateResponse =>
  ({ authenticated: false, user: null, error, audiences: [], authenticator: '', warnings, credentialHeaders: [] });

/** The Authenticate handler over a chain. */
export function authenticateHandler(chain: AuthenticationChain, onRefusal: RefusalLogger = () => undefined, requestHeader?: RequestHeaderConfig) {
  return async (request: AuthenticateRequest): Promise<AuthenticateResponse> => {
    const credentials = credentialsOf(request);
    const outcome = await chain.authenticate(credentials);
    const warnings = credentials.warnings ?? [];
    if (!outcome.authenticated) {
      if (outcome.error !== NO_CREDENTIALS) onRefusal(credentials.remoteAddress, outcome.error);
      return refused(outcome.error, warnings);
    }
    const { user, audiences, authenticator } = outcome.result;
    return {
      authenticated: true, user: toUserInfo(user), error: '', audiences, authenticator, warnings,
      credentialHeaders: credentialHeaderNames(credentials.headers.keys(), requestHeader),
    };
  };
}

/** The AuthenticateToken handler: the token authenticators alone, as a TokenReview asks. */
export function authenticateTokenHandler(tokenAuthenticators: TokenAuthenticator[]) {
  return async (request: AuthenticateTokenRequest): Promise<AuthenticateResponse> => {
    if (!request.token || tokenAuthenticators.length === 0) return refused(request.token ? 'no token authenticator is configured' : 'no token');
    try {
      const found = withAuthenticatedGroup(await authenticateToken(tokenAuthenticators, request.token, request.audiences ?? []));
      return { authenticated: true, user: toUserInfo(found.user), error: '', audiences: found.audiences, authenticator: found.authenticator, warnings: [], credentialHeaders: [] };
    } catch (err) {
      return refused((err as Error).message);
    }
  };
}

export const AUTHN_SERVICE_NAME = 'svc.authn.v1.Authentication';

/** The service entry for serve(); `more` adds handlers of the other RPCs (token issuing). */
export function authnService(built: BuiltChain, onRefusal?: RefusalLogger, more: Handlers = {}) {
  const handlers: Handlers = {
    Authenticate: authenticateHandler(built.chain, onRefusal, built.requestHeader),
    AuthenticateToken: authenticateTokenHandler(built.tokenAuthenticators),
    ...more,
  };
  return { name: AUTHN_SERVICE_NAME, definition: api.svc.authn.v1.Authentication.service, handlers };
}
