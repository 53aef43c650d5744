// The gateway's authentication cache: the authentication service's answers
// kept per credential for as long as the service says (a short TTL, never past
// the credential's expiry), so a repeated request by the same client asks
// nothing. Entries are keyed by an HMAC, under a key made at start, of what the
// answer depends on (the Authorization header, the client chain and the names
// of the headers, which say which ones carried credentials and must be dropped;
// the path too for anonymous answers limited to some paths): no token is held as a key
// and keys cannot be checked against guessed tokens. Refusals are not kept. The
// service announces a revocation generation on NATS (a token's Secret,
// ServiceAccount, Pod or Node changed or gone, the configuration reloaded):
// a new one drops everything; without NATS nothing is kept. Concurrent
// requests with the same credentials share one call.
import { createHash, createHmac, createSecretKey, randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/nats-core';
import { Counter, Gauge, type Registry } from 'prom-client';
import { NATS_AUTHN_GENERATION_SUBJECT } from '../internal/names/index.js';
import type { AuthenticateRequest } from '../internal/rpc/gen/svc/authn/v1/AuthenticateRequest.js';
import type { AuthenticateResponse__Output } from '../internal/rpc/gen/svc/authn/v1/AuthenticateResponse.js';
import { GenerationFollower } from './generations.js';
import { Lru, singleFlight } from '../internal/apimachinery/lru.js';

/** Most answers kept at once; the least recently used go first. */
export const MAX_ENTRIES = 10_000;
/** Sets of header names remembered per connection: a client varies them little. */
const KEYS_PER_CONNECTION = 8;

type Response = AuthenticateResponse__Output;

/** What is kept of a client chain (one array per connection, the same for each of its requests): its digest, hashed
 * once per connection rather than per request, and the keys of its requests without a token, per set of header names. */
interface ChainMemo {
  digest: Buffer;
  keys: Map<string, string>;
}

interface Entry {
  /** Absent on the marker that says the answer for these credentials depends on the path. */
  response?: Response;
  expires: number;
}

export class AuthenticationCache {
  private readonly secret = createSecretKey(randomBytes(32));
  private readonly entries: Lru<Entry>;
  private readonly pending = new Map<string, Promise<Response>>();
  private readonly chains = new WeakMap<object, ChainMemo>();
  private readonly generation: GenerationFollower;
  private readonly requests = new Counter({
    name: 'authentication_token_cache_request_total', help: 'Authentications asked of the gateway\'s cache, by status: hit or miss.',
    labelNames: ['status'], registers: [],
  });
  private readonly fetches = new Counter({
    name: 'authentication_token_cache_fetch_total', help: 'Calls the cache made to the authentication service, by status: ok or error.',
    labelNames: ['status'], registers: [],
  });
  private readonly active = new Gauge({
    name: 'authentication_token_cache_active_fetch_count', help: 'Calls of the cache to the authentication service in flight.',
    labelNames: ['status'], registers: [],
  });

  constructor(nc: NatsConnection, maxEntries = MAX_ENTRIES, private readonly now: () => number = Date.now) {
    this.entries = new Lru(maxEntries);
    this.generation = new GenerationFollower(nc, NATS_AUTHN_GENERATION_SUBJECT, () => this.entries.clear());
  }

  start(): Promise<void> {
    return this.generation.start();
  }

  registerMetrics(registry: Registry): void {
    for (const metric of [this.requests, this.fetches, this.active]) registry.registerMetric(metric);
  }

  close(): void {
    this.generation.close();
  }

  get size(): number {
    return this.entries.size;
  }

  /** The kept answer for these credentials, or the service's (kept as it says). */
  async authenticate(request: AuthenticateRequest, ask: (request: AuthenticateRequest) => Promise<Response>): Promise<Response> {
    const key = this.keyOf(request);
    const byPath = `${key}\0${request.path ?? ''}`;
    const hit = this.lookup(key, byPath);
    this.requests.inc({ status: hit ? 'hit' : 'miss' });
    if (hit) return hit;
    return singleFlight(this.pending, byPath, () => this.fetch(request, key, byPath, ask));
  }

  private lookup(key: string, byPath: string): Response | undefined {
    let entry = this.entries.get(key);
    if (entry && !entry.response) entry = this.entries.get(byPath);
    if (!entry || entry.expires <= this.now()) return undefined;
    return entry.response;
  }

  private async fetch(request: AuthenticateRequest, key: string, byPath: string, ask: (request: AuthenticateRequest) => Promise<Response>): Promise<Response> {
    this.active.inc({ status: 'in_flight' });
    try {
      const response = await ask(request);
      this.fetches.inc({ status: 'ok' });
      this.keep(key, byPath, response);
      return response;
    } catch (err) {
      this.fetches.inc({ status: 'error' });
      throw err;
    } finally {
      this.active.dec({ status: 'in_flight' });
    }
  }

  private keep(key: string, byPath: string, response: Response): void {
    const ttl = Number(response.cacheTtlMs);
    if (!response.authenticated || !(ttl > 0) || !response.generation) return;
    this.generation.observe(response.generation);
    // Only while this process's announcements are heard: a revocation must reach the gateway.
    if (!this.generation.confirmed) return;
    // Made before the newest generation: a revocation may already have turned it.
    if (!this.generation.isCurrent(response.generation)) return;
    const expires = this.now() + ttl;
    if (!response.pathDependent) return this.entries.set(key, { response, expires });
    this.entries.set(key, { expires });
    this.entries.set(byPath, { response, expires });
  }

  /** The HMAC of what an answer depends on: every Authorization value, the client chain (by its digest) and the header
   * names, counted and length-prefixed. */
  private keyOf(request: AuthenticateRequest): string {
    const authorization = (request.headers ?? []).filter((h) => h.name === 'authorization').flatMap((h) => h.values ?? []);
    const names = (request.headers ?? []).map((h) => h.name ?? '').sort();
    const chain = request.peerCertificates ?? [];
    // A connection without a token asks with its chain and header names alone: those keys are kept per connection
    // (never one with a token, which would then be held in memory).
    const memo = this.chainMemo(chain);
    const namesKey = names.join('\n');
    const kept = authorization.length === 0 ? memo.keys.get(namesKey) : undefined;
    if (kept !== undefined) return kept;
    const hmac = createHmac('sha256', this.secret);
    hmac.update(lengthPrefixed(authorization.map((v) => Buffer.from(v, 'utf8'))));
    hmac.update(memo.digest);
    hmac.update(lengthPrefixed(names.map((n) => Buffer.from(n, 'utf8'))));
    const key = hmac.digest('base64');
    if (authorization.length === 0) this.keepKey(memo, namesKey, key);
    return key;
  }

  private chainMemo(chain: Array<string | Uint8Array>): ChainMemo {
    let memo = this.chains.get(chain);
    if (!memo) {
      const digest = createHash('sha256').update(lengthPrefixed(chain.map((cert) => (typeof cert === 'string' ? Buffer.from(cert, 'utf8') : Buffer.from(cert))))).digest();
      this.chains.set(chain, memo = { digest, keys: new Map() });
    }
    return memo;
  }

  private keepKey(memo: ChainMemo, namesKey: string, key: string): void {
    if (memo.keys.size >= KEYS_PER_CONNECTION) memo.keys.clear();
    memo.keys.set(namesKey, key);
  }
}

/** The parts, counted and each prefixed with its length, as one buffer. */
function lengthPrefixed(parts: Buffer[]): Buffer {
  const out = Buffer.allocUnsafe(4 + parts.reduce((n, p) => n + 4 + p.length, 0));
  let at = out.writeUInt32BE(parts.length, 0);
  for (const part of parts) {
    at = out.writeUInt32BE(part.length, at);
    at += part.copy(out, at);
  }
  return out;
}

