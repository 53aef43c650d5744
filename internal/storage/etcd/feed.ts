// The change feed of the publishing storage process: etcd's watch of every key
// under the root, after the last revision handed on, turned into committed
// events (the objects' changes, batched per watch response, in revision order)
// and progress (a revision taken by one of the backend's own keys). A lost watch
// is resumed after the last revision handed on, so nothing is skipped or repeated;
// one whose revision etcd compacted meanwhile cannot be, and says so.
import { RpcError } from '../../rpc/index.js';
import { ROOT_CONTEXT, type Context } from '../../tracing/index.js';
import type { CommittedEvent } from '../backend.js';
import { STORAGE_ERROR_KEY } from '../client.js';
import { encodeEvent } from '../events.js';
import { prefixEnd, type EtcdClient } from './client.js';
import { toStorageEvent, type EtcdKeys } from './values.js';
import { openWatch } from './watch.js';

const RETRY_MS = 1000;
/** Trace contexts of this process's writes, kept until their change is handed on. */
const MAX_CONTEXTS = 10_000;

export interface FeedListener {
  changes(batch: CommittedEvent[]): void;
  /** gap: the feed could not resume where it was (etcd compacted past it) and went on from this revision. */
  progress(revision: number, gap?: boolean): void;
}

export class ChangeFeed {
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly contexts = new Map<number, Context>();
  /** Trace contexts of this process's writes under way, by key: their change may come before their answer. */
  private readonly writing = new Map<string, Context>();

  constructor(private readonly client: EtcdClient, private readonly keys: EtcdKeys, private after: number,
    private readonly listener: FeedListener, private readonly log: (line: string) => void) {
    void this.run();
  }

  /** The revision up to which every change was handed on. */
  get revision(): number {
    return this.after;
  }

  /** Remembers the trace context of a write of this process, so its publish joins the write's trace. */
  remember(revision: number, context: Context): void {
    if (revision <= this.after) return;
    if (this.contexts.size >= MAX_CONTEXTS) this.contexts.delete(this.contexts.keys().next().value!);
    this.contexts.set(revision, context);
  }

  /** Notes a write of this process under way; call the result once it is answered. */
  expect(key: string, context: Context): () => void {
    this.writing.set(key, context);
    return () => { if (this.writing.get(key) === context) this.writing.delete(key); };
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.follow();
      } catch (err) {
        if (this.stopped) return;
        this.log(`storage: the etcd change feed after revision ${this.after} failed: ${(err as Error).message}`);
        if (err instanceof RpcError && err.trailers[STORAGE_ERROR_KEY] === 'compacted') await this.skipCompacted();
      }
      if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }

  /** Starts again from etcd's revision now, telling the listener what was lost. */
  private async skipCompacted(): Promise<void> {
    const res = await this.client.range({ key: this.keys.compactKey }).catch(() => undefined);
    if (!res || this.stopped) return;
    this.after = res.header.revision;
    this.listener.progress(this.after, true);
  }

  private async follow(): Promise<void> {
    const { root } = this.keys;
    const watch = await openWatch(this.client, { key: root, rangeEnd: prefixEnd(root), startRevision: this.after + 1 }, this.abort.signal);
    for await (const events of watch.responses) {
      let batch: CommittedEvent[] = [];
      for (const e of events) {
        const revision = e.kv.modRevision;
        if (this.keys.isOwn(e.kv.key)) {
          if (batch.length > 0) this.listener.changes(batch);
          batch = [];
          this.after = revision;
          this.listener.progress(revision);
          continue;
        }
        const key = this.keys.storageKey(e.kv.key);
        const event = toStorageEvent(key, e);
        const context = this.contexts.get(revision) ?? this.writing.get(key) ?? ROOT_CONTEXT;
        this.contexts.delete(revision);
        batch.push({ event, payload: encodeEvent(event), context });
        this.after = revision;
      }
      if (batch.length > 0) this.listener.changes(batch);
    }
  }
}
