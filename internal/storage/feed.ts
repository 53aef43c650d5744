// The live part of one watch: committed events under its prefix, queued between
// the commit that produced them and the stream that sends them.
import { RpcError, grpc } from '../rpc/index.js';
import type { StorageEvent } from './events.js';

/** Live events a watch may have waiting, unless its store says otherwise. */
export const MAX_WATCH_BACKLOG = 10_000;

export class LiveFeed {
  private queue: StorageEvent[] = [];
  private failure?: Error;
  private wake?: () => void;
  private readonly onAbort = (): void => this.wake?.();

  constructor(readonly prefix: string, private readonly maxBacklog: number,
    private readonly signal: AbortSignal | undefined, private readonly onClose: (feed: LiveFeed) => void) {
    signal?.addEventListener('abort', this.onAbort);
  }

  /** Takes the events of a commit; a watcher too far behind is ended rather than buffered without bound. */
  push(events: StorageEvent[]): void {
    if (this.failure) return;
    for (const event of events) if (event.kv!.key.startsWith(this.prefix)) this.queue.push(event);
    if (this.queue.length > this.maxBacklog) {
      this.fail(new RpcError(grpc.status.RESOURCE_EXHAUSTED,
        `watch of "${this.prefix}" fell more than ${this.maxBacklog} events behind; watch again from the last revision seen`));
    }
    if (this.queue.length > 0) this.wake?.();
  }

  /** Ends the feed: the next `next()` throws err. It takes no more events meanwhile. */
  fail(err: Error): void {
    this.failure ??= err;
    this.queue = [];
    this.onClose(this);
    this.wake?.();
  }

  /** The events queued since the last call, waiting for some; undefined once the watch is aborted. */
  async next(): Promise<StorageEvent[] | undefined> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.signal?.aborted) return undefined;
      if (this.queue.length > 0) {
        const events = this.queue;
        this.queue = [];
        return events;
      }
      await new Promise<void>((resolve) => { this.wake = resolve; });
      this.wake = undefined;
    }
  }

  close(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    this.onClose(this);
  }
}
