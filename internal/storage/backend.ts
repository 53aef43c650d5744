// What a storage backend offers the gRPC service and the publisher: one ordered
// revision space with reads at a revision, writes with preconditions, watches
// from a revision and compaction. LevelDB (store.ts, embedded, one writer) and
// etcd (etcd/, shared by any number of storage processes) implement it.
import type { Context } from '../tracing/index.js';
import type { KeyValue, StorageEvent } from './events.js';

export interface GetResult { kv: KeyValue; revision: number }
export interface WriteResult { kv: KeyValue; revision: number }
export interface ListResult { items: KeyValue[]; revision: number; more: boolean; remaining: number }
export interface ReadOptions {
  /** Any state at least as new as the revision (0: the newest) will do, even one past compaction: the newest is read. */
  allowCached?: boolean;
}
/** allowCached is ignored with continueAfter: a later page is read at exactly its revision. */
export interface ListOptions extends ReadOptions { revision?: number; limit?: number; continueAfter?: string }
export interface WatchOptions { follow?: boolean; signal?: AbortSignal }
export interface Preconditions { modRevision?: number; uid?: string }
export interface Revisions { revision: number; compactedRevision: number }

/** A committed change, as commit listeners (the NATS publisher) receive it. */
export interface CommittedEvent {
  event: StorageEvent;
  /** The `Event` message bytes. */
  payload: Uint8Array;
  /** The trace context of the write. */
  context: Context;
}

/** Told the committed changes, a batch at a time, in revision order. */
export type CommitListener = (batch: CommittedEvent[]) => void;

export type ProgressListener = (revision: number, gap?: boolean) => void;

export interface StorageBackend {
  get(key: string, revision?: number, options?: ReadOptions): Promise<GetResult>;
  /** The keys under a prefix (ending in `/`) as of one revision, a page at a time. */
  list(prefix: string, options?: ListOptions): Promise<ListResult>;
  create(key: string, value: Uint8Array, uid?: string): Promise<WriteResult>;
  update(key: string, value: Uint8Array, preconditions?: Preconditions): Promise<WriteResult>;
  delete(key: string, preconditions?: Preconditions): Promise<WriteResult>;
  /** The events under a prefix ("" or ending in `/`) after a revision, in revision order; with follow, then a
   * PROGRESS event and the changes as they commit. */
  watch(prefix: string, afterRevision: number, options?: WatchOptions): AsyncGenerator<StorageEvent>;
  /** The newest committed revision (every acknowledged write is at or below it) and the oldest readable one. */
  currentRevision(): Promise<Revisions>;
  /** Drops history below a revision (0: as the backend's own schedule would); resolves with the compacted revision. */
  compact(revision?: number): Promise<number>;
  /** Calls listener with the committed changes, in revision order, once acknowledged. */
  onCommit(listener: CommitListener): () => void;
  /** Calls listener with revisions the change stream reached without a change of its own (etcd revisions taken
   * by keys outside the objects), after the changes before them; with gap, changes before it were lost. */
  onProgress(listener: ProgressListener): () => void;
  close(): Promise<void>;
}
