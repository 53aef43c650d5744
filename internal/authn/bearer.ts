// Bearer tokens from the Authorization header, tried against every token
// authenticator in turn (static file, bootstrap, service-account, OIDC, then
// the webhook). The header is read as the Kubernetes API server reads it: a
// header that is not `Bearer <token>` carries no token (the request may still be
// anonymous), a token that no authenticator accepts is refused.
import { AuthenticationError, type Authenticated, type RequestAuthenticator, type RequestCredentials, type TokenAuthenticator } from './types.js';
import { decodeJwt } from 'jose';
import { aggregateMessage } from './chain.js';

export const SPACE_BEFORE_TOKEN_WARNING = 'the provided Authorization header contains extra space before the bearer token, and is ignored';
const INVALID_TOKEN = 'invalid bearer token';

/** The token of an `Authorization: Bearer <token>` header and why a malformed one was ignored. */
export function parseBearer(headers: Map<string, string[]>): { token?: string; warning?: string } {
  const value = (headers.get('authorization')?.[0] ?? '').trim();
  const parts = value.split(' ');
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer') return {};
  if (parts[1] === '') return parts.length === 3 ? { warning: SPACE_BEFORE_TOKEN_WARNING } : {};
  return { token: parts[1] };
}

/** The token of an `Authorization: Bearer <token>` header; undefined when absent or malformed. */
export const bearerToken = (headers: Map<string, string[]>): string | undefined => parseBearer(headers).token;

/** An authenticator's message with the token blotted out, should it quote it. */
const redacted = (message: string, token: string): string => message.split(token).join('[redacted]');

/** The `exp` of a token that is a JWT (ms since the epoch); read once an authenticator has accepted it. */
function jwtExpiry(token: string): number | undefined {
  try {
    const { exp } = decodeJwt(token);
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** Tries each token authenticator; the first user wins, refusals are joined when none accepts. */
export async function authenticateToken(authenticators: TokenAuthenticator[], token: string, audiences: string[]): Promise<Authenticated> {
  const errors: Error[] = [];
  for (const authenticator of authenticators) {
    try {
      const found = await authenticator.authenticateToken(token, audiences);
      if (found) return found.expiresAt === undefined ? { ...found, expiresAt: jwtExpiry(token) } : found;
    } catch (err) {
      errors.push(new Error(redacted((err as Error).message, token)));
    }
  }
  throw new AuthenticationError(errors.length ? aggregateMessage(errors) : INVALID_TOKEN);
}

export class BearerTokenAuthenticator implements RequestAuthenticator {
  constructor(private readonly tokenAuthenticators: TokenAuthenticator[]) {}

  async authenticate(request: RequestCredentials): Promise<Authenticated | undefined> {
    const { token, warning } = parseBearer(request.headers);
    if (warning) request.warnings?.push(warning);
    if (token === undefined) return undefined;
    return authenticateToken(this.tokenAuthenticators, token, request.audiences);
  }
}
