// The gateway's cache of objects, fed by the change stream the watch hub follows:
// get, list and the start of a watch are answered from memory. A collection is
// cached from its first read on (a list from storage, then every change the hub
// brings); until then, and whenever the hub cannot vouch for the stream (NATS or
// storage lost, a gap in the chain), reads go to storage and the collection is
// listed again on the next read.
//
// Each object is held once, as the JSON text of its API form (resourceVersion
// included, HTML characters escaped as the platform's encoder does): a JSON get
// writes it as it is, a JSON list writes it without apiVersion and kind, and other
// forms parse it. A V8 string costs its length plus a small header, where a Buffer
// of its own would cost several hundred bytes of bookkeeping per object.
import { listPages, type KeyValue, type StorageClient, type StorageEvent } from '../internal/storage/client.js';
import { SortedRecords } from '../internal/storage/cache.js';
import type { ApiObject } from '../internal/apimachinery/meta.js';
import type { KindDef } from '../internal/registry/index.js';
import type { HubWatcher, RevisionFeed } from './hub.js';
import type { ReadPlan } from './versions.js';
import { sharedStoredText, storedJson } from './storedjson.js';

/** What a collection needs of the hub: its events and whether it can vouch for them. */
export interface ChangeStream extends RevisionFeed {
  readonly ready: boolean;
  register(prefix: string, watcher: HubWatcher): () => void;
}

/** The items a collection is listed with from storage, a page at a time. */
const FILL_PAGE = 1000;
/** How long a consistent read waits for the stream to bring storage's current revision before it reads storage instead. */
const CATCH_UP_MS = 1000;

/** An object's JSON as the cache keeps it and a JSON get writes it. */
const cachedJson = (kv: KeyValue): string => storedJson(kv.value, kv.modRevision);

/** A cached object as an object of the kind's version (converted from the storage version where they differ). */
export function decodeCached(def: KindDef, json: string): ApiObject {
  const obj = JSON.parse(json) as ApiObject;
  return def.fromStorage ? def.fromStorage(obj) : obj;
}

/** One collection (`<group>/<resource>/`), all namespaces. */
export class Collection {
  private records = new SortedRecords<string>();
  private state: 'empty' | 'filling' | 'live' = 'empty';
  /** Changes that arrived while the list was read; applied after it. */
  private pending: StorageEvent[] = [];
  /** The revision the listed state was read at: changes at or below it are in it. */
  private listedAt = 0;
  /** The newest revision at which an object of the collection changed (or it was listed). */
  private changedAt = 0;
  private unregister?: () => void;
  /** Counts the lists started, so a list overtaken by a drop (and a new list) leaves nothing behind. */
  private generation = 0;

  constructor(readonly prefix: string, private readonly storage: StorageClient, private readonly stream: ChangeStream) {}

  /** Whether reads may be answered from memory: listed, and the stream vouched for since. */
  get live(): boolean {
    return this.state === 'live' && this.stream.ready;
  }

  /** The revision the cached state is at. */
  get revision(): number {
    return Math.max(this.listedAt, this.stream.currentRevision);
  }

  /** Whether the cached state is the state at `revision` exactly: nothing changed between them. */
  holds(revision: number): boolean {
    return this.live && this.changedAt <= revision && revision <= this.revision;
  }

  get(key: string): string | undefined {
    return this.records.get(key);
  }

  /** Up to `limit` (0: every) keys under prefix after `after`, in order, with their JSON, and how many more there are. */
  page(prefix: string, limit: number, after = ''): { entries: Array<[string, string]>; remaining: number } {
    return this.records.page(prefix, limit, after);
  }

  /** Visits the keys under prefix after `after` in order, until visit returns false. */
  walk(prefix: string, after: string, visit: (key: string, json: string) => boolean): void {
    this.records.walk(prefix, after, visit);
  }

  /** Starts listing the collection unless it is listed or being listed; reads go to storage meanwhile. */
  fill(): void {
    if (this.state !== 'empty' || !this.stream.ready) return;
    this.state = 'filling';
    this.unregister = this.stream.register(this.prefix, { onEvent: (ev) => this.onEvent(ev), onFail: () => this.drop() });
    const generation = ++this.generation;
    this.list(generation).catch(() => { if (generation === this.generation) this.drop(); });
  }

