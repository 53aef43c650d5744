// A cache in front of a slow token authenticator (the webhook): answers are
// kept for a TTL under an HMAC of the token and the audiences asked for, with a
// key made at start, so the cache never holds a token and its keys cannot be
// checked against guessed tokens. Users and "not a token I know" answers are
// kept; errors (an unreachable service, an error it reported) are not. A user
// expires with its entry, so whoever keeps it further (the gateway) asks again
// when this cache would. Concurrent lookups of one key share one call.
import { createHmac, randomBytes } from 'node:crypto';
import { Lru, singleFlight } from '../apimachinery/lru.js';
import type { Authenticated, TokenAuthenticator } from './types.js';

const MAX_ENTRIES = 4096;

interface Entry {
  result: Authenticated | undefined;
  until: number;
}

/** A copy of the kept user, valid no longer than its entry (nor than it was already). */
function expiring(entry: Entry): Authenticated | undefined {
  if (!entry.result) return undefined;
  const copy = structuredClone(entry.result);
  copy.expiresAt = Math.min(copy.expiresAt ?? Infinity, entry.until);
  return copy;
}

export class CachedTokenAuthenticator implements TokenAuthenticator {
  private readonly secret = randomBytes(32);
  private readonly entries = new Lru<Entry>(MAX_ENTRIES);
  private readonly pending = new Map<string, Promise<Entry>>();

  constructor(private readonly inner: TokenAuthenticator, private readonly ttlMs: number, private readonly now: () => number = Date.now) {}

  async authenticateToken(token: string, audiences: string[]): Promise<Authenticated | undefined> {
    const key = createHmac('sha256', this.secret).update(JSON.stringify(audiences)).update('\0').update(token).digest('base64');
    const hit = this.entries.get(key);
    if (hit && hit.until > this.now()) return expiring(hit);
    this.entries.delete(key);
    return expiring(await singleFlight(this.pending, key, () => this.inner.authenticateToken(token, audiences).then((result) => this.remember(key, result))));
  }

  private remember(key: string, result: Authenticated | undefined): Entry {
    const entry = { result, until: this.now() + Math.max(0, this.ttlMs) };
    if (this.ttlMs <= 0) return entry;
    this.entries.set(key, entry);
    return entry;
  }
}
