// The etcd backend: the storage API over an etcd cluster. resourceVersion is
// etcd's mod revision; a create is a transaction on the key not existing, an
// update or delete one on the key's mod revision as read (so uid preconditions
// are checked on that value); lists are ranges at a revision, a page at a time.
// Any number of storage processes may serve one etcd: none keeps state that
// matters. Revisions are etcd's, global to the cluster: ours are a subset.
import { RpcError, grpc } from '../../rpc/index.js';
import { activeContext } from '../../tracing/index.js';
import type {
  CommitListener, GetResult, ListOptions, ListResult, Preconditions, ProgressListener, ReadOptions, Revisions, StorageBackend, WatchOptions,
  WriteResult,
} from '../backend.js';
import { change, preconditionsOf, refusal, type Write } from '../changes.js';
import { LiveFeed, MAX_WATCH_BACKLOG } from '../feed.js';
import { checkKey, checkList, checkNotFuture, checkRevision, checkWatch, invalid, notFound, outOfRange, unavailable } from '../checks.js';
import type { KeyValue, StorageEvent } from '../events.js';
import { EtcdClient, prefixEnd, type CallLimits, type EtcdOptions, type RequestOp, type TxnResponse } from './client.js';
import { WRITE_STALL_MS } from './stall.js';
import { Compactor } from './compactor.js';
import { ChangeFeed } from './feed.js';
import { EtcdKeys, decodeKv, encodeValue, toStorageEvent } from './values.js';
import { openWatch } from './watch.js';

export interface EtcdStoreOptions extends EtcdOptions {
  /** Key prefix of every object (default `/registry`). */
  prefix?: string;
  /** How often etcd is compacted, in ms (default 5 minutes; 0: never). */
  compactionIntervalMs?: number;
  /** Live events a watch may have waiting before it is ended with RESOURCE_EXHAUSTED. */
  maxWatchBacklog?: number;
  log?: (line: string) => void;
}

/** How long the change stream may take to reach a revision a reader was told before a progress key is written. */
const PROGRESS_GRACE_MS = 100;
/** A write that keeps losing its transaction to others gives up after this many rounds. */
const MAX_WRITE_ROUNDS = 50;
const EMPTY = Buffer.alloc(0);
/** Between attempts of a write whose outcome is unknown: etcd may be electing a leader. */
const RESEND_PAUSE_MS = 200;
/** How long such an attempt waits while etcd answers nothing: a healthy etcd answers in milliseconds. */
const RESEND_STALL_MS = 500;

/** A failure after which a write may have been applied or not: etcd (or its leader) went out of reach mid-call. */
const outcomeUnknown = (err: unknown): boolean => err instanceof RpcError && err.code === grpc.status.UNAVAILABLE;

export class EtcdStore implements StorageBackend {
  readonly keys: EtcdKeys;
  private compacted = 0;
  private closed = false;
  private readonly aborts = new Set<AbortController>();
  private readonly compactor: Compactor;
  /** Set while this process publishes: the change feed of etcd's watch. */
  private feed?: ChangeFeed;
  private readonly commitListeners = new Set<CommitListener>();
  private readonly progressListeners = new Set<ProgressListener>();
  /** The newest revision the change stream is known to have reached (published, or seen published). */
  private streamRevision = 0;
  private streamTracked = false;
  /** The newest revision readers were told, which the change stream must reach. */
  private owed = 0;
  private progressTimer?: NodeJS.Timeout;

  constructor(readonly client: EtcdClient, private readonly options: EtcdStoreOptions) {
    this.keys = new EtcdKeys(options.prefix ?? '/registry');
    this.compactor = new Compactor(client, this.keys.compactKey, (revision) => this.learnCompacted(revision),
      options.compactionIntervalMs ?? 5 * 60_000, (line) => this.log(line));
  }

  static async open(options: EtcdStoreOptions): Promise<EtcdStore> {
    const store = new EtcdStore(new EtcdClient(options), options);
    await store.currentRevision(); // etcd answers, or the process says why it cannot serve
    store.compactor.start();
    return store;
  }

  // ---- revisions

  async currentRevision(): Promise<Revisions> {
    this.checkOpen();
    // One linearizable read: its header is etcd's revision, its value the compacted one.
    const res = await this.client.range({ key: this.keys.compactKey });
    const revision = res.header.revision;
    const recorded = Number(res.kvs[0]?.value?.toString() ?? 0);
    this.learnCompacted(recorded);
    this.owe(revision);
    return { revision, compactedRevision: this.compacted };
  }

  private learnCompacted(revision: number): void {
    if (revision > this.compacted) this.compacted = revision;
  }

