// Watch: a chunked stream of events, one document per line. A watch registers
// with the hub first, then reads what it missed from storage history, then goes
// live; revisions already sent are dropped, so nothing is missed or repeated.
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { StatusError, badRequest, gone, notAcceptable, serviceUnavailable } from '../internal/apimachinery/status.js';
import { encodeWatchEvent } from '../internal/apimachinery/protobuf/index.js';
import { MEDIA_PROTOBUF, labelKey } from '../internal/names/index.js';
import { MEDIA_CBOR, encodeCbor, encodeJson, isProtobuf, type ResponseFormat } from './negotiation.js';

/** A CBOR watch is a CBOR sequence, one encoded event per item. */
const MEDIA_CBOR_SEQ = 'application/cbor-seq';
import { listPages, type StorageEvent, type KeyValue } from '../internal/storage/client.js';
import type { Backends } from './backends.js';
import { storageError } from './backends.js';
import type { ResourceRequest } from './context.js';
import { cacheFor, selectorOf } from './reads.js';
import type { Objects } from './objects.js';
import type { KindDef } from '../internal/registry/index.js';
import { formatOf, metadataMisfit, partialMetadata, presented, presentedStatus, toTable } from './respond.js';
import { parseResourceVersion, readPlan } from './versions.js';
import type { WatchHub } from './hub.js';
import { decodeCached, type Collection } from './objectcache.js';
import { turnEntries } from './turnmap.js';
import { needsDrain, onDrain, writeEvents } from './watchwriter.js';
import { SharedTicker } from './ticker.js';
import { sharedStoredText } from './storedjson.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
interface WatchEvent {
  type: WatchEventType;
  object: unknown;
}

/** A watcher whose unsent events pass this is ended rather than holding memory. */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;
/** A watcher whose client reads nothing for this long while live events wait for it is ended (410), as upstream's
 * cache ends a watcher whose event buffer stays full: it must not hold memory or the others back. */
const STALL_MS = 2_000;
/** Live events a watch may hold while it still reads its history; more and it starts over. */
const MAX_PENDING_EVENTS = 10_000;
/** The initial state and history are written no faster than the client reads: at most this much unread at a time. */
const CATCH_UP_UNREAD_BYTES = 1024 * 1024;
/** A client that reads nothing of its catch-up for this long is treated as too slow (sooner when live events wait). */
const CATCH_UP_STALL_MS = 30_000;
/** During the catch-up, queued events are written once they reach this size. */
const CATCH_UP_WRITE_BYTES = 64 * 1024;
const BOOKMARK_INTERVAL_MS = 30_000;
/** Every watch's periodic bookmark, sent in the same turn. */
const bookmarkTicker = new SharedTicker(BOOKMARK_INTERVAL_MS);
/** How long an ended slow watcher's socket may take to drain its last events and the ERROR before it is cut. */
const SLOW_WATCHER_GRACE_MS = 30_000;
export const INITIAL_EVENTS_END = labelKey('initial-events-end');

export interface WatchOptions {
  /** The shortest server-chosen watch duration, in seconds; a watch lasts between it and twice it. */
  minRequestTimeoutSeconds: number;
  /** Told of each watch ended for falling too far behind, by resource (`configmaps`, `deployments.apps`). */
  onTooSlow?: (resource: string) => void;
}

interface WatchParams {
  revision: number | undefined;
  timeoutMs: number;
  bookmarks: boolean;
  initialEvents: boolean;
  select?: (obj: ApiObject) => boolean;
}

