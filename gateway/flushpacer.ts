// When each watcher writes what it holds. A socket write costs about the same whatever it
// carries, so under a stream of changes a watcher writes at most once per interval: one
// written within the last interval holds its new events until the interval since that
// write ends, then writes them together. Watchers keep their own phase (each is due an
// interval after its own last write), so the writes spread over time instead of coming
// as one burst to every watcher, and an event waits at most about an interval. A watcher
// that wrote nothing within the interval writes at the end of the turn: at low rates
// nothing waits. One timer serves every watcher, armed only while some hold events.

/** A timer may fire up to this much before the time it was set for, as performance.now() tells it. */
const SLACK_MS = 1;

export interface Flushable {
  flush(): void;
}

export class FlushPacer {
  /** Watchers flushed within about the last interval, oldest first, with when (performance.now()). */
  private readonly recent = new Map<Flushable, number>();
  /** Watchers holding events until their interval ends. */
  private readonly held = new Set<Flushable>();
  /** Watchers to flush at the end of this turn. */
  private readonly due = new Set<Flushable>();
  private immediate = false;
  private timer?: NodeJS.Timeout;

  constructor(private readonly intervalMs: number) {}

  /** Notes that w was given events at time now: it flushes them at the end of the turn, or when its interval ends. */
  note(w: Flushable, now: number): void {
    const last = this.recent.get(w);
    if (last !== undefined && now - last < this.intervalMs) {
      this.held.add(w);
      this.arm();
      return;
    }
    this.due.add(w);
    if (this.immediate) return;
    this.immediate = true;
    setImmediate(() => this.flushDue());
  }

  /** Forgets a watcher that is gone. */
  forget(w: Flushable): void {
    this.recent.delete(w);
    this.held.delete(w);
    this.due.delete(w);
  }

  private flushDue(): void {
    this.immediate = false;
    for (const w of this.due) this.flush(w, performance.now());
    this.due.clear();
  }

  private flush(w: Flushable, now: number): void {
    this.held.delete(w);
    this.recent.delete(w);
    this.recent.set(w, now);
    w.flush();
  }

  /** Flushes the held watchers whose interval has ended, oldest first, and drops the others whose has. */
  private onTimer(): void {
    this.timer = undefined;
    const now = performance.now();
    for (const [w, last] of this.recent) {
      if (now + SLACK_MS - last < this.intervalMs) break;
      if (this.held.has(w)) this.flush(w, now);
      else this.recent.delete(w);
    }
    this.arm();
  }

  /** Sets the timer for the oldest recent watcher's interval end, while some watcher holds events. */
  private arm(): void {
    if (this.timer || this.held.size === 0) return;
    const first = this.recent.values().next();
    const wait = first.done ? 0 : first.value + this.intervalMs - performance.now();
    this.timer = setTimeout(() => this.onTimer(), Math.max(1, wait));
  }
}
