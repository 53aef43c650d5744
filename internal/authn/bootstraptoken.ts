// Bootstrap token authentication: a `<id>.<secret>` token is looked up in the
// svc-system Secrets, mirrored in memory by a Reflector (never a storage read
// per request). Like the upstream authenticator, a token whose Secret is
// missing, expired, of another secret or not meant for authentication is
// simply not recognised, so the request ends as an invalid bearer token.
import { timingSafeEqual } from 'node:crypto';
import { KEY_USAGE_AUTHENTICATION, expiresAt, groupsOf, parseToken, secretName, usableToken } from '../bootstraptoken/index.js';
import { BOOTSTRAP_USER_PREFIX, NAMESPACE_SYSTEM } from '../names/index.js';
import type { Reflector } from '../storage/reflector.js';
import { objectKey } from '../storage/keys.js';
import { audienceAgnostic } from './audiences.js';
import { newUser, type Authenticated, type TokenAuthenticator } from './types.js';

/** Equal strings, compared in time that does not depend on where they differ. */
function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

export class BootstrapTokenAuthenticator implements TokenAuthenticator {
  /** secrets: a Reflector of the svc-system Secrets; apiAudiences: the server's own. */
  constructor(private readonly secrets: Reflector, private readonly apiAudiences: string[], private readonly clock = () => Date.now()) {}

  async authenticateToken(token: string, audiences: string[]): Promise<Authenticated | undefined> {
    const parsed = parseToken(token);
    if (!parsed) return undefined;
    const secret = this.secrets.items.get(objectKey('', 'secrets', NAMESPACE_SYSTEM, secretName(parsed.id)));
    // A Secret usable for authentication, of this id and this secret (compared in constant time).
    const usable = secret && usableToken(secret, KEY_USAGE_AUTHENTICATION, this.clock());
    if (!secret || !usable || usable.id !== parsed.id || !sameSecret(usable.secret, parsed.secret)) return undefined;
    let groups: string[];
    try {
      groups = groupsOf(secret);
    } catch {
      return undefined;
    }
    const found: Authenticated = {
      user: newUser(`${BOOTSTRAP_USER_PREFIX}${parsed.id}`, { groups }), audiences: [], authenticator: 'bootstrap-token', expiresAt: expiresAt(secret),
    };
    return audienceAgnostic(found, audiences, this.apiAudiences);
  }
}