  private async list(generation: number): Promise<void> {
    const fresh = new SortedRecords<string>();
    let revision = 0;
    for await (const page of listPages(this.storage, this.prefix, FILL_PAGE)) {
      if (generation !== this.generation) return; // dropped meanwhile
      revision = page.revision;
      for (const kv of page.items) fresh.set(kv.key, cachedJson(kv));
    }
    this.records = fresh;
    this.listedAt = this.changedAt = revision;
    this.state = 'live';
    const pending = this.pending;
    this.pending = [];
    for (const ev of pending) this.apply(ev);
  }

  private onEvent(ev: StorageEvent): void {
    if (this.state === 'filling') this.pending.push(ev);
    else if (this.state === 'live') this.apply(ev);
  }

  private apply(ev: StorageEvent): void {
    if (ev.revision <= this.listedAt || !ev.kv) return;
    if (ev.type === 'DELETE') this.records.delete(ev.kv.key);
    else if (ev.type === 'PUT') this.records.set(ev.kv.key, sharedStoredText(ev.kv, ev.kv.modRevision).json);
    this.changedAt = ev.revision;
  }

  /** Forgets everything: the stream can no longer be trusted, the next read lists again. */
  private drop(): void {
    this.generation++;
    this.unregister?.();
    this.unregister = undefined;
    this.state = 'empty';
    this.pending = [];
    this.records = new SortedRecords<string>();
    this.listedAt = this.changedAt = 0;
  }
}

export class ObjectCache {
  private readonly collections = new Map<string, Collection>();
  private readonly probe: RevisionProbe;

  constructor(private readonly storage: StorageClient, private readonly stream: ChangeStream) {
    this.probe = new RevisionProbe(storage);
  }

  /** The collection when it can answer a read of this freshness (NotOlderThan: once the revision has been
   * waited for); undefined when storage must. The first read of a collection starts caching it. */
  async serving(prefix: string, want: ReadPlan): Promise<Collection | undefined> {
    const c = this.collection(prefix);
    if (!c.live) {
      c.fill();
      return undefined;
    }
    switch (want.mode) {
      case 'Any': return c;
      case 'NotOlderThan': return c.revision >= want.revision ? c : undefined;
      case 'Exact': {
        // Unchanged since that revision, and not older than storage keeps: a version it would refuse as compacted is refused still.
        if (!c.holds(want.revision)) return undefined;
        const current = await this.probe.current().catch(() => undefined);
        return current && want.revision >= current.compactedRevision && c.holds(want.revision) ? c : undefined;
      }
      case 'MostRecent': {
        // Consistent: at least as new as storage now, learnt with one revision call (shared by the reads waiting for it).
        const current = await this.probe.current().catch(() => undefined);
        if (!current || !(await this.stream.reached(current.revision, CATCH_UP_MS))) return undefined;
        return c.live ? c : undefined;
      }
    }
  }

  /** The collection's cache, live or not. */
  collection(prefix: string): Collection {
    let c = this.collections.get(prefix);
    if (!c) this.collections.set(prefix, (c = new Collection(prefix, this.storage, this.stream)));
    return c;
  }
}

/** Storage's newest revision, and the oldest it still reads at. */
export interface StoreRevisions { revision: number; compactedRevision: number }

/**
 * Storage's current revision for reads that must see every write acknowledged before they began. A call
 * already under way may have been answered before a read began, so a read joins the next call, sent once
 * the current one is back: any number of concurrent reads cost at most two calls.
 */
export class RevisionProbe {
  private inFlight?: Promise<StoreRevisions>;
  private next?: Promise<StoreRevisions>;

  constructor(private readonly storage: Pick<StorageClient, 'currentRevision'>) {}

  current(): Promise<StoreRevisions> {
    if (!this.inFlight) return this.ask();
    this.next ??= this.inFlight.catch(() => undefined).then(() => {
      this.next = undefined;
      return this.ask();
    });
    return this.next;
  }

  private ask(): Promise<StoreRevisions> {
    const call = this.storage.currentRevision().then((r) => ({ revision: Number(r.revision), compactedRevision: Number(r.compactedRevision) }));
    this.inFlight = call;
    const clear = () => { if (this.inFlight === call) this.inFlight = undefined; };
    call.then(clear, clear);
    return call;
  }
}
