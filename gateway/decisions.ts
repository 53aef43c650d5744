// The gateway's decision cache. The authorization service says how long each
// decision stays true and at which policy generation it was made, and announces
// every new generation on NATS. A decision is kept per (user, attributes) while
// its generation is current (or, for answers that hold as long as the service's
// process, while the process is the same) and its TTL runs; a new generation
// drops what it may have turned, a new process everything. Without NATS, or
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
    const key = JSON.stringify(request);
    const hit = this.entries.get(key);
    if (hit && hit.expires > Date.now()) {
      this.lookups.inc({ result: 'hit' });
      return hit.response;
    }
    if (hit) this.entries.delete(key);
    this.lookups.inc({ result: 'miss' });
    const response = await ask(request);
    this.keep(key, response);
    return response;
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
