// The Authenticate RPC: builds the authenticator chain from the service's
// options and answers with the caller's identity or the reason it was refused.
import { readFileSync } from 'node:fs';
import { api } from '../rpc/index.js';
import type { Handlers } from '../rpc/index.js';
import type { AuthenticateRequest__Output as AuthenticateRequest } from '../rpc/gen/svc/authn/v1/AuthenticateRequest.js';
import type { AuthenticateResponse } from '../rpc/gen/svc/authn/v1/AuthenticateResponse.js';
import type { UserInfo } from '../rpc/gen/svc/authn/v1/UserInfo.js';
import { BearerTokenAuthenticator } from './bearer.js';
import { AuthenticationChain, NO_CREDENTIALS } from './chain.js';
import { loadTokenFile, TokenFileAuthenticator } from './tokenfile.js';
import type { RequestAuthenticator, RequestCredentials, TokenAuthenticator, User } from './types.js';
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
  /** Token authenticators built elsewhere (service-account and bootstrap tokens), tried after the token file, before OIDC. */
  tokenAuthenticators?: TokenAuthenticator[];
}

/** A configuration the service cannot start with. */
export class AuthnConfigError extends Error {}

export interface BuiltChain {
  chain: AuthenticationChain;
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

/** The authenticators in the order of the Kubernetes API server: client
 * certificates, then bearer tokens; anonymous last. */
export function buildAuthenticationChain(opts: AuthnOptions): BuiltChain {
  const warnings: string[] = [];
  const requestAuthenticators: RequestAuthenticator[] = [];
  const tokenAuthenticators: TokenAuthenticator[] = [];
  if (opts.clientCaFile) requestAuthenticators.push(clientCertificateAuthenticator(opts.clientCaFile));
  if (opts.tokenAuthFile) {
    let file;
    try {
      file = loadTokenFile(opts.tokenAuthFile);
    } catch (err) {
      throw new AuthnConfigError((err as Error).message);
    }
    warnings.push(...file.warnings);
    tokenAuthenticators.push(new TokenFileAuthenticator(file.tokens));
  }
  tokenAuthenticators.push(...(opts.tokenAuthenticators ?? []));
  const jwt = jwtAuthentication(opts.jwt);
  if (jwt) tokenAuthenticators.push(jwt.authenticators);
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
  return { chain, warnings, close: () => jwt?.close() };
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

/** The Authenticate handler over a chain. */
export function authenticateHandler(chain: AuthenticationChain, onRefusal: RefusalLogger = () => undefined) {
  return async (request: AuthenticateRequest): Promise<AuthenticateResponse> => {
    const credentials = credentialsOf(request);
    const outcome = await chain.authenticate(credentials);
    if (!outcome.authenticated) {
      if (outcome.error !== NO_CREDENTIALS) onRefusal(credentials.remoteAddress, outcome.error);
      return { authenticated: false, user: null, error: outcome.error, audiences: [], authenticator: '' };
    }
    const { user, audiences, authenticator } = outcome.result;
    return { authenticated: true, user: toUserInfo(user), error: '', audiences, authenticator };
  };
}

export const AUTHN_SERVICE_NAME = 'svc.authn.v1.Authentication';

/** The service entry for serve(); `more` adds handlers of the other RPCs (token issuing). */
export function authnService(chain: AuthenticationChain, onRefusal?: RefusalLogger, more: Handlers = {}) {
  const handlers: Handlers = { Authenticate: authenticateHandler(chain, onRefusal), ...more };
  return { name: AUTHN_SERVICE_NAME, definition: api.svc.authn.v1.Authentication.service, handlers };
}
