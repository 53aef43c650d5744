// Which storage process publishes: the one whose lease holds the publisher key.
// Each process grants itself a lease (a few seconds, renewed every third of it)
// and creates the key under it if nobody holds it; the others watch the key and
// try again once it goes (its holder's lease expired: the process died or lost
// etcd). A holder that cannot renew stops publishing before its lease can expire,
// so two never publish at once.
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
    const grant = await this.client.leaseGrant(this.leaseId, ttlSeconds);
    if (grant.error) throw new Error(`lease refused: ${grant.error}`);
    const granted = Date.now();
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
    this.renewedAt = granted;
    this.renewTimer = setInterval(() => void this.renew(), (ttlSeconds * 1000) / 3);
    this.options.log(`storage: ${this.options.identity} publishes (lease ${this.leaseId.toString(16)})`);
    this.options.elected();
    return undefined;
  }

  /** Renews the lease; past two thirds of its life without a renewal, the lease may be gone: stop publishing. */
  private async renew(): Promise<void> {
    const id = this.leaseId;
    const sent = Date.now();
    const ttl = await this.keepAlive(id).catch(() => 0);
    if (this.stopped || id !== this.leaseId) return;
    if (ttl > 0) this.renewedAt = sent;
    const limit = (this.options.ttlSeconds * 1000 * 2) / 3;
    if (ttl <= 0 && (ttl === -1 || Date.now() - this.renewedAt > limit)) this.depose(ttl === -1 ? 'the lease expired' : 'the lease could not be renewed');
  }

  private depose(reason: string): void {
    if (!this.leading) return;
    clearInterval(this.renewTimer);
    this.leading = false;
    this.options.log(`storage: ${this.options.identity} stops publishing: ${reason}`);
    this.options.deposed();
    void this.run();
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