function watchParams(r: ResourceRequest, opts: WatchOptions): WatchParams {
  const q = r.query;
  const timeout = q.get('timeoutSeconds');
  if (timeout !== null && !/^\d+$/.test(timeout)) throw badRequest(`timeoutSeconds: Invalid value: "${timeout}"`);
  const initialEvents = q.get('sendInitialEvents') === 'true';
  if (initialEvents && q.get('resourceVersionMatch') !== 'NotOlderThan') {
    throw badRequest('sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless resourceVersionMatch is set to NotOlderThan');
  }
  if (!initialEvents && q.get('resourceVersionMatch')) {
    throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
  }
  const min = opts.minRequestTimeoutSeconds;
  const fieldSelector = r.info.name ? [q.get('fieldSelector'), `metadata.name=${r.info.name}`].filter(Boolean).join(',') : q.get('fieldSelector');
  const selectQuery = new URLSearchParams(q);
  if (fieldSelector) selectQuery.set('fieldSelector', fieldSelector);
  return {
    revision: parseResourceVersion(q.get('resourceVersion')),
    timeoutMs: (timeout !== null ? Number(timeout) : min + Math.random() * min) * 1000,
    bookmarks: q.get('allowWatchBookmarks') === 'true',
    initialEvents,
    select: selectorOf(r.def, selectQuery),
  };
}

/** Objects decoded from one stored value, by the kind version they were decoded for: every
 * watcher of a change shares one decode (the hub hands them the same event). */
const decodedValues = turnEntries<KeyValue, KindDef, ApiObject>();

function decodeShared(objects: Objects, kv: KeyValue, revision: number): ApiObject {
  const byKind = decodedValues(kv);
  let obj = byKind.get(objects.def);
  if (!obj) byKind.set(objects.def, (obj = objects.decode(kv, revision)));
  return obj;
}

/** Encoded events by the decoded object they carry: every watcher asking the same form shares one encoding. */
const encodedEvents = turnEntries<object, string, Buffer>();

/** Live events' bytes by the event, then by the form of the watchers without a selector that share them. */
const liveBytes = turnEntries<StorageEvent, string, Buffer>();
/** The live event's bytes last asked, and their form. */
let lastShared: { ev: StorageEvent; form: string; bytes: Buffer } | undefined;
/** A number per kind version, for the keys of liveBytes. */
const defIds = new WeakMap<KindDef, number>();
let nextDefId = 0;

function defId(def: KindDef): number {
  let id = defIds.get(def);
  if (id === undefined) defIds.set(def, (id = nextDefId++));
  return id;
}

/** The watch event a storage change becomes for a watcher with a selector. */
export function toWatchEvent(objects: Objects, ev: StorageEvent, select?: (obj: ApiObject) => boolean): WatchEvent | undefined {
  const obj = decodeShared(objects, ev.kv!, ev.revision);
  if (ev.type === 'DELETE') return !select || select(obj) ? { type: 'DELETED', object: obj } : undefined;
  if (!ev.prevKv) return !select || select(obj) ? { type: 'ADDED', object: obj } : undefined;
  if (!select) return { type: 'MODIFIED', object: obj };
  const now = select(obj);
  const previous = decodeShared(objects, ev.prevKv, ev.revision);
  const before = select(previous);
  if (now) return { type: before ? 'MODIFIED' : 'ADDED', object: obj };
  return before ? { type: 'DELETED', object: previous } : undefined;
}

/** The current state as synthetic ADDED events, and the revision it was read at. */
async function initialState(r: ResourceRequest, backends: Backends, select?: (obj: ApiObject) => boolean): Promise<{ events: WatchEvent[]; revision: number }> {
  const events: WatchEvent[] = [];
  let revision = 0;
  for await (const page of listPages(backends.storage, r.objects.prefix(r.info.namespace), 500)) {
    revision = page.revision;
    for (const kv of page.items) {
      const obj = r.objects.decode(kv);
      if (!select || select(obj)) events.push({ type: 'ADDED', object: obj });
    }
  }
  return { events, revision };
}

/** A JSON watch event of an object's JSON text, as encodeJson writes it. */
const jsonEvent = (type: WatchEventType, object: string): Buffer => Buffer.from(`{"type":"${type}","object":${object}}\n`, 'utf8');

/** The current state from the gateway's cache, as synthetic ADDED events decoded as they are sent; with `asText`,
 * events of the cached JSON itself (for a watch of the objects as stored, in JSON, with no selector). */
