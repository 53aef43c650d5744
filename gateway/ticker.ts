// One timer for many periodic callbacks: a thousand idle watches that want bookmarks wake the
// process once per period, not a thousand times at scattered moments.

/** Runs every added callback once per period, from one timer that exists only while a callback does. */
export class SharedTicker {
  private readonly callbacks = new Set<() => void>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly periodMs: number) {}

  /** Adds `fn`; the function returned removes it. */
  add(fn: () => void): () => void {
    this.callbacks.add(fn);
    this.timer ??= setInterval(() => { for (const f of this.callbacks) f(); }, this.periodMs).unref();
    return () => {
      this.callbacks.delete(fn);
      if (this.callbacks.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }
}
