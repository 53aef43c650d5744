// An Event recorder, as the platform's controllers leave `events.svc.io/v1`
// Events for what they did. Events that say the same thing about the same object
// (same type, reason, action and regarding/related objects, whatever the note or
// the object's resourceVersion) within a few minutes make one Event with a series:
// the second occurrence is written at once, later ones only count in memory and are
// written when the series ends or every refresh, so a controller in a hot loop
// cannot flood the API. Writes go through a bounded queue; a full queue drops.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { ApiObject } from '../apimachinery/meta.js';
import type { ApiClient } from '../client/index.js';
import { NAMESPACE_DEFAULT, group } from '../names/index.js';

export type EventType = 'Normal' | 'Warning';

export interface ObjectReference {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface EventSeries { count: number; lastObservedTime: string }

/** An events/v1 Event as the recorder writes it. */
export interface RecordedEvent {
  apiVersion: string;
  kind: 'Event';
  metadata: { name: string; namespace: string };
  eventTime: string;
  series?: EventSeries;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: ObjectReference;
  related?: ObjectReference;
  note: string;
  type: EventType;
}

/** Where events go: a create, and a merge patch of an existing event's series. Answers the HTTP status (0 unreachable). */
export interface EventSink {
  create(event: RecordedEvent): Promise<number>;
  patchSeries(event: RecordedEvent): Promise<number>;
}

export interface RecorderOptions {
  /** Upstream's reportingInstance is `<controller>-<hostname>`. */
  instance?: string;
  clock?: () => number;
  /** A series with no occurrence for this long is written a last time and forgotten (upstream: 6 minutes). */
  finishMs?: number;
  /** A live series is written at least this often (upstream: 30 minutes). */
  refreshMs?: number;
  /** Events waiting to be written; more are dropped (upstream: 1000). */
  maxQueued?: number;
  /** Waits between attempts of a write the server could not take (upstream: 10 s, 12 tries). */
  retryMs?: number;
  maxTries?: number;
}

const EVENTS_API = `/apis/${group('events')}/v1`;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MAX_NAME = 253;

/** RFC 3339 with microseconds, as the API's MicroTime fields. */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** The reference an Event holds to an object; `kind` and `apiVersion` when the object does not carry them. */
export function referenceTo(obj: ApiObject, typeMeta?: { apiVersion: string; kind: string }): ObjectReference {
  const m = obj.metadata ?? {};
  const ref: ObjectReference = { kind: typeMeta?.kind ?? String(obj.kind ?? ''), apiVersion: typeMeta?.apiVersion ?? String(obj.apiVersion ?? ''), name: m.name ?? '' };
  if (m.namespace) ref.namespace = m.namespace;
  if (m.uid) ref.uid = m.uid;
  if (m.resourceVersion) ref.resourceVersion = m.resourceVersion;
  return ref;
}

/** `<name>.<nanoseconds in hex>`, or a UUID when that is no valid name (as upstream). */
export function eventName(regardingName: string, ms: number): string {
  const name = `${regardingName}.${(BigInt(ms) * 1_000_000n).toString(16)}`;
  return name.length <= MAX_NAME && DNS_SUBDOMAIN.test(name) ? name : randomUUID();
}

const sameObject = (r?: ObjectReference) => r && [r.apiVersion, r.kind, r.namespace ?? '', r.name, r.uid ?? '', r.fieldPath ?? ''];
const seriesKey = (e: RecordedEvent): string => JSON.stringify([e.type, e.action, e.reason, sameObject(e.regarding), sameObject(e.related)]);

/** The sink of the gateway's events API. */
export function apiSink(client: ApiClient): EventSink {
  const path = (e: RecordedEvent) => `${EVENTS_API}/namespaces/${e.metadata.namespace}/events`;
  const status = (p: Promise<{ status: number }>) => p.then((r) => r.status, () => 0);
  return {
    create: (e) => status(client.request('POST', path(e), e)),
    patchSeries: (e) => status(client.request('PATCH', `${path(e)}/${e.metadata.name}`, { series: e.series }, 'application/merge-patch+json')),
  };
}

interface Cached { event: RecordedEvent; dirty: boolean }

export class EventRecorder {
  private readonly cache = new Map<string, Cached>();
  private readonly queue: RecordedEvent[] = [];
  private writing = false;
  private stopped = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly clock: () => number;
  private readonly opts: Required<Omit<RecorderOptions, 'clock'>>;