function cachedState(r: ResourceRequest, c: Collection, select: ((obj: ApiObject) => boolean) | undefined, asText: boolean):
  { events: Iterable<WatchEvent | Buffer>; revision: number } {
  const revision = c.revision;
  const { entries } = c.page(r.objects.prefix(r.info.namespace), 0);
  function* events(): Generator<WatchEvent | Buffer> {
    for (const [, json] of entries) {
      if (asText) {
        yield jsonEvent('ADDED', json);
        continue;
      }
      const obj = decodeCached(r.def, json);
      if (!select || select(obj)) yield { type: 'ADDED', object: obj };
    }
  }
  return { events: events(), revision };
}

/** The changes after a revision, from storage history; 410 Gone when compacted. */
function history(backends: Backends, prefix: string, after: number): Promise<StorageEvent[]> {
  return new Promise((resolve, reject) => {
    const events: StorageEvent[] = [];
    const stream = backends.storage.watch(prefix, after, false);
    stream.on('data', (ev: StorageEvent) => { if (ev.type !== 'PROGRESS') events.push(ev); });
    stream.on('error', reject);
    stream.on('end', () => resolve(events));
  });
}

export async function serveWatch(r: ResourceRequest, backends: Backends, hub: WatchHub, opts: WatchOptions): Promise<void> {
  const params = watchParams(r, opts);
  const format = formatOf(r.ctx, r.def);
  if (format.as === 'PartialObjectMetadataList') throw metadataMisfit(r.def, false);
  if (format.mediaType === 'application/yaml') throw notAcceptable(['application/json', MEDIA_PROTOBUF, ...(r.ctx.state.cbor ? [MEDIA_CBOR] : [])]);
  if (!hub.ready) throw serviceUnavailable('watch is unavailable until storage and the event stream are reachable');
  const stream = new WatchStream(r, format, opts);
  const unregister = hub.register(r.objects.prefix(r.info.namespace), {
    onEvent: (ev) => stream.live(ev, params.select),
    onFail: (reason) => stream.fail(serviceUnavailable(reason)),
    flush: () => stream.flush(),
  });
  try {
    await stream.catchUp(backends, params);
  } catch (err) {
    unregister();
    throw err instanceof StatusError ? err : storageError(err, r.objects.gr, r.info.name);
  }
  stream.schedule(params, hub, unregister);
}

class WatchStream {
  private sent = 0;
  /** Live events that came during the catch-up, sent after it. */
  private pending: StorageEvent[] | undefined = [];
  /** Encoded events not yet handed to the socket: flush() writes them together. */
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  /** Since when the client has left what it was sent unread (performance.now()); undefined while it keeps up. */
  private blockedSince: number | undefined;
  private unreadWhenBlocked = 0;
  private ended = false;
  /** Wakes a catch-up waiting for the client once the watch is over. */
  private wake?: () => void;
  /** Ends the watch at its timeout. */
  private timeout?: NodeJS.Timeout;
  private stopBookmarks?: () => void;
  /** Stops following the drains of the response and of its connection, which outlives the watch. */
  private offDrain?: () => void;
  /** Where the events of a kind converting through a webhook are in their turn. */
  private converted: Promise<void> = Promise.resolve();
  /** The form of this watch's events, shared with the other watches without a selector that have it (none for
   * Tables, made per request, and for kinds converting through a webhook). */
  private readonly form: string | undefined;
  /** How this watch's JSON events are made from stored text (storedjson.ts): 'object' for the objects as stored, or
   * the opening of a PartialObjectMetadata up to its metadata; undefined when they are decoded and encoded. */
  private readonly textForm: string | undefined;

  constructor(private readonly r: ResourceRequest, private readonly format: ResponseFormat, private readonly opts: WatchOptions) {
    const { as, metaVersion, mediaType } = format;
    const spelling = as === 'PartialObjectMetadata' ? `meta ${metaVersion}` : r.info.groupAlias ?? '';
    if (as !== 'Table' && !r.def.convert) this.form = `${defId(r.def)} ${mediaType} ${spelling}`;
    if (mediaType === 'application/json' && !r.def.fromStorage && !r.def.convert && !r.info.groupAlias) {
      if (as === 'object') this.textForm = 'object';
      if (as === 'PartialObjectMetadata') this.textForm = `{"kind":"PartialObjectMetadata","apiVersion":${JSON.stringify(metaVersion)},"metadata":`;
    }
  }

