// Compaction of etcd on an interval, once per interval however many storage
// processes run: the compaction key's version is a logical clock. Each tick, a
// process writes the key only if its version is still the one it saw last time
// (so nobody else compacted since) and then compacts at the revision it saw at
// its previous tick: history stays readable for at least one interval. The key's
// value is the revision compacted, which every process reads as the oldest one
// readable.
import type { EtcdClient } from './client.js';

export class Compactor {
  private timer?: NodeJS.Timeout;
  /** The compaction key's version when last seen. */
  private seenVersion = 0;
  /** The etcd revision at the previous tick: the next compaction's target. */
  private nextTarget = 0;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly client: EtcdClient, private readonly key: Buffer, private readonly compacted: (revision: number) => void,
    private readonly intervalMs: number, private readonly log: (line: string) => void) {}

  start(): void {
    if (this.intervalMs <= 0) return;
    this.timer = setInterval(() => { this.tick().catch((err) => this.log(`storage: etcd compaction failed: ${(err as Error).message}`)); }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One turn of the schedule. */
  tick(): Promise<void> {
    this.running = this.running.catch(() => undefined).then(() => this.turn());
    return this.running;
  }

  /** Compacts at a revision now, then records it so the other processes learn it. */
  compactAt(revision: number): Promise<void> {
    this.running = this.running.catch(() => undefined).then(async () => {
      await this.client.compact(revision).catch(ignoreCompacted);
      await this.client.put(this.key, Buffer.from(String(revision)));
      this.compacted(revision);
    });
    return this.running;
  }

  private async turn(): Promise<void> {
    const target = this.nextTarget;
    const res = await this.client.txn(
      [{ key: this.key, target: 'VERSION', version: this.seenVersion }],
      [{ requestPut: { key: this.key, value: Buffer.from(String(target)) } }],
      [{ requestRange: { key: this.key } }],
    );
    this.nextTarget = res.header.revision;
    if (!res.succeeded) {
      const kv = res.responses[0]?.responseRange?.kvs[0];
      this.seenVersion = kv?.version ?? 0;
      this.compacted(Number(kv?.value?.toString() ?? 0));
      return;
    }
    this.seenVersion++;
    if (target === 0) return;
    await this.client.compact(target).catch(ignoreCompacted);
    this.compacted(target);
  }
}

/** An explicit compaction may have gone further already. */
function ignoreCompacted(err: Error): void {
  if (!/compacted/.test(err.message)) throw err;
}
