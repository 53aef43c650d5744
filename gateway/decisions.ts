// The gateway's decision cache. The authorization service says how long each
// decision stays true and at which policy generation it was made, and announces
// every new generation on NATS. A decision is kept per (user, attributes) while
// its generation is current (or, for answers that hold as long as the service's
// process, while the process is the same) and its TTL runs; a new generation
// drops what it may have turned, a new process everything. A decision the service
// says holds for any object name is kept without the name, so requests on other
// names of the same kind find it. Without NATS, or
// before this process's announcements were heard here, no announcement can be
// trusted to arrive: nothing is kept, every request asks.
import type { NatsConnection } from '@nats-io/nats-core';
import { Counter, type Registry } from 'prom-client';
import { NATS_AUTHZ_GENERATION_SUBJECT } from '../internal/names/index.js';
import type { AuthorizeRequest } from '../internal/rpc/gen/svc/authz/v1/AuthorizeRequest.js';
import type { AuthorizeResponse__Output } from '../internal/rpc/gen/svc/authz/v1/AuthorizeResponse.js';
import { GenerationFollower, type Change } from './generations.js';
import { Lru } from '../internal/apimachinery/lru.js';

interface Entry {
  response: AuthorizeResponse__Output;
  /** Survives a new generation of the same process. */
  processWide: boolean;
  expires: number;
}

const LIMIT = 10_000;
/** Stands for the name in the key of a decision that holds for any name; no object is named so (names have no NUL). */
const ANY_NAME = '\u0000any';

/** Users as they key decisions: the gateway's authentication cache hands out the same user object for a
 * credential's requests, so each is serialized once. */
const userKeys = new WeakMap<object, string>();

function userKey(user: AuthorizeRequest['user']): string {
  if (!user) return '';
  let key = userKeys.get(user);
  if (key === undefined) userKeys.set(user, key = JSON.stringify(user));
  return key;
}

/** The key of a request's decision: the user and every attribute, the name replaced when given. */
function keyOf(request: AuthorizeRequest, name?: string): string {
  const r = request.resource;
  const attributes = r
    ? [r.namespace, r.verb, r.group, r.version, r.resource, r.subresource, name ?? r.name, r.fieldSelector, r.labelSelector]
    : [request.nonResource?.path, request.nonResource?.verb];
  return `${userKey(request.user)}${r ? 'r' : 'n'}${JSON.stringify(attributes)}`;
}

export class DecisionCache {
  private readonly entries = new Lru<Entry>(LIMIT);
  private readonly generation: GenerationFollower;
  private readonly lookups = new Counter({
    name: 'svc_authorization_decision_cache_requests_total', help: 'Authorization decisions asked of the cache, by result: hit, miss, or bypass (no NATS).',
    labelNames: ['result'], registers: [],
  });

  constructor(nc: NatsConnection) {
    this.generation = new GenerationFollower(nc, NATS_AUTHZ_GENERATION_SUBJECT, (change) => this.drop(change));
  }

  start(): Promise<void> {
    return this.generation.start();
  }

  registerMetrics(registry: Registry): void {
    registry.registerMetric(this.lookups);
  }

  close(): void {
    this.generation.close();
  }

  /** The kept decision for a request, or the service's answer (kept as it says). */
  async authorize(request: AuthorizeRequest, ask: (request: AuthorizeRequest) => Promise<AuthorizeResponse__Output>): Promise<AuthorizeResponse__Output> {
    if (!this.generation.up) {
      this.lookups.inc({ result: 'bypass' });
      return ask(request);
    }
    const key = keyOf(request);
    const anyNameKey = request.resource?.name ? keyOf(request, ANY_NAME) : undefined;
    const hit = (anyNameKey !== undefined ? this.live(anyNameKey) : undefined) ?? this.live(key);
    if (hit) {
      this.lookups.inc({ result: 'hit' });
      return hit.response;
    }
    this.lookups.inc({ result: 'miss' });
    const response = await ask(request);
    this.keep(response.anyName && anyNameKey !== undefined ? anyNameKey : key, response);
    return response;
  }

  /** The entry kept under key while it holds; an expired one goes. */
  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.expires > Date.now()) return entry;
    this.entries.delete(key);
    return undefined;
  }

  /** A generation announced or answered: what it may have turned goes. */
  observe(text: string): void {
    this.generation.observe(text);
  }

  private drop(change: Change): void {
    if (change === 'all') return this.entries.clear();
    for (const [key, entry] of this.entries) if (!entry.processWide) this.entries.delete(key);
  }

  private keep(key: string, response: AuthorizeResponse__Output): void {
    if (response.validity === 'UNCACHEABLE' || !response.generation) return;
    this.generation.observe(response.generation);
    // Only while the service's announcements are heard here: a policy change must reach the gateway.
    if (!this.generation.confirmed) return;
    // Made before the newest generation: it may already be stale.
    if (!this.generation.isCurrent(response.generation)) return;
    const expires = response.validity === 'FOR_TTL' ? Date.now() + Number(response.ttlMs) : Infinity;
    this.entries.set(key, { response, processWide: response.validity === 'UNTIL_PROCESS_CHANGES', expires });
  }
}
