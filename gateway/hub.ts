// One NATS subscription per gateway carries every committed change; the hub fans
// them out to the open watches. It trusts the stream only while it can prove it
// complete: the chain of revisions is unbroken, NATS is connected and storage is
// reachable. Otherwise every watch ends with an error and clients resume from
// their last resourceVersion (history fills the hole) or re-list.
import type { NatsConnection, Msg, Subscription } from '@nats-io/nats-core';
import type { StorageClient, StorageEvent } from '../internal/storage/client.js';
import { decodeEvent, decodeSubjectToken, subscriptionSubject, REVISION_HEADER, PREV_REVISION_HEADER } from '../internal/storage/events.js';
import { collectionOf } from '../internal/storage/keys.js';
import { NATS_EVENTS_PREFIX } from '../internal/names/index.js';
import { healthClient, replicaSetOf, type ReplicaSet } from '../internal/rpc/index.js';
import { SpanKind, extractContext, withSpanSync } from '../internal/tracing/index.js';
import { FlushPacer } from './flushpacer.js';

export interface HubWatcher {
  /** Called for each live event under the watcher's prefix, in revision order. */
  onEvent(event: StorageEvent): void;
  /** Called once when the hub can no longer vouch for the stream. */
  onFail(reason: string): void;
  /** When given, called after events handed to onEvent, at most once per FLUSH_INTERVAL_MS while events keep
   * coming (see FlushPacer): a watcher that writes to a client writes them together, rather than one write (and one
   * TLS record) per event. */
  flush?(): void;
}

/** Revisions storage has committed, as they become known. */
export interface RevisionFeed {
  /** The newest revision known committed. */
  readonly currentRevision: number;
  /** Resolves true once revision is known committed, false when timeoutMs passes first. */
  reached(revision: number, timeoutMs: number): Promise<boolean>;
}

/** A read waiting for a revision to be committed. */
interface RevisionWaiter {
  revision: number;
  settle(reached: boolean): void;
}

const STORAGE_RETRY_MS = 500;
/** A watcher given events is flushed at most once in this long: an event waits at most about this long. Each flush
 * is a write to a client (~16 µs of the gateway's CPU over TLS, about as much of the client's to read it), so with a
 * thousand watchers under a steady stream this is what the fan-out costs: ~33 writes per watcher per second. */
const FLUSH_INTERVAL_MS = 30;
const SUBJECT_PREFIX = `${NATS_EVENTS_PREFIX}.`;

/** The storage key a change was published under, read from its subject. */
const keyOfSubject = (subject: string): string =>
  subject.slice(SUBJECT_PREFIX.length).split('.').map(decodeSubjectToken).join('/');

export class WatchHub implements RevisionFeed {
  /** The watchers by the collection they are under ('' for wider ones), then by prefix: an event is matched only
   * against the prefixes of its own collection, not against each watcher. */
  private readonly registrations = new Map<string, Map<string, Set<HubWatcher>>>();
  private readonly waiters = new Set<RevisionWaiter>();
  private subscription?: Subscription;
  /** The newest revision the hub has seen or knows is covered by storage history. */
  private revision = 0;
  private natsUp = true;
  private storageUp = false;
  private closed = false;
  private healthCall?: { cancel(): void };
  private readonly pacer = new FlushPacer(FLUSH_INTERVAL_MS);

  constructor(private readonly nc: NatsConnection, private readonly storage: StorageClient) {}

  get ready(): boolean {
    return this.natsUp && this.storageUp;
  }

  /** The revision up to which every event has been handed to the watchers. */
  get currentRevision(): number {
    return this.revision;
  }

  async start(): Promise<void> {
    this.subscription = this.nc.subscribe(subscriptionSubject(''), { callback: (err, msg) => { if (!err) this.dispatch(msg); } });
    await this.nc.flush();
    void this.followNatsStatus();
    this.monitorStorage();
  }

