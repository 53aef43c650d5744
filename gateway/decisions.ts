// The gateway's decision cache. The authorization service says how long each
// decision stays true and at which policy generation it was made, and announces
// every new generation on NATS. A decision is kept per (user, attributes) while
// its generation is current (or, for answers that hold as long as the service's
// process, while the process is the same) and its TTL runs; a new generation
// drops what it may have turned, a new process everything. Without NATS no
// announcement can be trusted to arrive: nothing is kept, every request asks.
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { Counter, type Registry } from 'prom-client';
import { NATS_AUTHZ_GENERATION_SUBJECT } from '../internal/names/index.js';
import type { AuthorizeRequest } from '../internal/rpc/gen/svc/authz/v1/AuthorizeRequest.js';
import type { AuthorizeResponse__Output } from '../internal/rpc/gen/svc/authz/v1/AuthorizeResponse.js';

interface Generation {
  epoch: string;
  counter: number;
}

interface Entry {
  response: AuthorizeResponse__Output;
  /** Survives a new generation of the same process. */
  processWide: boolean;
  expires: number;
}

const LIMIT = 10_000;

function parseGeneration(text: string): Generation | undefined {
  const dot = text.lastIndexOf('.');
  const counter = Number(text.slice(dot + 1));
  if (dot <= 0 || !Number.isInteger(counter)) return undefined;
  return { epoch: text.slice(0, dot), counter };
}

export class DecisionCache {
  private readonly entries = new Map<string, Entry>();
  private generation?: Generation;
  private natsUp = false;
  private subscription?: Subscription;
  private readonly lookups = new Counter({
    name: 'svc_authorization_decision_cache_requests_total', help: 'Authorization decisions asked of the cache, by result: hit, miss, or bypass (no NATS).',
    labelNames: ['result'], registers: [],
  });

  constructor(private readonly nc: NatsConnection) {}

  async start(): Promise<void> {
    this.subscription = this.nc.subscribe(NATS_AUTHZ_GENERATION_SUBJECT, { callback: (err, msg) => { if (!err) this.observe(msg.string()); } });
    await this.nc.flush();
    this.natsUp = true;
    void this.followNats();
  }

  registerMetrics(registry: Registry): void {
    registry.registerMetric(this.lookups);
  }

  close(): void {
    this.subscription?.unsubscribe();
    this.natsUp = false;
    this.entries.clear();
  }

  /** The kept decision for a request, or the service's answer (kept as it says). */
  async authorize(request: AuthorizeRequest, ask: (request: AuthorizeRequest) => Promise<AuthorizeResponse__Output>): Promise<AuthorizeResponse__Output> {
    if (!this.natsUp) {
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
    const next = parseGeneration(text);
    if (!next) return;
    const current = this.generation;
    if (current && current.epoch === next.epoch && current.counter >= next.counter) return;
    if (!current || current.epoch !== next.epoch) this.entries.clear();
    else for (const [key, entry] of this.entries) if (!entry.processWide) this.entries.delete(key);
    this.generation = next;
  }

  private keep(key: string, response: AuthorizeResponse__Output): void {
    if (response.validity === 'UNCACHEABLE' || !response.generation || !this.natsUp) return;
    this.observe(response.generation);
    const made = parseGeneration(response.generation);
    const current = this.generation;
    // Made before the newest generation: it may already be stale.
    if (!made || !current || made.epoch !== current.epoch || made.counter !== current.counter) return;
    const expires = response.validity === 'FOR_TTL' ? Date.now() + Number(response.ttlMs) : Infinity;
    if (this.entries.size >= LIMIT) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { response, processWide: response.validity === 'UNTIL_PROCESS_CHANGES', expires });
  }

  /** NATS lost: announcements may be missed, so nothing is kept until it is back. */
  private async followNats(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') {
        this.natsUp = false;
        this.entries.clear();
      } else if (status.type === 'reconnect') {
        this.entries.clear();
        this.generation = undefined;
        this.natsUp = true;
      }
    }
  }
}
