// Publishes committed events on NATS in revision order, one message each, chained
// by the Svc-Prev-Revision header. NATS being down never stops the store: the
// connection retries forever, and an event that cannot be published is logged and
// left out of the chain, so subscribers see the gap.
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { SpanKind, injectContext, withSpanSync } from '../tracing/index.js';
import { addressesOf } from '../rpc/client.js';
import { PREV_REVISION_HEADER, PROGRESS_SUBJECT, REVISION_HEADER, eventSubject } from './events.js';
import type { CommittedEvent } from './backend.js';

const DRAIN_TIMEOUT_MS = 2000;
const EMPTY = new Uint8Array(0);

export class EventPublisher {
  private nc?: NatsConnection;
  private closed = false;
  private readonly connecting: Promise<void>;

  /** prevRevision: the store revision at start, announced as the predecessor of the first message. */
  constructor(url: string, private prevRevision: number, private readonly log: (line: string) => void = console.error) {
    this.connecting = this.run(url);
  }

  /** Resolves true once connected, false when timeoutMs passes first. */
  async connected(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => { timer = setTimeout(resolve, timeoutMs); });
    await Promise.race([this.connecting, timeout]);
    clearTimeout(timer);
    return this.nc !== undefined;
  }

  /** Publishes one commit's events; failures are logged once per commit. */
  publish(batch: CommittedEvent[]): void {
    const failed: Array<[revision: number, reason: unknown]> = [];
    for (const committed of batch) {
      try {
        withSpanSync('nats publish', () => ({ 'messaging.system': 'nats', 'storage.revision': committed.event.revision }),
          () => this.send(committed), { kind: SpanKind.PRODUCER, parent: committed.context });
      } catch (err) {
        failed.push([committed.event.revision, err]);
      }
    }
    if (failed.length === 0) return;
    const revisions = failed.length === 1 ? `${failed[0][0]}` : `${failed[0][0]}..${failed[failed.length - 1][0]}`;
    this.log(`storage: could not publish ${failed.length} event(s) at revision ${revisions} on NATS: ${(failed[0][1] as Error)?.message}`);
  }

  /**
   * Tells subscribers the stream reached a revision that is no change's (on etcd, one taken by a key outside the
   * objects), so reads waiting for it go on: an empty message outside the chain (the next change still names the
   * last one as its predecessor). With gap, changes before it were lost: the chain restarts at it, and subscribers
   * see the gap.
   */
  progress(revision: number, gap = false): void {
    if (gap) this.prevRevision = revision;
    if (!this.nc || this.closed) return;
    const h = headers();
    h.set(REVISION_HEADER, String(revision));
    h.set(PREV_REVISION_HEADER, String(this.prevRevision));
    this.nc.publish(PROGRESS_SUBJECT, EMPTY, { headers: h });
  }

  /** Runs inside its span, so the message carries the span's trace context. */
  private send({ event, payload }: CommittedEvent): void {
    if (!this.nc || this.closed) throw new Error('not connected to NATS');
    const h = headers();
    h.set(REVISION_HEADER, String(event.revision));
    h.set(PREV_REVISION_HEADER, String(this.prevRevision));
    injectContext((name, value) => h.set(name, value));
    this.nc.publish(eventSubject(event.kv!.key), payload, { headers: h });
    this.prevRevision = event.revision;
  }

  private async run(url: string): Promise<void> {
    try {
      const nc = await connect({
        servers: addressesOf(url), name: 'svc-storage', maxReconnectAttempts: -1, waitOnFirstConnect: true, reconnectTimeWait: 500,
      });
      if (this.closed) {
        await nc.close();
        return;
      }
      this.nc = nc;
      this.log(`storage: connected to NATS at ${url}`);
      void this.watchStatus(nc);
    } catch (err) {
      this.log(`storage: cannot connect to NATS at ${url}: ${(err as Error).message}`);
    }
  }

  private async watchStatus(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnect' || status.type === 'error') {
        this.log(`storage: NATS ${status.type}${'error' in status && status.error ? `: ${status.error.message}` : ''}`);
      }
    }
  }

  /** Sends what is buffered (bounded in time) and closes the connection. */
  async close(): Promise<void> {
    this.closed = true;
    await new Promise((resolve) => setImmediate(resolve)); // commit listeners scheduled before close
    const nc = this.nc;
    if (!nc) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => { timer = setTimeout(resolve, DRAIN_TIMEOUT_MS); });
    await Promise.race([nc.drain().catch(() => undefined), timeout]);
    clearTimeout(timer);
    if (!nc.isClosed()) await nc.close().catch(() => undefined);
  }
}
