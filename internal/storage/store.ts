// The store: one LevelDB key space (see records.ts) with a single global revision.
// Writes are group-committed: they queue while a batch is being synced, then the
// writer checks every queued write against the current state (and the writes
// before it in the same batch), gives them consecutive revisions and commits them
// all in one synced LevelDB batch. Reads of the newest state use the LevelDB
// snapshot taken right after the commit of the store revision they report, so a
// read and its revision always agree. Nothing of the data is kept in memory: the
// gateway serves reads from its own cache, and the readers left here (its fallback
// reads, the start-up lists of reflectors, the preconditions of writes) read LevelDB.
import { ClassicLevel } from 'classic-level';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { RpcError, grpc } from '../rpc/index.js';
import { activeContext, trace, withSpan, type Context } from '../tracing/index.js';
import type {
  CommitListener, GetResult, ListOptions, ListResult, Preconditions, ReadOptions, Revisions, StorageBackend, WatchOptions, WriteResult,
} from './backend.js';
import { checkKey, checkList, checkNotFuture, checkRevision, checkWatch, invalid, notFound, outOfRange, unavailable } from './checks.js';
import { change, preconditionsOf, refusal, type Write } from './changes.js';
import { decodeEvent, encodeEvent, type KeyValue, type StorageEvent } from './events.js';
import { LiveFeed } from './feed.js';
import {
  META_COMPACTED, META_REVISION, MARK_RANGE, TOMBSTONE, currentKey, currentRange, decodeRecord, encodeRecord,
  historyKey, historyRevision, keyOfCurrent, markKey, markTime, parseVersionKey, readUint64, uint64, versionKey, versionRange,
} from './records.js';

type Level = ClassicLevel<Buffer, Buffer>;
type Snapshot = ReturnType<Level['snapshot']>;
type BatchOp = { type: 'put'; key: Buffer; value: Buffer } | { type: 'del'; key: Buffer };

export interface StoreOptions {
  /** How long history stays readable, in ms (default 5 minutes; 0 keeps it until compacted explicitly). */
  historyWindowMs?: number;
  /** How often history is compacted by the window, in ms (default window/10 within 1 s..60 s; 0: never). */
  compactionIntervalMs?: number;
  /** Live events a watch may have waiting before it is ended with RESOURCE_EXHAUSTED. */
  maxWatchBacklog?: number;
  /** Where problems are reported, one line each. */
  log?: (line: string) => void;
}

interface QueuedWrite extends Write {
  context: Context;
  resolve(result: WriteResult): void;
  reject(err: Error): void;
}

const DEFAULT_WINDOW_MS = 5 * 60_000;
const HISTORY_CHUNK = 1000;

const clamp = (n: number, min: number, max: number): number => Math.min(max, Math.max(min, n));

/** A snapshot of the store at one revision, closed once superseded and no longer read. */
class ReadView {
  private readers = 0;
  private superseded = false;
  constructor(readonly snapshot: Snapshot, readonly revision: number) {}
  acquire(): this {
    this.readers++;
    return this;
  }
  release(): void {
    if (--this.readers === 0 && this.superseded) this.close();
  }
  supersede(): void {
    this.superseded = true;
    if (this.readers === 0) this.close();
  }
  private close(): void {
    this.snapshot.close().catch(() => undefined);
  }
}

/** When a revision was committed: the newest revision at about `time`. */
interface Mark { time: number; revision: number }

export class Store implements StorageBackend {
  private view: ReadView;
  private compacted: number;
  private queue: QueuedWrite[] = [];
  private writing?: Promise<void>;
  private compacting: Promise<void> = Promise.resolve();
  /** History at or below this revision is deleted; 0 after open, so leftovers of an interrupted compaction go too. */
  private droppedUpTo = 0;
  private readonly feeds = new Set<LiveFeed>();
  private readonly commitListeners = new Set<CommitListener>();
  private readonly windowMs: number;
  private readonly markIntervalMs: number;
  /** The newest commit, marked or not: a write too close to the last mark must still age out of the window. */
  private lastCommit?: Mark;
  private readonly compactionTimer?: NodeJS.Timeout;
  private closing?: Promise<void>;

