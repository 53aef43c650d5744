// What the gateway may keep of an answer. As the platform caches successful
// token authentications for ten seconds, an answer may be given again for that
// long to the same credentials (token and client chain), never past their
// expiry; refusals and identities a proxy named in headers are never kept.
// Revocations (a token's Secret, ServiceAccount, Pod or Node changed or gone,
// the configuration reloaded) bump a generation announced on NATS, and the
// gateway drops what it kept at an older one.
import type { Authenticated, RequestCredentials } from './types.js';

/** How long a successful authentication is reused, as the platform's token cache keeps it. */
export const SUCCESS_CACHE_TTL_MS = 10_000;

/** The revocation generation: `current` is empty while it cannot be announced (nothing is kept then). */
export interface Revocations {
  current(): string;
}

/** How long the answer may be reused (ms); 0 when it must not be. */
export function cacheTtl(found: Authenticated, credentials: RequestCredentials, now = Date.now()): number {
  if (credentials.uncacheable) return 0;
  const left = found.expiresAt === undefined ? SUCCESS_CACHE_TTL_MS : Math.min(SUCCESS_CACHE_TTL_MS, found.expiresAt - now);
  return Math.max(0, Math.floor(left));
}