  /** Sends the initial state and history, then what arrived live meanwhile. */
  async catchUp(backends: Backends, params: WatchParams): Promise<void> {
    let from = params.revision ?? 0;
    let initial: Iterable<WatchEvent | Buffer> = [];
    let missed: StorageEvent[] = [];
    if (!from || params.initialEvents) {
      const cached = await cacheFor(this.r, backends, readPlan(params.revision));
      const asText = !params.select && this.textForm === 'object';
      const state = cached ? cachedState(this.r, cached, params.select, asText) : await initialState(this.r, backends, params.select);
      initial = state.events;
      from = state.revision;
      // From the cache, the state is of the revision the live events continue from: nothing is missed.
      if (!cached) missed = await history(backends, this.r.objects.prefix(this.r.info.namespace), from);
    } else if (!(await backends.cache?.serving(this.r.objects.prefix(''), { mode: 'Exact', revision: from }))) {
      // Unless nothing in the collection changed since that revision, the changes since come from storage's history.
      missed = await history(backends, this.r.objects.prefix(this.r.info.namespace), from);
    }
    if (this.ended) return; // failed or fell behind meanwhile
    this.open();
    for (const ev of initial) {
      if (Buffer.isBuffer(ev)) this.enqueue(ev);
      else this.write(ev);
      if (!(await this.paced())) return;
    }
    this.sent = from;
    if (params.initialEvents) this.bookmark(from, true);
    for (const ev of missed) {
      this.live(ev, params.select, true);
      if (!(await this.paced())) return;
    }
    const buffered = this.pending ?? [];
    this.pending = undefined;
    for (const ev of buffered) this.live(ev, params.select);
    this.flush();
  }

  live(ev: StorageEvent, select?: (obj: ApiObject) => boolean, fromHistory = false): void {
    if (this.pending && !fromHistory) {
      if (this.pending.length >= MAX_PENDING_EVENTS) this.tooSlow();
      else this.pending.push(ev);
      return;
    }
    if (ev.revision <= this.sent || this.ended) return;
    this.sent = ev.revision;
    if (!select && this.form !== undefined) {
      this.enqueue(this.sharedBytes(ev, this.form));
      return;
    }
    const out = toWatchEvent(this.r.objects, ev, select);
    if (out) this.write(out);
  }

  /** A change's bytes in a form, encoded by the first watch of that form without a selector and shared by the others
   * (the last ones asked are kept at hand: the watchers of a change ask one after another, most in the same form). */
  private sharedBytes(ev: StorageEvent, form: string): Buffer {
    if (lastShared?.ev === ev && lastShared.form === form) return lastShared.bytes;
    const forms = liveBytes(ev);
    let bytes = forms.get(form);
    if (!bytes) forms.set(form, (bytes = this.storedTextEvent(ev) ?? this.encoded(toWatchEvent(this.r.objects, ev)!)));
    lastShared = { ev, form, bytes };
    return bytes;
  }

  /** A change as a JSON event made from the stored text (storedjson.ts) rather than decoded and encoded again: for
   * watches of the objects as stored or of their metadata; undefined for other forms. */
  private storedTextEvent(ev: StorageEvent): Buffer | undefined {
    if (!this.textForm) return undefined;
    const text = sharedStoredText(ev.kv!, ev.revision);
    const type: WatchEventType = ev.type === 'DELETE' ? 'DELETED' : ev.prevKv ? 'MODIFIED' : 'ADDED';
    if (this.textForm === 'object') return jsonEvent(type, text.json);
    const at = text.metadata;
    return at && jsonEvent(type, `${this.textForm}${text.json.slice(at.start, at.end)}}`);
  }