  private constructor(private readonly db: Level, revision: number, compacted: number,
    private readonly marks: Mark[], private readonly options: StoreOptions) {
    this.view = new ReadView(db.snapshot(), revision);
    this.compacted = compacted;
    this.windowMs = options.historyWindowMs ?? DEFAULT_WINDOW_MS;
    this.markIntervalMs = clamp(this.windowMs / 100, 10, 1000);
    const interval = options.compactionIntervalMs ?? clamp(this.windowMs / 10, 1000, 60_000);
    if (interval > 0 && this.windowMs > 0) {
      this.compactionTimer = setInterval(() => {
        this.compact(0).catch((err) => this.log(`storage: compaction failed: ${(err as Error).message}`));
      }, interval).unref();
    }
  }

  /** Opens (creating if needed) the store in a directory. */
  static async open(dir: string, options: StoreOptions = {}): Promise<Store> {
    mkdirSync(dirname(dir), { recursive: true });
    const db: Level = new ClassicLevel<Buffer, Buffer>(dir, {
      keyEncoding: 'buffer', valueEncoding: 'buffer', cacheSize: 64 << 20, writeBufferSize: 16 << 20,
    });
    await db.open();
    const meta = (key: Buffer): number => {
      const value = db.getSync(key);
      return value ? readUint64(value) : 0;
    };
    const marks = (await db.iterator(MARK_RANGE).all()).map(([k, v]) => ({ time: markTime(k), revision: readUint64(v) }));
    return new Store(db, meta(META_REVISION), meta(META_COMPACTED), marks, options);
  }

  /** The newest committed revision. */
  get revision(): number {
    return this.view.revision;
  }

  /** Reads and watches need a revision at or above this one. */
  get compactedRevision(): number {
    return this.compacted;
  }

  /** How many watches are following live changes. */
  get activeWatches(): number {
    return this.feeds.size;
  }

  /** Calls listener after every commit, in revision order, once the writes are acknowledged. */
  onCommit(listener: CommitListener): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /** Every revision is a change's here: there is no progress to report. */
  onProgress(): () => void {
    return () => undefined;
  }

  async currentRevision(): Promise<Revisions> {
    return { revision: this.revision, compactedRevision: this.compacted };
  }

  // ---- reads

  async get(key: string, revision = 0, options: ReadOptions = {}): Promise<GetResult> {
    checkKey(key);
    const view = this.readView();
    const at = this.readableRevision(revision, options.allowCached);
    if (at === view.revision) {
      const record = this.db.getSync(currentKey(key), { snapshot: view.snapshot });
      if (!record) throw notFound(key);
      return { kv: decodeRecord(key, record), revision: at };
    }
    view.acquire();
    try {
      const [entry] = await this.db.iterator({
        gte: versionKey(key, 0), lte: versionKey(key, at, true), reverse: true, limit: 1, snapshot: view.snapshot,
      }).all();
      if (!entry || parseVersionKey(entry[0]).deleted) throw notFound(key);
      return { kv: decodeRecord(key, entry[1]), revision: at };
    } finally {
      view.release();
    }
  }

