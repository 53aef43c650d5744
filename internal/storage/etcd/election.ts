// Which storage process publishes: the one whose lease holds the publisher key.
// Each process grants itself a lease (a few seconds, renewed every third of it)
// and creates the key under it if nobody holds it; the others watch the key and
// try again once it goes (its holder's lease expired: the process died or lost
// etcd). A holder that cannot renew stops publishing before its lease can expire,
// so two never publish at once: before each publish it checks, on its own monotonic
// clock, that its last renewal is recent enough (a process that was paused, or
// starved of CPU, learns it may have lost the lease before it publishes anything).
import { randomInt } from 'node:crypto';
import type { EtcdClient } from './client.js';
import { openWatch } from './watch.js';

export interface ElectionOptions {
  /** The lease's time to live, in seconds. */
  ttlSeconds: number;
  /** Who this process is, as the key's value says. */
  identity: string;
  /** Called when this process becomes the publisher. */
  elected(): void;
  /** Called when it stops being the publisher (its lease could not be renewed in time). */
  deposed(): void;
  log(line: string): void;
}

const RETRY_MS = 1000;

export class PublisherElection {
  private stopped = false;
  private leaseId = 0;
  private leading = false;
  private renewTimer?: NodeJS.Timeout;
  private renewedAt = 0;
  private readonly abort = new AbortController();

  constructor(private readonly client: EtcdClient, private readonly key: Buffer, private readonly options: ElectionOptions) {
    void this.run();
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Whether this process may publish now: it leads, and its lease, as last renewed, cannot have expired. When
   * the renewal is too old (the process was paused past it), it stops leading first. */
  mayPublish(): boolean {
    if (!this.leading) return false;
    if (performance.now() - this.renewedAt <= this.renewalLimitMs) return true;
    this.depose('its last lease renewal is too old to trust (the process was paused?)');
    return false;
  }

  /** How long after its last renewal was sent the lease is trusted: two thirds of its life, so it ends here first. */
  private get renewalLimitMs(): number {
    return (this.options.ttlSeconds * 1000 * 2) / 3;
  }

  /** Stops campaigning; a leader gives the key up at once (revoking its lease), so another takes over without waiting. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    clearInterval(this.renewTimer);
    if (this.leading) this.options.deposed();
    this.leading = false;
    if (this.leaseId) await this.client.leaseRevoke(this.leaseId).catch(() => undefined);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const holder = await this.campaign();
        if (holder === undefined) return; // leading: renewals take over
        await this.waitForVacancy(holder);
      } catch (err) {
        if (this.stopped) return;
        this.options.log(`storage: publisher election: ${(err as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  /** Takes the key if it is free; resolves undefined when this process now leads, else the revision it was seen at. */
  private async campaign(): Promise<number | undefined> {
    const { ttlSeconds } = this.options;
    // An ID of our choosing below 2^53, so revisions and lease IDs stay exact as numbers.
    this.leaseId = randomInt(1, 2 ** 47);
    const asked = performance.now(); // the lease's life starts when etcd grants it: after this
    const grant = await this.client.leaseGrant(this.leaseId, ttlSeconds);
    if (grant.error) throw new Error(`lease refused: ${grant.error}`);
    const res = await this.client.txn(
      [{ key: this.key, target: 'CREATE', createRevision: 0 }],
      [{ requestPut: { key: this.key, value: Buffer.from(this.options.identity), lease: this.leaseId } }],
    );
    if (!res.succeeded) {
      await this.client.leaseRevoke(this.leaseId).catch(() => undefined);
      this.leaseId = 0;
      return res.header.revision;
    }
    this.leading = true;
    this.renewedAt = asked;
    this.renewTimer = setInterval(() => void this.renew(), (ttlSeconds * 1000) / 3);
    this.options.log(`storage: ${this.options.identity} publishes (lease ${this.leaseId.toString(16)})`);
    this.options.elected();
    return undefined;
  }

  /** Renews the lease; past two thirds of its life without a renewal, the lease may be gone: stop publishing. */
  private async renew(): Promise<void> {
    const id = this.leaseId;
    const sent = performance.now();
    const ttl = await this.keepAlive(id).catch(() => 0);
    if (this.stopped || id !== this.leaseId) return;
    if (ttl > 0) this.renewedAt = sent;
    if (ttl <= 0 && (ttl === -1 || performance.now() - this.renewedAt > this.renewalLimitMs)) this.depose(ttl === -1 ? 'the lease expired' : 'the lease could not be renewed');
  }

  /** Stops leading and campaigns again. The lease is revoked, in case it still holds the key: another process then
   * takes over at once rather than when it expires. */
  private depose(reason: string): void {
    if (!this.leading) return;
    clearInterval(this.renewTimer);
    this.leading = false;
    this.options.log(`storage: ${this.options.identity} stops publishing: ${reason}`);
    this.options.deposed();
    const id = this.leaseId;
    this.leaseId = 0;
    void this.client.leaseRevoke(id).catch(() => undefined).then(() => this.run());
  }

  /** One keep-alive: resolves the TTL etcd left the lease (-1: gone). */
  private keepAlive(id: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const stream = this.client.leaseKeepAlive();
      const timer = setTimeout(() => { stream.cancel(); reject(new Error('no keep-alive answer')); }, (this.options.ttlSeconds * 1000) / 3);
      stream.once('data', (res: { TTL: number }) => {
        clearTimeout(timer);
        stream.end();
        stream.cancel();
        resolve(res.TTL > 0 ? res.TTL : -1);
      });
      stream.once('error', (err) => { clearTimeout(timer); reject(err); });
      stream.write({ ID: id });
    });
  }

  /** Waits until the key is deleted (its holder's lease ended) or the watch fails. */
  private async waitForVacancy(seenAt: number): Promise<void> {
    const end = Buffer.concat([this.key, Buffer.from([0])]);
    const watch = await openWatch(this.client, { key: this.key, rangeEnd: end, startRevision: seenAt + 1 }, this.abort.signal);
    try {
      for await (const events of watch.responses) if (events.some((e) => e.type === 'DELETE')) return;
    } finally {
      await watch.responses.return(undefined);
    }
  }
}