  /** Resolves true once the stream (or storage, asked on a reconnect) shows revision committed; false after timeoutMs. */
  reached(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.revision >= revision) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: RevisionWaiter = {
        revision,
        settle: (reached) => { clearTimeout(timer); this.waiters.delete(waiter); resolve(reached); },
      };
      const timer = setTimeout(() => waiter.settle(false), timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Registers a watcher of the keys under prefix (a watcher object is registered once); returns its unregistration. */
  register(prefix: string, reg: HubWatcher): () => void {
    const collection = collectionOf(prefix);
    let byPrefix = this.registrations.get(collection);
    if (!byPrefix) this.registrations.set(collection, (byPrefix = new Map()));
    let regs = byPrefix.get(prefix);
    if (!regs) byPrefix.set(prefix, (regs = new Set()));
    regs.add(reg);
    return () => {
      regs.delete(reg);
      if (reg.flush) this.pacer.forget(reg as Required<HubWatcher>);
      if (regs.size > 0 || byPrefix.get(prefix) !== regs) return;
      byPrefix.delete(prefix);
      if (byPrefix.size === 0 && this.registrations.get(collection) === byPrefix) this.registrations.delete(collection);
    };
  }

  /** The watchers whose prefix the key is under, a set per prefix. */
  private targetsOf(key: string): Array<Set<HubWatcher>> {
    const targets: Array<Set<HubWatcher>> = [];
    for (const collection of [collectionOf(key), '']) {
      for (const [prefix, regs] of this.registrations.get(collection) ?? []) if (key.startsWith(prefix)) targets.push(regs);
    }
    return targets;
  }

  close(): void {
    this.closed = true;
    this.healthCall?.cancel();
    this.subscription?.unsubscribe();
    this.failAll('the server is shutting down');
    for (const w of [...this.waiters]) w.settle(false);
  }

  private dispatch(msg: Msg): void {
    const revision = Number(msg.headers?.get(REVISION_HEADER));
    const prev = Number(msg.headers?.get(PREV_REVISION_HEADER));
    if (!Number.isFinite(revision)) return;
    if (this.revision > 0 && prev > this.revision) this.failAll(`watch stream skipped revisions ${this.revision + 1}..${prev}`);
    if (revision <= this.revision) return;
    this.advance(revision);
    if (msg.data.length === 0) return; // a progress mark: a revision reached without a change
    const key = keyOfSubject(msg.subject);
    const targets = this.targetsOf(key);
    if (targets.length === 0) return; // decoded only when someone watches
    const event = decodeEvent(msg.data);
    const parent = extractContext((k) => msg.headers?.get(k) || undefined);
    const attributes = () => ({ 'svc.key': key, 'svc.revision': revision, 'svc.watchers': targets.reduce((n, regs) => n + regs.size, 0) });
    const now = performance.now();
    withSpanSync('watch deliver', attributes, () => {
      for (const regs of targets) {
        for (const w of regs) {
          w.onEvent(event);
          if (w.flush) this.pacer.note(w as Required<HubWatcher>, now);
        }
      }
    }, { kind: SpanKind.CONSUMER, parent });
  }

  private failAll(reason: string): void {
    const regs = [...this.registrations.values()].flatMap((byPrefix) => [...byPrefix.values()].flatMap((set) => [...set]));
    this.registrations.clear();
    for (const r of regs) r.onFail(reason);
  }

  /** Learns where storage is, so a later gap in the chain is recognised. */
  private async baseline(): Promise<void> {
    const current = await this.storage.currentRevision();
    if (current.revision > this.revision) this.advance(current.revision);
  }

  /** Moves to a newer committed revision and releases the reads that waited for it. */
  private advance(revision: number): void {
    this.revision = revision;
    for (const w of this.waiters) if (w.revision <= revision) w.settle(true);
  }

  private async followNatsStatus(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect') {
        this.natsUp = false;
        this.failAll('the watch fan-out (NATS) connection was lost');
      } else if (s.type === 'reconnect') {
        await this.baseline().catch(() => undefined);
        this.natsUp = true;
      }
    }
  }

  /** Follows storage's health stream: its loss ends every watch, its return re-baselines. */
  private monitorStorage(): void {
    if (this.closed) return;
    const replicas = replicaSetOf(this.storage.raw);
    if (replicas) return this.followReplicas(replicas);
    const call = healthClient(this.storage.address).watch({ service: '' });
    this.healthCall = call;
    let retried = false;
    const retry = () => {
      if (retried) return;
      retried = true;
      call.cancel();
      if (this.storageUp) this.failAll('the storage service is unavailable');
      this.storageUp = false;
      setTimeout(() => this.monitorStorage(), STORAGE_RETRY_MS).unref();
    };
    call.on('data', (res: { status?: string }) => {
      if (res.status !== 'SERVING') return retry();
      this.baseline().then(() => { this.storageUp = true; }, retry);
    });
    call.on('error', retry);
    call.on('end', retry);
  }

  /** Storage run as several replicas: losing one leaves the stream whole (the chain tells of any gap), losing all
   * ends every watch, and one serving again re-baselines. */
  private followReplicas(replicas: ReplicaSet): void {
    let baselining = false;
    const changed = (): void => {
      if (this.closed) return;
      if (!replicas.serving) {
        if (this.storageUp) this.failAll('the storage service is unavailable');
        this.storageUp = false;
        return;
      }
      if (this.storageUp || baselining) return;
      baselining = true;
      this.baseline().then(() => { this.storageUp = replicas.serving; }, () => setTimeout(changed, STORAGE_RETRY_MS).unref())
        .finally(() => { baselining = false; });
    };
    const off = replicas.onChange(changed);
    this.healthCall = { cancel: off };
    changed();
  }
}
