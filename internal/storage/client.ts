// A typed client of the storage service, for the gateway, authn, authz and admission.
import { api, grpc, isServiceError, replicated, unary } from '../rpc/index.js';
import type { StorageClient as RawClient } from '../rpc/gen/svc/storage/v1/Storage.js';
import type { KeyValue__Output as KeyValue } from '../rpc/gen/svc/storage/v1/KeyValue.js';
import type { ListResponse__Output as ListResponse } from '../rpc/gen/svc/storage/v1/ListResponse.js';
import type { WriteResponse__Output as WriteResponse } from '../rpc/gen/svc/storage/v1/WriteResponse.js';
import type { GetResponse__Output as GetResponse } from '../rpc/gen/svc/storage/v1/GetResponse.js';
import type { Event__Output as StorageEvent } from '../rpc/gen/svc/storage/v1/Event.js';
import type { CurrentRevisionResponse__Output as CurrentRevision } from '../rpc/gen/svc/storage/v1/CurrentRevisionResponse.js';
import type { Preconditions } from '../rpc/gen/svc/storage/v1/Preconditions.js';

export type { KeyValue, ListResponse, WriteResponse, GetResponse, StorageEvent, CurrentRevision, Preconditions };

export class StorageClient {
  readonly raw: RawClient;
  /** address: one, or a comma list of the replicas' */
  constructor(readonly address: string) {
    this.raw = replicated(api.svc.storage.v1.Storage, address);
  }
  /** allowCached: any value at least as new as revision (0: the newest) will do, from storage's watch cache. */
  get(key: string, revision = 0, opts: { allowCached?: boolean } = {}): Promise<GetResponse> {
    return unary(this.raw, this.raw.Get, { key, revision, allowCached: opts.allowCached ?? false });
  }
  /** allowCached: as for get, for the first page (ignored with continueAfter, which reads exactly at revision). */
  list(prefix: string, opts: { revision?: number; limit?: number; continueAfter?: string; allowCached?: boolean } = {}): Promise<ListResponse> {
    return unary(this.raw, this.raw.List, {
      prefix, revision: opts.revision ?? 0, limit: opts.limit ?? 0, continueAfter: opts.continueAfter ?? '', allowCached: opts.allowCached ?? false,
    });
  }
  create(key: string, value: Buffer, uid: string): Promise<WriteResponse> {
    return unary(this.raw, this.raw.Create, { key, value, uid });
  }
  update(key: string, value: Buffer, preconditions: Preconditions = {}): Promise<WriteResponse> {
    return unary(this.raw, this.raw.Update, { key, value, preconditions });
  }
  delete(key: string, preconditions: Preconditions = {}): Promise<WriteResponse> {
    return unary(this.raw, this.raw.Delete, { key, preconditions });
  }
  /** The key's value, or undefined when there is none. */
  async find(key: string): Promise<KeyValue | undefined> {
    const res = await this.get(key).catch((err) => { ignoreStorageCodes(grpc.status.NOT_FOUND)(err); return undefined; });
    return res?.kv ?? undefined;
  }
  /** Creates the key unless it exists; answers whether it did. */
  createIfAbsent(key: string, value: Buffer, uid: string): Promise<boolean> {
    return this.create(key, value, uid).then(() => true, (err) => { ignoreStorageCodes(grpc.status.ALREADY_EXISTS)(err); return false; });
  }
  /** Writes the key if it is still at modRevision; answers false when it changed or went away since. */
  updateIfAt(key: string, value: Buffer, modRevision: number): Promise<boolean> {
    return this.update(key, value, { modRevision }).then(() => true, (err) => { ignoreStorageRace(err); return false; });
  }
  /** Removes the key if it is still at modRevision (0: whatever it holds); answers false when it changed or went away since. */
  deleteIfAt(key: string, modRevision = 0): Promise<boolean> {
    return this.delete(key, { modRevision }).then(() => true, (err) => { ignoreStorageRace(err); return false; });
  }
  currentRevision(): Promise<CurrentRevision> {
    return unary(this.raw, this.raw.CurrentRevision, {});
  }
  compact(revision = 0): Promise<{ compactedRevision: number }> {
    return unary(this.raw, this.raw.Compact, { revision });
  }
  /** A stream of events after a revision; the caller cancels it. */
  watch(prefix: string, afterRevision: number, follow: boolean): grpc.ClientReadableStream<StorageEvent> {
    return this.raw.Watch({ prefix, afterRevision, follow });
  }
  close(): void {
    this.raw.close();
  }
}

/** Every key under prefix, `limit` at a time, all pages at the first page's revision. */
export async function* listPages(storage: Pick<StorageClient, 'list'>, prefix: string, limit: number): AsyncGenerator<{ items: KeyValue[]; revision: number }> {
  let revision = 0;
  let after = '';
  for (;;) {
    const page = await storage.list(prefix, { revision, limit, continueAfter: after });
    revision ||= Number(page.revision);
    yield { items: page.items, revision };
    if (!page.more || page.items.length === 0) return;
    after = page.items[page.items.length - 1].key;
  }
}

/** A handler for a storage call that lets the given status codes pass (an expected outcome) and rethrows the rest. */
const ignoreStorageCodes = (...codes: grpc.status[]) => (err: unknown): void => {
  if (!(isServiceError(err) && codes.includes(err.code))) throw err;
};

/** A write that lost to a concurrent one, or found its key gone: the next event or pass sees the new state. */
const ignoreStorageRace = ignoreStorageCodes(grpc.status.NOT_FOUND, grpc.status.FAILED_PRECONDITION);

/** The storage error kind carried in trailing metadata `storage-error`. */
export const STORAGE_ERROR_KEY = 'storage-error';
export const STORAGE_CURRENT_REVISION_KEY = 'storage-current-revision';
export type StorageErrorKind = 'compacted' | 'future';