  fail(err: StatusError): void {
    if (this.ended) return;
    if (!this.r.ctx.res.headersSent) this.open();
    this.write({ type: 'ERROR', object: presentedStatus(this.r.ctx, err.toStatus()) });
    this.end();
  }

  /** Writes the queued live events in one piece, unless the client has not read what it was sent: then they wait
   * for its socket to drain, and a client that reads nothing for STALL_MS meanwhile is let go. */
  flush(): void {
    if (this.ended) return;
    if (this.blockedSince === undefined && (this.pending || !needsDrain(this.r.ctx.res))) {
      if (!this.pending) this.writeQueued();
      return;
    }
    this.blocked();
    const waiting = this.queue.length > 0 || (this.pending?.length ?? 0) > 0;
    if (waiting && performance.now() - this.blockedSince! > STALL_MS) this.tooSlow();
  }

  /** Notes that the client has much unread; the clock restarts whenever it reads some. */
  private blocked(): void {
    const unread = this.r.ctx.res.writableLength;
    if (this.blockedSince === undefined || unread < this.unreadWhenBlocked) this.blockedSince = performance.now();
    this.unreadWhenBlocked = unread;
  }

  schedule(params: WatchParams, hub: WatchHub, unregister: () => void): void {
    const res = this.r.ctx.res;
    let unserved: (() => void) | undefined;
    const stop = () => { unregister(); unserved?.(); this.end(); };
    // Over already (failed, too slow, or the client left during the catch-up): its 'close' may have passed.
    if (this.ended || res.destroyed) { stop(); return; }
    this.timeout = setTimeout(stop, params.timeoutMs);
    // A custom kind's watch ends once its CRD changes or goes: the client watches again what is served then.
    const { def, registry } = this.r;
    if (def.custom) unserved = registry.onChange(() => { if (registry.lookup(def.group, def.version, def.resource) !== def) stop(); });
    if (params.bookmarks) {
      this.stopBookmarks = bookmarkTicker.add(() => { this.bookmark(Math.max(this.sent, hub.currentRevision)); this.flush(); });
    }
    res.on('close', stop);
    this.r.ctx.req.on('close', stop);
  }

  private open(): void {
    this.r.ctx.respond = false;
    const type = isProtobuf(this.format.mediaType) ? `${this.format.mediaType};stream=watch`
      : this.format.mediaType === MEDIA_CBOR ? MEDIA_CBOR_SEQ : 'application/json';
    const res = this.r.ctx.res;
    res.writeHead(200, { 'Content-Type': type, 'Cache-Control': 'no-cache, private', 'X-Content-Type-Options': 'nosniff' });
    res.flushHeaders();
    this.offDrain = onDrain(res, () => {
      this.blockedSince = undefined;
      this.flush();
    });
  }

  private bookmark(revision: number, initialEnd = false): void {
    if (!this.pending) this.sent = Math.max(this.sent, revision);
    const metadata: Record<string, unknown> = { resourceVersion: String(revision) };
    if (initialEnd) metadata.annotations = { [INITIAL_EVENTS_END]: 'true' };
    this.write({ type: 'BOOKMARK', object: { kind: this.r.def.kind, apiVersion: this.r.objects.apiVersion, metadata } });
  }

  /** Queues an event for the next flush. */
  private write(ev: WatchEvent): void {
    if (this.ended) return;
    if (this.r.def.convert) {
      this.convertThenWrite(ev);
      return;
    }
    this.enqueue(this.encoded(ev));
  }

  /** A kind whose conversion takes a call (a conversion webhook): its events are converted, then written in order. */
  private convertThenWrite(ev: WatchEvent): void {
    const converts = ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED';
    this.converted = this.converted
      .then(async () => (converts ? { ...ev, object: (await this.r.objects.inVersion([ev.object as ApiObject]))[0] } : ev))
      .then((out) => { this.enqueue(this.encoded(out)); this.flush(); }, (err: unknown) => {
        this.enqueue(this.encoded({ type: 'ERROR', object: presentedStatus(this.r.ctx, (err instanceof StatusError ? err : serviceUnavailable(String(err))).toStatus()) }));
        this.end();
      });
  }

