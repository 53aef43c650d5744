// The shapes every authenticator shares. An authenticator answers in one of
// three ways: a user (the credential is valid), undefined (it carries no
// credential of this kind) or a thrown AuthenticationError (the credential is
// present but invalid).

export interface User {
  username: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** The parts of an HTTP request that may carry credentials. */
export interface RequestCredentials {
  /** Header values by lower-case name. */
  headers: Map<string, string[]>;
  /** The client's certificate chain, DER, leaf first. */
  peerCertificates: Buffer[];
  remoteAddress: string;
  /** The audiences a token must be valid for; empty: the server's own API audiences. */
  audiences: string[];
  /** The request path (anonymous access may be limited to some paths). */
  path: string;
  /** Where authenticators leave warnings for the client (a malformed header ignored, ...). */
  warnings?: string[];
  /** Set by an authenticator whose answer depends on more than the token and the client chain
   * (an authenticating proxy's headers): the answer must not be reused for other requests. */
  uncacheable?: boolean;
}

export interface Authenticated {
  user: User;
  /** The audiences the credential was valid for, when it names any. */
  audiences: string[];
  /** Which authenticator accepted the credential, e.g. `x509`. */
  authenticator: string;
  /** When the credential stops being valid (ms since the epoch), when it ever does. */
  expiresAt?: number;
}

/** Authenticates a whole request (certificates, headers). */
export interface RequestAuthenticator {
  authenticate(request: RequestCredentials): Promise<Authenticated | undefined>;
}

/** Authenticates a bearer token; undefined when the token is not one it knows.
 * `audiences` are the ones asked for (empty: the server's own); a token valid for
 * none of them is refused, and the answer names the ones it is valid for. */
export interface TokenAuthenticator {
  authenticateToken(token: string, audiences: string[]): Promise<Authenticated | undefined>;
}

/** A credential was presented and refused. */
export class AuthenticationError extends Error {}

export const newUser = (username: string, fields: Partial<Omit<User, 'username'>> = {}): User =>
  ({ username, uid: fields.uid ?? '', groups: fields.groups ?? [], extra: fields.extra ?? {} });
