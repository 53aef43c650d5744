// The authenticator chain, assembled as the Kubernetes API server does: the
// request authenticators are tried in order and the first user wins (a refusal
// by one does not stop the others); every user found joins
// system:authenticated; only a request that carries no credential at all falls
// back to the anonymous user, a refused one stays refused.
import { GROUP_AUTHENTICATED, GROUP_UNAUTHENTICATED, USER_ANONYMOUS } from '../names/index.js';
import { AuthenticationError, newUser, type Authenticated, type RequestAuthenticator, type RequestCredentials } from './types.js';

/** One message for several errors: the message alone, or `[a, b]`. */
export const aggregateMessage = (errors: Error[]): string =>
  (errors.length === 1 ? errors[0].message : `[${errors.map((e) => e.message).join(', ')}]`);

/** Tries each authenticator; the first user wins, refusals are reported only when none accepts. */
export class UnionAuthenticator implements RequestAuthenticator {
  constructor(private readonly authenticators: RequestAuthenticator[]) {}

  async authenticate(request: RequestCredentials): Promise<Authenticated | undefined> {
    const errors: Error[] = [];
    for (const authenticator of this.authenticators) {
      try {
        const found = await authenticator.authenticate(request);
        if (found) return found;
      } catch (err) {
        errors.push(err as Error);
      }
    }
    if (errors.length) throw new AuthenticationError(aggregateMessage(errors));
    return undefined;
  }
}

/** Adds system:authenticated to every user but the anonymous one. */
export function withAuthenticatedGroup(found: Authenticated): Authenticated {
  const { user } = found;
  if (user.username === USER_ANONYMOUS
    || user.groups.includes(GROUP_AUTHENTICATED) || user.groups.includes(GROUP_UNAUTHENTICATED)) return found;
  return { ...found, user: { ...user, groups: [...user.groups, GROUP_AUTHENTICATED] } };
}

export const anonymous = (): Authenticated =>
  ({ user: newUser(USER_ANONYMOUS, { groups: [GROUP_UNAUTHENTICATED] }), audiences: [], authenticator: 'anonymous' });

export type Outcome = { authenticated: true; result: Authenticated } | { authenticated: false; error: string };

export const NO_CREDENTIALS = 'no credentials provided and anonymous access is disabled';

/** The whole decision for one request. */
export class AuthenticationChain {
  private readonly union: UnionAuthenticator;
  /** anonymousPaths, when given, are the only paths anonymous requests may reach. */
  constructor(authenticators: RequestAuthenticator[], private readonly anonymousEnabled: boolean, private readonly anonymousPaths: string[] = []) {
    this.union = new UnionAuthenticator(authenticators);
  }

  /** Whether anonymous answers depend on the request path. */
  get anonymousByPath(): boolean {
    return this.anonymousEnabled && this.anonymousPaths.length > 0;
  }

  private anonymousAllowed(path: string): boolean {
    return this.anonymousEnabled && (this.anonymousPaths.length === 0 || this.anonymousPaths.includes(path));
  }

  async authenticate(request: RequestCredentials): Promise<Outcome> {
    let found: Authenticated | undefined;
    try {
      found = await this.union.authenticate(request);
    } catch (err) {
      return { authenticated: false, error: (err as Error).message };
    }
    if (found) return { authenticated: true, result: withAuthenticatedGroup(found) };
    if (this.anonymousAllowed(request.path)) return { authenticated: true, result: anonymous() };
    return { authenticated: false, error: NO_CREDENTIALS };
  }
}