  private enqueue(bytes: Buffer): void {
    if (this.ended) return;
    this.queue.push(bytes);
    this.queuedBytes += bytes.length;
    if (this.queuedBytes > MAX_QUEUED_BYTES) this.tooSlow();
  }

  private writeQueued(): void {
    if (this.queue.length === 0) return;
    if (!this.r.ctx.res.destroyed) writeEvents(this.r.ctx.res, this.queue);
    this.queue = [];
    this.queuedBytes = 0;
  }

  /** The event in this watch's form, shared with other watches of the same form (Tables are per request). */
  private encoded(ev: WatchEvent): Buffer {
    const object = ev.object as ApiObject;
    const { as, metaVersion } = this.format;
    if (as === 'Table' && ev.type !== 'ERROR' && ev.type !== 'BOOKMARK') {
      return this.encode(ev.type, toTable(this.r.ctx, this.r.def, [object], { resourceVersion: object.metadata?.resourceVersion }, metaVersion!));
    }
    const forms = encodedEvents(object);
    const metadataOnly = as === 'PartialObjectMetadata' && ev.type !== 'ERROR';
    const key = `${ev.type} ${this.format.mediaType} ${metadataOnly ? metaVersion : this.r.info.groupAlias ?? ''}`;
    let bytes = forms.get(key);
    if (bytes === undefined) {
      bytes = this.encode(ev.type, metadataOnly ? partialMetadata(object, metaVersion!) : presented(this.r.ctx, object, this.r.def));
      forms.set(key, bytes);
    }
    return bytes;
  }

  /** An event's bytes: JSON as bytes too, so the watchers sharing it write them without encoding the text each. */
  private encode(type: WatchEventType, object: unknown): Buffer {
    if (isProtobuf(this.format.mediaType)) return encodeWatchEvent(type, object as Record<string, unknown>);
    if (this.format.mediaType === MEDIA_CBOR) return encodeCbor({ type, object });
    return Buffer.from(encodeJson({ type, object }), 'utf8');
  }

  /** Writes the catch-up's queued events once there are enough of them, and waits while the client has much
   * unread; false once the watch is over. */
  private async paced(): Promise<boolean> {
    const res = this.r.ctx.res;
    if (this.queuedBytes >= CATCH_UP_WRITE_BYTES) this.writeQueued();
    if (res.writableLength > CATCH_UP_UNREAD_BYTES && !this.ended) {
      this.blocked();
      const progressed = await new Promise<boolean>((resolve) => {
        const settle = (ok: boolean) => { clearTimeout(timer); offDrain(); res.off('close', onward); this.wake = undefined; resolve(ok); };
        const onward = () => settle(true);
        const timer = setTimeout(() => settle(false), CATCH_UP_STALL_MS);
        const offDrain = onDrain(res, onward);
        res.on('close', onward);
        this.wake = onward;
      });
      if (!progressed) this.tooSlow();
    }
    return !this.ended && !res.destroyed;
  }

  /** A watcher this far behind is told to list again (410, as upstream's cache ends too slow watchers) and
   * let go; the socket goes if it never drains. */
  private tooSlow(): void {
    if (this.ended) return;
    const res = this.r.ctx.res;
    const { group, resource } = this.r.objects.gr;
    this.opts.onTooSlow?.(group ? `${resource}.${group}` : resource);
    if (!res.headersSent) this.open();
    this.queue = [];
    this.queuedBytes = 0;
    res.write(this.encode('ERROR', gone('the watch fell too far behind; list again').toStatus()));
    this.end();
    setTimeout(() => res.destroy(), SLOW_WATCHER_GRACE_MS).unref();
  }

  /** Ends the response after the events still queued. */
  private end(): void {
    if (this.ended) return;
    const res = this.r.ctx.res;
    if (res.headersSent) this.writeQueued();
    this.ended = true;
    clearTimeout(this.timeout);
    this.stopBookmarks?.();
    this.offDrain?.();
    this.wake?.();
    if (res.headersSent) res.end();
  }
}