  /** The change stream must reach a revision a reader was told: if no change of ours comes to take it there
   * soon (the revision moved with a key outside the objects), a write of the progress key will. */
  private owe(revision: number): void {
    if (!this.streamFollowed || revision <= this.streamRevision || revision <= this.owed) return;
    this.owed = revision;
    this.progressTimer ??= setTimeout(() => {
      this.progressTimer = undefined;
      if (this.owed > this.streamRevision && !this.closed) this.markProgress().catch((err) => this.log(`storage: progress write failed: ${(err as Error).message}`));
    }, PROGRESS_GRACE_MS);
  }

  /** Writes the progress key: its revision comes, in the watch of the prefix, after every change before it. */
  private async markProgress(): Promise<number> {
    return (await this.client.put(this.keys.progressKey, EMPTY)).header.revision;
  }

  /** Whether this process knows where the change stream is: it publishes, or follows what is published. */
  private get streamFollowed(): boolean {
    return this.feed !== undefined || this.streamTracked;
  }

  /** Says this process follows what the publisher publishes, and tells noteStreamRevision. */
  trackStream(): void {
    this.streamTracked = true;
  }

  /** The change stream (this process's feed, or the publishing replica's as seen on NATS) reached a revision. */
  noteStreamRevision(revision: number): void {
    if (revision > this.streamRevision) this.streamRevision = revision;
  }

  // ---- reads

  async get(key: string, revision = 0, options: ReadOptions = {}): Promise<GetResult> {
    checkKey(key);
    checkRevision(revision);
    this.checkOpen();
    const newest = revision === 0 || Boolean(options.allowCached);
    if (!newest) this.checkCompacted(revision);
    const res = await this.client.range({ key: this.keys.etcdKey(key), revision: newest ? 0 : revision });
    const at = newest ? res.header.revision : revision;
    checkNotFuture(revision, res.header.revision);
    if (res.kvs.length === 0) throw notFound(key);
    return { kv: decodeKv(key, res.kvs[0]), revision: at };
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    const { revision = 0, limit = 0, continueAfter = '' } = options;
    checkList(prefix, limit, continueAfter);
    checkRevision(revision);
    this.checkOpen();
    const newest = revision === 0 || Boolean(options.allowCached && !continueAfter);
    if (!newest) this.checkCompacted(revision);
    const from = continueAfter ? Buffer.concat([this.keys.etcdKey(continueAfter), Buffer.from([0])]) : this.keys.etcdKey(prefix);
    const res = await this.client.range({
      key: from, rangeEnd: prefixEnd(this.keys.etcdKey(prefix)), limit, revision: newest ? 0 : revision,
    });
    checkNotFuture(revision, res.header.revision);
    const items = res.kvs.map((kv) => decodeKv(this.keys.storageKey(kv.key), kv));
    const remaining = Math.max(0, res.count - items.length);
    return { items, revision: newest ? res.header.revision : revision, more: res.more, remaining };
  }

  private checkCompacted(revision: number): void {
    if (revision < this.compacted) throw outOfRange('compacted', `revision ${revision} is compacted (oldest readable: ${this.compacted})`);
  }

  // ---- writes

  async create(key: string, value: Uint8Array, uid = ''): Promise<WriteResult> {
    this.checkWrite(key, uid);
    const context = activeContext();
    const answered = this.feed?.expect(key, context);
    const revision = await this.createOrFindOut(key, value, uid).finally(answered);
    this.feed?.remember(revision, context);
    return { kv: { key, value: Buffer.from(value), modRevision: revision, createRevision: revision, uid }, revision };
  }

  /** Creates the key; resolves the revision it was created at. When etcd's answer is lost (the member or the leader
   * went away mid-write: the create may have happened or not), the same transaction is sent again within one more
   * write deadline: it finds the key stored with this create's uid (it happened), creates it (it did not; the first
   * one, if still under way, then finds the key and does nothing) or finds another object there. */
  private async createOrFindOut(key: string, value: Uint8Array, uid: string): Promise<number> {
    const etcdKey = this.keys.etcdKey(key);
    const send = (limits?: CallLimits) => this.client.txn([{ key: etcdKey, target: 'CREATE', createRevision: 0 }],
      [{ requestPut: { key: etcdKey, value: encodeValue(uid, value) } }], [{ requestRange: { key: etcdKey } }], limits);
    let res: TxnResponse;
    try {
      res = await send();
    } catch (err) {
      if (!uid || !outcomeUnknown(err)) throw err;
      res = await this.sendAgain(send, err);
      const stored = res.succeeded ? undefined : res.responses[0]?.responseRange?.kvs[0];
      if (stored && decodeKv(key, stored).uid === uid) return stored.createRevision;
    }
    if (!res.succeeded) throw new RpcError(grpc.status.ALREADY_EXISTS, `"${key}" already exists`);
    return res.header.revision;
  }

