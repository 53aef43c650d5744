// A work queue of keys, as the platform's controllers use one: a key added while
// waiting is queued once, a key is never worked on twice at the same time (added
// while in progress, it runs again after), a failure is retried with a per-key
// exponential back-off, and a key can be added after a delay.
export interface WorkQueueOptions {
  workers?: number;
  retryMinMs?: number;
  retryMaxMs?: number;
  /** Says what failed (default: the console). */
  report?: (key: string, err: Error) => void;
}

export class WorkQueue {
  private readonly waiting = new Set<string>();
  private readonly active = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; at: number }>();
  private running = 0;
  private stopped = false;
  private readonly workers: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;
  private readonly report: (key: string, err: Error) => void;

  constructor(private readonly name: string, private readonly process: (key: string) => Promise<void>, opts: WorkQueueOptions = {}) {
    this.workers = opts.workers ?? 1;
    this.retryMinMs = opts.retryMinMs ?? 100;
    this.retryMaxMs = opts.retryMaxMs ?? 10_000;
    this.report = opts.report ?? ((key, err) => console.error(`${this.name}: ${key}: ${err.message}`));
  }

  add(key: string): void {
    if (this.stopped) return;
    this.waiting.add(key);
    this.pump();
  }

  /** Adds the key after `ms`; a pending delay of the key that ends sooner is kept. */
  addAfter(key: string, ms: number): void {
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const pending = this.timers.get(key);
    if (this.stopped || (pending && pending.at <= at)) return;
    clearTimeout(pending?.timer);
    const timer = setTimeout(() => { this.timers.delete(key); this.add(key); }, Math.min(ms, 2 ** 31 - 1));
    this.timers.set(key, { timer, at });
  }

  /** Drops a key's back-off and pending delay (its object is gone). */
  forget(key: string): void {
    this.failures.delete(key);
    clearTimeout(this.timers.get(key)?.timer);
    this.timers.delete(key);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
    this.waiting.clear();
  }

  /** Nothing waiting or in progress (for tests). */
  get idle(): boolean {
    return this.waiting.size === 0 && this.running === 0;
  }

  /** Resolves once nothing waits or is in progress (retries still pending do not count). */
  async drained(): Promise<void> {
    while (!this.idle) await new Promise((r) => setTimeout(r, 10));
  }

  private pump(): void {
    while (this.running < this.workers) {
      const key = [...this.waiting].find((k) => !this.active.has(k));
      if (key === undefined) return;
      this.waiting.delete(key);
      this.active.add(key);
      this.running++;
      void this.run(key);
    }
  }

  private async run(key: string): Promise<void> {
    let retryIn: number | undefined;
    try {
      await this.process(key);
      this.failures.delete(key);
    } catch (err) {
      const n = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, n);
      this.report(key, err as Error);
      retryIn = Math.min(this.retryMinMs * 2 ** (n - 1), this.retryMaxMs);
    } finally {
      this.active.delete(key);
      this.running--;
    }
    if (retryIn !== undefined) this.addAfter(key, retryIn);
    this.pump();
  }
}
