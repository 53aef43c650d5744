// An informer: a collection listed once and then followed by a watch, kept in
// memory. A watch that ends is resumed from the last resourceVersion seen; one
// that fails, or is told its version is gone (410), lists again and reports the
// differences, so handlers miss no change.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiObject } from '../apimachinery/meta.js';
import type { ApiClient, Representation, WatchEvent } from './index.js';

export interface InformerHandlers {
  /** An object appeared or changed (`old` is the previous state, when known). */
  upsert(obj: ApiObject, old?: ApiObject): void;
  deleted(obj: ApiObject): void;
}

export interface InformerOptions {
  /** Whole objects, or their metadata only (all a collector of owner references needs, at a fraction of the bytes). */
  as?: Representation;
  /** What is kept of each object received (as the platform's informers let a controller drop what it never reads);
   * handlers and the store see only that. */
  transform?: (obj: ApiObject) => ApiObject;
  /** What the store is keyed by (default `namespace/name`); a string the object already holds costs no memory of its own. */
  key?: (obj: ApiObject) => string;
}

const RETRY_MS = 1000;
const nameKey = (o: ApiObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** A transform that keeps the object's resourceVersion, by which a list taken again tells what changed. */
const keepingVersion = (transform: (obj: ApiObject) => ApiObject) => (obj: ApiObject): ApiObject => {
  const kept = transform(obj);
  const version = obj.metadata?.resourceVersion;
  if (version && kept.metadata && kept.metadata.resourceVersion === undefined) kept.metadata.resourceVersion = version;
  return kept;
};

export class Informer {
  readonly store = new Map<string, ApiObject>();
  /** The first list has been taken in. */
  synced = false;
  private resourceVersion = '';
  private stopped = false;
  private current?: { stop(): void };

  private readonly as: Representation;
  private readonly transform: (obj: ApiObject) => ApiObject;
  private readonly keyOf: (obj: ApiObject) => string;

  private readonly client: ApiClient;

  /** Lists and watches with the client's informer client (see `ClientOptions.informers`). */
  constructor(client: ApiClient, private readonly path: string, private readonly handlers: InformerHandlers, opts: InformerOptions = {}) {
    this.client = client.informerClient;
    this.as = opts.as ?? 'object';
    this.transform = opts.transform ? keepingVersion(opts.transform) : (obj) => obj;
    this.keyOf = opts.key ?? nameKey;
  }

  /** Lists, then follows; resolves once the first list is in (retrying until it is). */
  async start(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.relist();
        return;
      } catch {
        await sleep(RETRY_MS);
      }
    }
  }

  stop(): void {
    this.stopped = true;
    this.current?.stop();
  }

  private async relist(): Promise<void> {
    const { items, resourceVersion } = await this.client.list(this.path, this.as, this.transform);
    const seen = new Set<string>();
    for (const obj of items) {
      const key = this.keyOf(obj);
      seen.add(key);
      const old = this.store.get(key);
      this.store.set(key, obj);
      if (!old || old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.handlers.upsert(obj, old);
    }
    for (const [key, obj] of [...this.store]) {
      if (seen.has(key)) continue;
      this.store.delete(key);
      this.handlers.deleted(obj);
    }
    this.resourceVersion = resourceVersion;
    this.synced = true;
    this.follow();
  }

  /** Watches from the last version; an end resumes the watch, a failure lists again. */
  private follow(): void {
    if (this.stopped) return;
    let ended = false;
    const restart = (relist: boolean) => {
      if (ended || this.stopped) return;
      ended = true;
      watch.stop();
      if (relist) this.retryLater();
      else setImmediate(() => this.follow());
    };
    const watch = this.client.watch(this.path, this.resourceVersion, (ev) => { if (!this.apply(ev)) restart(true); }, (err) => restart(Boolean(err)), this.as);
    this.current = watch;
  }

  private retryLater(): void {
    if (!this.stopped) setTimeout(() => this.relist().catch(() => this.retryLater()), RETRY_MS);
  }

  /** Takes in one event; false for an ERROR event (the watch must start over from a list). */
  private apply(ev: WatchEvent): boolean {
    if (ev.type === 'ERROR') return false;
    if (ev.object.metadata?.resourceVersion) this.resourceVersion = ev.object.metadata.resourceVersion;
    if (ev.type === 'BOOKMARK') return true;
    const obj = this.transform(ev.object);
    const key = this.keyOf(obj);
    if (ev.type === 'DELETED') {
      this.store.delete(key);
      this.handlers.deleted(obj);
      return true;
    }
    const old = this.store.get(key);
    this.store.set(key, obj);
    this.handlers.upsert(obj, old);
    return true;
  }
}
