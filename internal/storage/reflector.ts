// A reflector: the objects under one storage prefix, listed once and then kept
// current by storage's Watch stream (follow), for services that decide from
// memory (authn's token lookups, authz's RBAC and node indexes). The watch
// resumes from the last revision seen; a failure, or a revision compacted away,
// lists again and reports the differences, so handlers miss no change.
// `decode` is the projection kept per key: a service keeps only the fields it
// decides from, never the whole object.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiObject } from '../apimachinery/meta.js';
import { decodeStored } from './objects.js';
import { listPages, type KeyValue, type StorageClient, type StorageEvent } from './client.js';

export interface ReflectorHandlers<T> {
  /** A key appeared or changed; `old` is its previous value, when there was one. */
  upsert?(key: string, obj: T, old?: T): void;
  deleted?(key: string, obj: T): void;
  /** Called after the first list and after every relist, once the items are current. */
  synced?(): void;
}

const PAGE = 500;
const RETRY_MS = 500;

/** A stored value as its API object (JSON, resourceVersion = the revision). */
export const decodeObject = (kv: KeyValue): ApiObject => decodeStored(kv);

export class Reflector<T = ApiObject> {
  readonly items = new Map<string, T>();
  /** The newest revision taken in. */
  revision = 0;
  private hasSynced = false;
  private following = false;
  private stopped = false;
  private stream?: { cancel(): void };
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly storage: StorageClient, readonly prefix: string,
    private readonly handlers: ReflectorHandlers<T> = {},
    private readonly decode: (kv: KeyValue) => T = decodeObject as unknown as (kv: KeyValue) => T) {}

  get synced(): boolean {
    return this.hasSynced;
  }

  /** Whether the items are current: listed and the watch following. While not,
   * a caller that must not answer from stale items reads storage instead. */
  get live(): boolean {
    return this.following && !this.stopped;
  }

  /** Starts listing and following in the background; `waitForSync` tells when the first list is in. */
  start(): this {
    void this.run();
    return this;
  }

  /** Resolves true once the first list is in, false when the timeout passes first. */
  waitForSync(timeoutMs: number): Promise<boolean> {
    if (this.hasSynced) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiters.push(() => { clearTimeout(timer); resolve(true); });
    });
  }

  stop(): void {
    this.stopped = true;
    this.stream?.cancel();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.relist();
        await this.follow();
      } catch {
        // storage unavailable or the revision compacted: list again after a pause
      }
      this.following = false;
      if (!this.stopped) await sleep(RETRY_MS);
    }
  }

  private async relist(): Promise<void> {
    const fresh = new Map<string, T>();
    let revision = 0;
    for await (const page of listPages(this.storage, this.prefix, PAGE)) {
      revision = page.revision;
      for (const kv of page.items) fresh.set(kv.key, this.decode(kv));
    }
    for (const [key, obj] of fresh) {
      const old = this.items.get(key);
      this.items.set(key, obj);
      this.handlers.upsert?.(key, obj, old);
    }
    for (const [key, obj] of [...this.items]) {
      if (fresh.has(key)) continue;
      this.items.delete(key);
      this.handlers.deleted?.(key, obj);
    }
    this.revision = revision;
    this.markSynced();
  }

  private markSynced(): void {
    this.hasSynced = true;
    this.handlers.synced?.();
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Follows the watch until it fails or ends; resolves or rejects then. */
  private follow(): Promise<void> {
    return new Promise((resolve, reject) => {
      const stream = this.storage.watch(this.prefix, this.revision, true);
      this.stream = stream;
      this.following = true;
      stream.on('data', (ev: StorageEvent) => {
        try {
          this.apply(ev);
        } catch (err) {
          stream.cancel();
          reject(err);
        }
      });
      stream.on('error', (err) => { this.following = false; reject(err); });
      stream.on('end', () => { this.following = false; resolve(); });
    });
  }

  private apply(ev: StorageEvent): void {
    this.revision = Math.max(this.revision, Number(ev.revision));
    const kv = ev.kv;
    if (ev.type === 'PROGRESS' || !kv) return;
    if (ev.type === 'DELETE') {
      const old = this.items.get(kv.key);
      this.items.delete(kv.key);
      if (old !== undefined) this.handlers.deleted?.(kv.key, old);
      return;
    }
    const obj = this.decode(kv);
    const old = this.items.get(kv.key);
    this.items.set(kv.key, obj);
    this.handlers.upsert?.(kv.key, obj, old);
  }
}