  /** Sends a write whose first outcome is unknown again, as often as WRITE_STALL_MS more allows (through the next
   * server after one out of reach, after a pause while etcd elects a leader); rejects with `first` when no attempt is
   * answered. An attempt is given up after RESEND_STALL_MS without any answer from etcd: one sent just after the
   * leader died may go to a follower that does not know it yet and forwards it to be dropped. Only for writes that
   * recognise their own success. */
  private async sendAgain<T>(send: (limits: CallLimits) => Promise<T>, first: unknown): Promise<T> {
    const until = performance.now() + WRITE_STALL_MS;
    for (let left = WRITE_STALL_MS; left > 0; left = until - performance.now()) {
      try {
        return await send({ deadlineMs: left, stallMs: RESEND_STALL_MS });
      } catch (err) {
        if (!outcomeUnknown(err)) throw err;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(RESEND_PAUSE_MS, Math.max(0, until - performance.now()))));
    }
    throw first;
  }

  update(key: string, value: Uint8Array, preconditions: Preconditions = {}): Promise<WriteResult> {
    return this.write({ op: 'update', key, value: Buffer.from(value), uid: '', preconditions: preconditionsOf(preconditions) });
  }

  delete(key: string, preconditions: Preconditions = {}): Promise<WriteResult> {
    return this.write({ op: 'delete', key, value: EMPTY, uid: '', preconditions: preconditionsOf(preconditions) });
  }

  /** Reads the key, checks the preconditions on what it read, and writes if the key is still at that revision;
   * a key changed meanwhile is read and checked again. */
  private async write(write: Write): Promise<WriteResult> {
    this.checkWrite(write.key, '');
    checkRevision(write.preconditions.modRevision, 'mod_revision precondition');
    const context = activeContext();
    const etcdKey = this.keys.etcdKey(write.key);
    for (let round = 0; round < MAX_WRITE_ROUNDS; round++) {
      const current = await this.currentValue(write.key, etcdKey);
      const refused = refusal(write, current);
      if (refused) throw refused;
      const op: RequestOp = write.op === 'update'
        ? { requestPut: { key: etcdKey, value: encodeValue(current!.uid, write.value) } }
        : { requestDeleteRange: { key: etcdKey } };
      const answered = this.feed?.expect(write.key, context);
      const res = await this.client.txn([{ key: etcdKey, target: 'MOD', modRevision: current!.modRevision }], [op]).finally(answered);
      if (!res.succeeded) continue;
      const revision = res.header.revision;
      this.feed?.remember(revision, context);
      return { kv: change(write, current, revision).event.kv!, revision };
    }
    throw new RpcError(grpc.status.ABORTED, `"${write.key}" kept changing; try again`);
  }

  private async currentValue(key: string, etcdKey: Buffer): Promise<KeyValue | undefined> {
    const res = await this.client.range({ key: etcdKey });
    return res.kvs.length > 0 ? decodeKv(key, res.kvs[0]) : undefined;
  }

  private checkWrite(key: string, uid: string): void {
    checkKey(key);
    if (Buffer.byteLength(uid) > 0xffff) throw invalid('uid is too long');
    this.checkOpen();
  }

  // ---- watch

  async *watch(prefix: string, afterRevision: number, options: WatchOptions = {}): AsyncGenerator<StorageEvent> {
    checkWatch(prefix, afterRevision);
    const { revision } = await this.currentRevision();
    checkNotFuture(afterRevision, revision);
    this.checkCompacted(afterRevision);
    const aborted = new AbortController();
    const abort = (): void => aborted.abort();
    options.signal?.addEventListener('abort', abort);
    this.aborts.add(aborted);
    let live: LiveFeed | undefined;
    try {
      const upTo = afterRevision < revision ? yield* this.replay(prefix, afterRevision, revision, aborted.signal) : afterRevision;
      if (options.follow && !aborted.signal.aborted) {
        live = await this.follow(prefix, upTo, aborted);
        yield { type: 'PROGRESS', kv: null, prevKv: null, revision: upTo };
        for (let events = await live.next(); events; events = await live.next()) yield* events;
      }
    } catch (err) {
      if (!aborted.signal.aborted) throw err; // ended by its caller or by close: no failure of its own
    } finally {
      live?.close();
      options.signal?.removeEventListener('abort', abort);
      this.aborts.delete(aborted);
    }
    // A watch ended by close, not by its caller, is told why, as on LevelDB.
    if (this.closed && !options.signal?.aborted) throw unavailable();
  }

  /** The changes under a prefix after a revision up to `upTo` (etcd's revision when the watch began): a watch of
   * every key under the root, ended by the first change at or past `upTo`. The change at `upTo` itself falls under
   * the root unless it was another user's of etcd: then a write of the progress key, made when the history is slow
   * to get there, provides one past it. Resolves `upTo`. */
  private async *replay(prefix: string, after: number, upTo: number, signal: AbortSignal): AsyncGenerator<StorageEvent, number> {
    const { root } = this.keys;
    const watch = await openWatch(this.client, { key: root, rangeEnd: prefixEnd(root), startRevision: after + 1 }, signal);
    const marker = setTimeout(() => { this.markProgress().catch(() => undefined); }, PROGRESS_GRACE_MS);
    try {
      for await (const events of watch.responses) {
        for (const e of events) {
          const revision = e.kv.modRevision;
          const key = revision > upTo || this.keys.isOwn(e.kv.key) ? undefined : this.keys.storageKey(e.kv.key);
          if (key?.startsWith(prefix)) yield toStorageEvent(key, e);
          if (revision >= upTo) return upTo;
        }
      }
      return upTo; // aborted
    } finally {
      clearTimeout(marker);
      await watch.responses.return(undefined);
    }
  }

  /** The changes under a prefix after a revision, read from etcd as they come into a feed of bounded backlog: a
   * watch whose reader falls too far behind is ended (RESOURCE_EXHAUSTED, as on LevelDB) and its etcd watch with it,
   * rather than left for etcd to hold back. A watch so ended no longer counts as open. */
  private async follow(prefix: string, after: number, watching: AbortController): Promise<LiveFeed> {
    const from = this.keys.etcdKey(prefix);
    const ended = new AbortController();
    const watch = await openWatch(this.client, { key: from, rangeEnd: prefixEnd(from), startRevision: after + 1 },
      AbortSignal.any([watching.signal, ended.signal]));
    const feed = new LiveFeed(prefix, this.options.maxWatchBacklog ?? MAX_WATCH_BACKLOG, watching.signal, () => {
      ended.abort();
      this.aborts.delete(watching);
    });
    void (async () => {
      try {
        for await (const events of watch.responses) {
          feed.push(events.filter((e) => !this.keys.isOwn(e.kv.key)).map((e) => toStorageEvent(this.keys.storageKey(e.kv.key), e)));
        }
      } catch (err) {
        feed.fail(err as Error);
      }
    })();
    return feed;
  }

  // ---- compaction

  /** Compacts etcd at a revision (0: as the compaction schedule would now); resolves with the compacted revision. */
  async compact(revision = 0): Promise<number> {
    checkRevision(revision);
    this.checkOpen();
    if (revision === 0) await this.compactor.tick();
    else if (revision > this.compacted) await this.compactor.compactAt(revision);
    return this.compacted;
  }

  // ---- publishing

  onCommit(listener: CommitListener): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  onProgress(listener: ProgressListener): () => void {
    this.progressListeners.add(listener);
    return () => this.progressListeners.delete(listener);
  }

  /** Follows etcd's changes after a revision and hands them to the listeners, until stopPublishing; each hand-on
   * first asks mayPublish (whether this process still holds the right to publish). */
  startPublishing(after: number, mayPublish: () => boolean = () => true): void {
    this.feed?.stop();
    this.streamRevision = Math.max(this.streamRevision, after);
    this.feed = new ChangeFeed(this.client, this.keys, after, {
      changes: (batch) => {
        if (!mayPublish()) return;
        this.noteStreamRevision(batch[batch.length - 1].event.revision);
        for (const l of this.commitListeners) l(batch);
      },
      progress: (revision, gap) => {
        if (!mayPublish()) return;
        this.noteStreamRevision(revision);
        for (const l of this.progressListeners) l(revision, gap);
      },
    }, (line) => this.log(line));
  }

  stopPublishing(): void {
    this.feed?.stop();
    this.feed = undefined;
  }

  /** The revision up to which the feed handed every change on (0 when not publishing). */
  get publishedRevision(): number {
    return this.feed?.revision ?? 0;
  }

  /** How many watches are open. */
  get activeWatches(): number {
    return this.aborts.size;
  }

  // ---- lifecycle

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.progressTimer);
    this.compactor.stop();
    this.stopPublishing();
    for (const a of this.aborts) a.abort();
    this.client.close();
  }

  private checkOpen(): void {
    if (this.closed) throw unavailable();
  }

  private log(line: string): void {
    (this.options.log ?? console.error)(line);
  }
}