  /** The keys under a prefix (ending in `/`) as of one revision, a page at a time. */
  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    const { revision = 0, limit = 0, continueAfter = '' } = options;
    checkList(prefix, limit, continueAfter);
    const view = this.readView().acquire();
    try {
      const at = this.readableRevision(revision, options.allowCached && !continueAfter);
      if (at === view.revision) return { ...await this.listNewest(prefix, continueAfter, limit, view.snapshot), revision: at };
      const page = await this.listAt(prefix, continueAfter, limit, at, view.snapshot);
      const last = page.items[page.items.length - 1]?.key ?? continueAfter;
      const remaining = page.more ? await this.remainingAt(prefix, last, at) : 0;
      return { items: page.items, revision: at, more: page.more, remaining };
    } finally {
      view.release();
    }
  }

  /** A page of the current values, and how many keys under the prefix follow it. */
  private async listNewest(prefix: string, after: string, limit: number, snapshot: Snapshot) {
    const entries = await this.db.iterator({ ...currentRange(prefix, after || undefined), snapshot, limit: limit || -1 }).all();
    const items = entries.map(([dbKey, record]) => decodeRecord(keyOfCurrent(dbKey), record));
    const last = items[items.length - 1]?.key;
    const remaining = limit && items.length === limit ? await this.countCurrent(prefix, last!, snapshot) : 0;
    return { items, more: remaining > 0, remaining };
  }

  /** How many keys under a prefix after `after` have a current value in a snapshot. */
  private async countCurrent(prefix: string, after: string, snapshot: Snapshot): Promise<number> {
    const keys = this.db.keys({ ...currentRange(prefix, after || undefined), snapshot });
    let count = 0;
    try {
      for (let chunk = await keys.nextv(HISTORY_CHUNK); chunk.length > 0; chunk = await keys.nextv(HISTORY_CHUNK)) count += chunk.length;
    } finally {
      await keys.close();
    }
    return count;
  }

  /** Lists through the version index: per key, the newest version at or below the revision. */
  private async listAt(prefix: string, after: string, limit: number, revision: number, snapshot: Snapshot) {
    const range = versionRange(prefix, after || undefined);
    const items: KeyValue[] = [];
    const page = this.db.iterator({ ...range, snapshot });
    const chunk = limit ? Math.min(HISTORY_CHUNK, limit + 16) : HISTORY_CHUNK;
    try {
      const rest = await newestVersions(() => page.nextv(chunk), revision, (key, record) => {
        if (limit && items.length === limit) return false;
        items.push(decodeRecord(key, record!));
        return true;
      });
      return { items, more: rest !== undefined };
    } finally {
      await page.close();
    }
  }

  /**
   * How many keys under a prefix after `after` existed at an older revision: the
   * count now, corrected by the changes since that revision (a key's first change
   * tells whether it existed then, its last whether it exists now).
   */
  private async remainingAt(prefix: string, after: string, revision: number): Promise<number> {
    const now = this.readView().acquire();
    const changed = new Map<string, { then: boolean; now: boolean }>();
    const afterBytes = Buffer.from(after);
    const history = this.db.iterator({ gt: historyKey(revision), lte: historyKey(now.revision), snapshot: now.snapshot });
    let count: number;
    try {
      count = await this.countCurrent(prefix, after, now.snapshot);
      for (let entries = await history.nextv(HISTORY_CHUNK); entries.length > 0; entries = await history.nextv(HISTORY_CHUNK)) {
        for (const [, payload] of entries) {
          const event = decodeEvent(payload);
          const key = event.kv!.key;
          if (!key.startsWith(prefix) || Buffer.compare(Buffer.from(key), afterBytes) <= 0) continue;
          const state = changed.get(key) ?? { then: Boolean(event.prevKv), now: false };
          state.now = event.type !== 'DELETE';
          changed.set(key, state);
        }
      }
    } finally {
      await history.close();
      now.release();
    }
    for (const { then, now: exists } of changed.values()) count += Number(then) - Number(exists);
    return count;
  }

  private readView(): ReadView {
    if (this.closing) throw unavailable();
    return this.view;
  }

  /** The revision a read at `revision` (0: newest) is served at; with `anyNewer`, a read of any state at least as new
   * as `revision`: the newest, compacted revisions being fine. */
  private readableRevision(revision: number, anyNewer = false): number {
    checkRevision(revision);
    const at = this.view.revision;
    checkNotFuture(revision, at);
    if (revision === 0 || anyNewer) return at;
    if (revision < this.compacted) throw outOfRange('compacted', `revision ${revision} is compacted (oldest readable: ${this.compacted})`);
    return revision;
  }

  // ---- writes

  create(key: string, value: Uint8Array, uid = ''): Promise<WriteResult> {
    return this.enqueue({ op: 'create', key, value: asBuffer(value), uid, preconditions: preconditionsOf() });
  }

  update(key: string, value: Uint8Array, preconditions: Preconditions = {}): Promise<WriteResult> {
    return this.enqueue({ op: 'update', key, value: asBuffer(value), uid: '', preconditions: preconditionsOf(preconditions) });
  }

  delete(key: string, preconditions: Preconditions = {}): Promise<WriteResult> {
    return this.enqueue({ op: 'delete', key, value: TOMBSTONE, uid: '', preconditions: preconditionsOf(preconditions) });
  }

  private enqueue(write: Write): Promise<WriteResult> {
    try {
      checkKey(write.key);
      checkRevision(write.preconditions.modRevision, 'mod_revision precondition');
      if (Buffer.byteLength(write.uid) > 0xffff) throw invalid('uid is too long');
      if (this.closing) throw unavailable();
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ ...write, context: activeContext(), resolve, reject });
      this.writing ??= this.writeLoop();
    });
  }

  private async writeLoop(): Promise<void> {
    await null; // writes issued in the same tick join the first batch
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      await this.commit(batch);
    }
    this.writing = undefined;
  }

  private async commit(writes: QueuedWrite[]): Promise<void> {
    const { ops, applied, refused, revision, mark, time } = this.plan(writes);
    if (applied.length > 0) {
      try {
        await withSpan('storage commit', () => ({ 'storage.writes': applied.length, 'storage.revision': revision }), (span) => {
          span?.addLinks(applied.slice(1).flatMap(({ write }) => {
            const linked = trace.getSpanContext(write.context);
            return linked ? [{ context: linked }] : [];
          }));
          return this.db.batch(ops, { sync: true });
        }, { parent: applied[0].write.context });
      } catch (err) {
        this.log(`storage: commit of ${applied.length} writes failed: ${(err as Error).message}`);
        for (const w of writes) w.reject(new RpcError(grpc.status.INTERNAL, `commit failed: ${(err as Error).message}`));
        return;
      }
      if (mark) this.marks.push(mark);
      this.lastCommit = { time, revision };
      const superseded = this.view;
      this.view = new ReadView(this.db.snapshot(), revision);
      superseded.supersede();
    }
    for (const { write, event } of applied) write.resolve({ kv: event.kv!, revision: event.revision });
    for (const [write, err] of refused) write.reject(err);
    if (applied.length === 0) return;
    // Synchronously with the new view: a watch starts either before this batch (and
    // gets it live) or after it (and reads it from history), never both.
    const events = applied.map((a) => a.event);
    for (const feed of this.feeds) feed.push(events);
    const committed = applied.map(({ write, event, payload }) => ({ event, payload, context: write.context }));
    if (this.commitListeners.size > 0) setImmediate(() => { for (const l of this.commitListeners) l(committed); });
  }

  /** Checks and orders a batch of writes against the current state. */
  private plan(writes: QueuedWrite[]) {
    const overlay = new Map<string, KeyValue | undefined>();
    const ops: BatchOp[] = [];
    const applied: Array<{ write: QueuedWrite; event: StorageEvent; payload: Uint8Array }> = [];
    const refused: Array<[QueuedWrite, RpcError]> = [];
    let revision = this.view.revision;
    for (const write of writes) {
      const current = overlay.has(write.key) ? overlay.get(write.key) : this.currentValue(write.key);
      const refusedBy = refusal(write, current);
      if (refusedBy) {
        refused.push([write, refusedBy]);
        continue;
      }
      const { event, next } = change(write, current, ++revision);
      const payload = encodeEvent(event);
      overlay.set(write.key, next);
      if (next) {
        const record = encodeRecord(next);
        ops.push({ type: 'put', key: currentKey(write.key), value: record }, { type: 'put', key: versionKey(write.key, revision), value: record });
      } else {
        ops.push({ type: 'del', key: currentKey(write.key) }, { type: 'put', key: versionKey(write.key, revision, true), value: TOMBSTONE });
      }
      ops.push({ type: 'put', key: historyKey(revision), value: asBuffer(payload) });
      applied.push({ write, event, payload });
    }
    ops.push({ type: 'put', key: META_REVISION, value: uint64(revision) });
    const now = Date.now();
    const last = this.marks[this.marks.length - 1];
    const due = this.windowMs > 0 && applied.length > 0 && (!last || now - last.time >= this.markIntervalMs);
    const mark = due ? { time: now, revision } : undefined;
    if (mark) ops.push({ type: 'put', key: markKey(mark.time), value: uint64(revision) });
    return { ops, applied, refused, revision, mark, time: now };
  }

  /** A key's committed value: only the writer changes current values, so the newest state is the view's. */
  private currentValue(key: string): KeyValue | undefined {
    const record = this.db.getSync(currentKey(key));
    return record ? decodeRecord(key, record) : undefined;
  }

  // ---- watch

  /** The events under a prefix ("" or ending in `/`) after a revision, in revision
   * order; with follow, then a PROGRESS event and the changes as they commit. */
  async *watch(prefix: string, afterRevision: number, options: WatchOptions = {}): AsyncGenerator<StorageEvent> {
    checkWatch(prefix, afterRevision);
    const upTo = this.readView().revision;
    checkNotFuture(afterRevision, upTo);
    if (afterRevision < this.compacted) throw outOfRange('compacted', `revision ${afterRevision} is compacted (oldest watchable: ${this.compacted})`);
    // Follow from now and read history up to now in the same tick: nothing is missed or sent twice.
    const feed = options.follow ? this.follow(prefix, options.signal) : undefined;
    const history = this.db.iterator({ gt: historyKey(afterRevision), lte: historyKey(upTo) });
    try {
      for (let entries = await history.nextv(256); entries.length > 0; entries = await history.nextv(256)) {
        if (options.signal?.aborted) return;
        for (const [, payload] of entries) {
          const event = decodeEvent(payload);
          if (event.kv!.key.startsWith(prefix)) yield event;
        }
      }
      if (!feed) return;
      yield { type: 'PROGRESS', kv: null, prevKv: null, revision: upTo };
      for (let events = await feed.next(); events; events = await feed.next()) yield* events;
    } finally {
      feed?.close();
      await history.close();
    }
  }

  private follow(prefix: string, signal: AbortSignal | undefined): LiveFeed {
    const feed = new LiveFeed(prefix, this.options.maxWatchBacklog ?? 10_000, signal, (f) => this.feeds.delete(f));
    this.feeds.add(feed);
    return feed;
  }

  // ---- compaction

  /** Drops history at or below a revision (0: older than the history window); resolves with the compacted revision. */
  async compact(revision = 0): Promise<number> {
    checkRevision(revision);
    const current = this.readView().revision;
    checkNotFuture(revision, current);
    const target = revision || this.windowRevision();
    if (target > this.compacted) {
      // Readers check the compacted revision before they take a snapshot, so raising
      // it before deleting keeps every admitted read whole.
      this.compacted = target;
      this.compacting = this.compacting.catch(() => undefined).then(() => this.dropHistory(target));
    }
    await this.compacting;
    return this.compacted;
  }

  /** The newest revision committed before the history window. */
  private windowRevision(): number {
    if (this.windowMs <= 0) return 0;
    const cutoff = Date.now() - this.windowMs;
    let revision = 0;
    for (const mark of this.marks) {
      if (mark.time > cutoff) break;
      revision = mark.revision;
    }
    const last = this.lastCommit;
    return last && last.time <= cutoff ? Math.max(revision, last.revision) : revision;
  }

  private async dropHistory(target: number): Promise<void> {
    // The compacted revision is persisted first: after a crash, leftovers below it are dropped by the next compaction.
    await this.db.put(META_COMPACTED, uint64(target));
    const history = this.db.iterator({ gt: historyKey(this.droppedUpTo), lte: historyKey(target) });
    try {
      for (let entries = await history.nextv(HISTORY_CHUNK); entries.length > 0; entries = await history.nextv(HISTORY_CHUNK)) {
        await this.db.batch(entries.flatMap(([dbKey, payload]) => supersededBy(historyRevision(dbKey), decodeEvent(payload))));
      }
    } finally {
      await history.close();
    }
    this.droppedUpTo = target;
    const dropped = this.marks.findIndex((m) => m.revision > target);
    const gone = this.marks.splice(0, dropped < 0 ? this.marks.length : dropped);
    await this.db.batch(gone.map((m) => ({ type: 'del' as const, key: markKey(m.time) })));
  }

  // ---- lifecycle

  /** Refuses new calls, ends watches, commits the writes already queued and closes LevelDB. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.compactionTimer);
      for (const feed of this.feeds) feed.fail(unavailable());
      await this.writing;
      await this.compacting.catch(() => undefined);
      await this.db.close();
    })();
    return this.closing;
  }

  private log(line: string): void {
    (this.options.log ?? console.error)(line);
  }
}

const asBuffer = (bytes: Uint8Array): Buffer =>
  (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));


/** Visits, per key of a version scan in key order, its newest version at or below
 * `revision` unless deleted, until visit declines one; resolves the first db key of
 * the declined key's versions, or undefined when the scan ended. */
