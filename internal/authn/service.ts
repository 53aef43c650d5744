// The Authenticate RPC: builds the authenticator chain from the service's
// options and answers with the caller's identity or the reason it was refused.
import { readFileSync } from 'node:fs';
import { Counter, type Registry } from 'prom-client';
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
import { cacheTtl, type Revocations } from './caching.js';

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
  ({ authenticated: false, user: null, error, audiences: [], authenticator: '', warnings, credentialHeaders: [], cacheTtlMs: 0, pathDependent: false, generation: '' });

const NO_REVOCATIONS: Revocations = { current: () => '' };

/** The Authenticate handler over a chain; answers say how long they may be reused, at which revocation generation. */
export function authenticateHandler(chain: AuthenticationChain, onRefusal: RefusalLogger = () => undefined, requestHeader?: RequestHeaderConfig,
  revocations: Revocations = NO_REVOCATIONS) {
  return async (request: AuthenticateRequest): Promise<AuthenticateResponse> => {
    // Read before deciding: a revocation while the answer is made leaves it at an older generation.
    const generation = revocations.current();
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
      cacheTtlMs: generation ? cacheTtl(outcome.result, credentials) : 0,
      pathDependent: authenticator === 'anonymous' && chain.anonymousByPath, generation,
    };
  };
}

/** The AuthenticateToken handler: the token authenticators alone, as a TokenReview asks. */
export function authenticateTokenHandler(tokenAuthenticators: TokenAuthenticator[]) {
  return async (request: AuthenticateTokenRequest): Promise<AuthenticateResponse> => {
    if (!request.token || tokenAuthenticators.length === 0) return refused(request.token ? 'no token authenticator is configured' : 'no token');
    try {
      const found = withAuthenticatedGroup(await authenticateToken(tokenAuthenticators, request.token, request.audiences ?? []));
      return {
        authenticated: true, user: toUserInfo(found.user), error: '', audiences: found.audiences, authenticator: found.authenticator, warnings: [], credentialHeaders: [],
        cacheTtlMs: 0, pathDependent: false, generation: '',
      };
    } catch (err) {
      return refused((err as Error).message);
    }
  };
}

export const AUTHN_SERVICE_NAME = 'svc.authn.v1.Authentication';

export interface AuthnServiceOptions {
  onRefusal?: RefusalLogger;
  /** Handlers of the other RPCs (token issuing). */
  more?: Handlers;
  revocations?: Revocations;
  /** Where the count of Authenticate calls is kept. */
  registry?: Registry;
}

/** Counts the answers of a handler by outcome. */
function counted(handler: (request: AuthenticateRequest) => Promise<AuthenticateResponse>, registry: Registry) {
  const calls = new Counter({
    name: 'svc_authn_authenticate_requests_total', help: 'Authenticate calls answered by the authentication service, by result: authenticated or refused.',
    labelNames: ['result'], registers: [registry],
  });
  return async (request: AuthenticateRequest): Promise<AuthenticateResponse> => {
    const res = await handler(request);
    calls.inc({ result: res.authenticated ? 'authenticated' : 'refused' });
    return res;
  };
}

/** The service entry for serve(). */
export function authnService(built: BuiltChain, opts: AuthnServiceOptions = {}) {
  const authenticate = authenticateHandler(built.chain, opts.onRefusal, built.requestHeader, opts.revocations);
  const handlers: Handlers = {
    Authenticate: opts.registry ? counted(authenticate, opts.registry) : authenticate,
    AuthenticateToken: authenticateTokenHandler(built.tokenAuthenticators),
    ...opts.more,
  };
  return { name: AUTHN_SERVICE_NAME, definition: api.svc.authn.v1.Authentication.service, handlers };
}
