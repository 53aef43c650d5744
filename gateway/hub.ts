// One NATS subscription per gateway carries every committed change; the hub fans
// them out to the open watches. It trusts the stream only while it can prove it
// complete: the chain of revisions is unbroken, NATS is connected and storage is
// reachable. Otherwise every watch ends with an error and clients resume from
// their last resourceVersion (history fills the hole) or re-list.
import type { NatsConnection, Msg, Subscription } from '@nats-io/nats-core';
import type { StorageClient, StorageEvent } from '../internal/storage/client.js';
import { decodeEvent, decodeSubjectToken, subscriptionSubject, REVISION_HEADER, PREV_REVISION_HEADER } from '../internal/storage/events.js';
import { NATS_EVENTS_PREFIX } from '../internal/names/index.js';
import { healthClient } from '../internal/rpc/index.js';
import { SpanKind, extractContext, withSpanSync } from '../internal/tracing/index.js';

export interface HubWatcher {
  /** Called for each live event under the watcher's prefix, in revision order. */
  onEvent(event: StorageEvent): void;
  /** Called once when the hub can no longer vouch for the stream. */
  onFail(reason: string): void;
}

interface Registration {
  prefix: string;
  watcher: HubWatcher;
}

const STORAGE_RETRY_MS = 500;
const SUBJECT_PREFIX = `${NATS_EVENTS_PREFIX}.`;

/** The storage key a change was published under, read from its subject. */
const keyOfSubject = (subject: string): string =>
  subject.slice(SUBJECT_PREFIX.length).split('.').map(decodeSubjectToken).join('/');

export class WatchHub {
  private readonly registrations = new Set<Registration>();
  private subscription?: Subscription;
  /** The newest revision the hub has seen or knows is covered by storage history. */
  private revision = 0;
  private natsUp = true;
  private storageUp = false;
  private closed = false;
  private healthCall?: { cancel(): void };

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

  register(prefix: string, watcher: HubWatcher): () => void {
    const reg = { prefix, watcher };
    this.registrations.add(reg);
    return () => this.registrations.delete(reg);
  }

  close(): void {
    this.closed = true;
    this.healthCall?.cancel();
    this.subscription?.unsubscribe();
    this.failAll('the server is shutting down');
  }

  private dispatch(msg: Msg): void {
    const revision = Number(msg.headers?.get(REVISION_HEADER));
    const prev = Number(msg.headers?.get(PREV_REVISION_HEADER));
    if (!Number.isFinite(revision)) return;
    if (this.revision > 0 && prev > this.revision) this.failAll(`watch stream skipped revisions ${this.revision + 1}..${prev}`);
    if (revision <= this.revision) return;
    this.revision = revision;
    const key = keyOfSubject(msg.subject);
    const targets = [...this.registrations].filter((r) => key.startsWith(r.prefix));
    if (targets.length === 0) return; // decoded only when someone watches
    const event = decodeEvent(msg.data);
    const parent = extractContext((k) => msg.headers?.get(k) || undefined);
    withSpanSync('watch deliver', () => ({ 'svc.key': key, 'svc.revision': revision, 'svc.watchers': targets.length }), () => {
      for (const t of targets) t.watcher.onEvent(event);
    }, { kind: SpanKind.CONSUMER, parent });
  }

  private failAll(reason: string): void {
    const regs = [...this.registrations];
    this.registrations.clear();
    for (const r of regs) r.watcher.onFail(reason);
  }

  /** Learns where storage is, so a later gap in the chain is recognised. */
  private async baseline(): Promise<void> {
    const current = await this.storage.currentRevision();
    this.revision = Math.max(this.revision, current.revision);
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
}