async function newestVersions(next: () => Promise<Array<[Buffer, Buffer | undefined]>>, revision: number,
  visit: (key: string, record: Buffer | undefined) => boolean): Promise<Buffer | undefined> {
  let key: string | undefined;
  let start: Buffer | undefined;
  let newest: { record: Buffer | undefined } | undefined;
  for (let entries = await next(); entries.length > 0; entries = await next()) {
    for (const [dbKey, record] of entries) {
      const version = parseVersionKey(dbKey);
      if (version.key !== key) {
        if (newest && !visit(key!, newest.record)) return start;
        key = version.key;
        start = dbKey;
        newest = undefined;
      }
      if (version.revision <= revision) newest = version.deleted ? undefined : { record };
    }
  }
  return newest && !visit(key!, newest.record) ? start : undefined;
}

/** The records a compacted event leaves behind: itself, the version it replaced, and its tombstone. */
function supersededBy(revision: number, event: StorageEvent): BatchOp[] {
  const key = event.kv!.key;
  const ops: BatchOp[] = [{ type: 'del', key: historyKey(revision) }];
  if (event.prevKv) ops.push({ type: 'del', key: versionKey(key, event.prevKv.modRevision) });
  if (event.type === 'DELETE') ops.push({ type: 'del', key: versionKey(key, revision, true) });
  return ops;
}
