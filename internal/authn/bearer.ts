// Bearer tokens from the Authorization header, tried against every token
// authenticator in turn (static file now; bootstrap, service-account, OIDC and
// webhook tokens plug in the same way).
import { AuthenticationError, type Authenticated, type RequestAuthenticator, type RequestCredentials, type TokenAuthenticator } from './types.js';
import { aggregateMessage } from './chain.js';

/** The token of an `Authorization: Bearer <token>` header; undefined when absent or empty. */
export function bearerToken(headers: Map<string, string[]>): string | undefined {
  const value = (headers.get('authorization')?.[0] ?? '').trim();
  const parts = value.split(' ');
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer') return undefined;
  return parts[1] || undefined;
}

export class BearerTokenAuthenticator implements RequestAuthenticator {
  constructor(private readonly tokenAuthenticators: TokenAuthenticator[]) {}

  async authenticate(request: RequestCredentials): Promise<Authenticated | undefined> {
    const token = bearerToken(request.headers);
    if (token === undefined) return undefined;
    const errors: Error[] = [];
    for (const authenticator of this.tokenAuthenticators) {
      try {
        const found = await authenticator.authenticateToken(token, request.audiences);
        if (found) return found;
      } catch (err) {
        errors.push(err as Error);
      }
    }
    throw new AuthenticationError(errors.length ? aggregateMessage(errors) : 'invalid bearer token');
  }
}