  constructor(private readonly sink: EventSink, readonly reportingController: string, opts: RecorderOptions = {}) {
    this.clock = opts.clock ?? Date.now;
    this.opts = {
      instance: opts.instance ?? `${reportingController}-${hostname()}`, finishMs: opts.finishMs ?? 6 * 60_000, refreshMs: opts.refreshMs ?? 30 * 60_000,
      maxQueued: opts.maxQueued ?? 1000, retryMs: opts.retryMs ?? 10_000, maxTries: opts.maxTries ?? 12,
    };
  }

  /** Writes series that ended and refreshes live ones on timers (not needed when the owner calls `finish`/`refresh`). */
  start(): this {
    const every = (ms: number, f: () => void) => { const t = setInterval(f, ms); t.unref(); this.timers.push(t); };
    every(this.opts.finishMs, () => this.finish());
    every(this.opts.refreshMs, () => this.refresh());
    return this;
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
  }

  /** Records that `action` happened to `regarding` for `reason`; `note` says it for people. */
  event(regarding: ObjectReference, type: EventType, reason: string, action: string, note: string, related?: ObjectReference): void {
    if (this.stopped) return;
    const now = this.clock();
    const fresh: RecordedEvent = {
      apiVersion: `${group('events')}/v1`, kind: 'Event',
      metadata: { name: eventName(regarding.name, now), namespace: regarding.namespace || NAMESPACE_DEFAULT },
      eventTime: microTime(now), reportingController: this.reportingController, reportingInstance: this.opts.instance,
      action, reason, regarding, ...(related ? { related } : {}), note, type,
    };
    const key = seriesKey(fresh);
    const cached = this.cache.get(key);
    if (!cached) {
      this.cache.set(key, { event: fresh, dirty: false });
      return this.enqueue(fresh);
    }
    const first = !cached.event.series;
    cached.event.series = { count: (cached.event.series?.count ?? 1) + 1, lastObservedTime: microTime(now) };
    if (first) this.enqueue(structuredClone(cached.event));
    else cached.dirty = true;
  }

  /** Series not seen for `finishMs` are written a last time; single events that old are forgotten. */
  finish(): void {
    const limit = this.clock() - this.opts.finishMs;
    for (const [key, c] of this.cache) {
      const last = Date.parse(c.event.series?.lastObservedTime ?? c.event.eventTime);
      if (last >= limit) continue;
      this.cache.delete(key);
      if (c.dirty) this.enqueue(structuredClone(c.event));
    }
  }

  /** Live series are written with their count so far. */
  refresh(): void {
    for (const c of this.cache.values()) {
      if (!c.dirty) continue;
      c.dirty = false;
      this.enqueue(structuredClone(c.event));
    }
  }

  /** Resolves once every queued event is written (or given up). */
  async flushed(): Promise<void> {
    while (this.writing || this.queue.length) await new Promise((r) => setTimeout(r, 10));
  }

  private enqueue(event: RecordedEvent): void {
    if (this.queue.length >= this.opts.maxQueued) {
      console.error(`${this.reportingController}: too many queued events, dropped ${event.reason} for ${event.regarding.kind} ${event.regarding.name}`);
      return;
    }
    this.queue.push(event);
    if (!this.writing) void this.drain();
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      for (let event = this.queue.shift(); event; event = this.queue.shift()) await this.write(event);
    } finally {
      this.writing = false;
    }
  }

  /** A series patches its event (created when gone); a server that cannot take it now is tried again, a refusal is final. */
  private async write(event: RecordedEvent): Promise<void> {
    for (let tries = 1; !this.stopped; tries++) {
      let status = event.series ? await this.sink.patchSeries(event) : 404;
      if (status === 404) status = await this.sink.create(event);
      const retry = status === 0 || status === 429 || status >= 500 || (status === 409 && event.series !== undefined);
      if (!retry || tries >= this.opts.maxTries) return;
      await new Promise((r) => setTimeout(r, this.opts.retryMs * (0.75 + Math.random() * 0.5)));
    }
  }
}

/** A controller's recorder writing through its own client. */
export const recorderFor = (client: ApiClient, reportingController: string, opts?: RecorderOptions): EventRecorder =>
  new EventRecorder(apiSink(client), reportingController, opts).start();
