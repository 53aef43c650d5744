// Following a generation a service announces on NATS (`<epoch>.<counter>`: the
// epoch names the service's process, the counter moves with every change that
// may turn the answers it gave). The gateway keeps answers made at the current
// generation and is told when it moves; while NATS is down an announcement may
// be missed, so nothing may be kept (`up` is false) and what was kept goes.
// A service run as several processes announces one epoch per process: each is
// followed on its own, so answers from one are kept while another announces.
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { generationAskSubject } from '../internal/names/index.js';

export interface Generation {
  epoch: string;
  counter: number;
}

export function parseGeneration(text: string): Generation | undefined {
  const dot = text.lastIndexOf('.');
  const counter = Number(text.slice(dot + 1));
  if (dot <= 0 || !Number.isInteger(counter)) return undefined;
  return { epoch: text.slice(0, dot), counter };
}

/** What moved: the counter of the same process, or everything (a new process, NATS lost or back). */
export type Change = 'counter' | 'all';

/** The newest counter of one process, and whether it was announced on NATS (not only named in answers). */
interface Known {
  counter: number;
  heard: boolean;
}

/** Processes followed at once: more than a service runs replicas, so the oldest, gone with restarts, are forgotten. */
const MAX_EPOCHS = 16;

export class GenerationFollower {
  /** By epoch, the oldest first. */
  private readonly epochs = new Map<string, Known>();
  /** The epoch last observed: the process whose answer is about to be kept. */
  private last?: string;
  private natsUp = false;
  private subscription?: Subscription;

  constructor(private readonly nc: NatsConnection, private readonly subject: string, private readonly changed: (change: Change) => void) {}

  /** Subscribed (and flushed) when it resolves. */
  async start(): Promise<void> {
    this.subscription = this.nc.subscribe(this.subject, { callback: (err, msg) => { if (!err) this.announced(msg.string()); } });
    await this.nc.flush();
    this.natsUp = true;
    this.ask();
    void this.followNats();
  }

  /** The service's announcements reach this gateway: the epoch last observed was heard on NATS. */
  get confirmed(): boolean {
    return this.natsUp && this.last !== undefined && Boolean(this.epochs.get(this.last)?.heard);
  }

  close(): void {
    this.subscription?.unsubscribe();
    this.natsUp = false;
    this.changed('all');
  }

  /** Announcements can be trusted to arrive. */
  get up(): boolean {
    return this.natsUp;
  }

  /** A generation announced or answered: a newer one is taken and reported (a process not seen before: 'all'). */
  observe(text: string): void {
    const next = parseGeneration(text);
    if (!next) return;
    this.last = next.epoch;
    const known = this.epochs.get(next.epoch);
    if (known && known.counter >= next.counter) return;
    if (known) {
      known.counter = next.counter;
      return this.changed('counter');
    }
    this.epochs.set(next.epoch, { counter: next.counter, heard: false });
    if (this.epochs.size > MAX_EPOCHS) this.epochs.delete(this.epochs.keys().next().value!);
    this.changed('all');
  }

  private announced(text: string): void {
    this.observe(text);
    const known = this.epochs.get(parseGeneration(text)?.epoch ?? '');
    if (known) known.heard = true;
  }

  /** Asks the service to announce now rather than at its next periodic announcement. */
  private ask(): void {
    try {
      this.nc.publish(generationAskSubject(this.subject));
    } catch {
      // NATS is closing: nothing is kept anyway
    }
  }

  /** Whether an answer made at `text` is of its process's current generation (observe it first). */
  isCurrent(text: string): boolean {
    const made = parseGeneration(text);
    return Boolean(made && this.epochs.get(made.epoch)?.counter === made.counter);
  }

  private async followNats(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') {
        this.natsUp = false;
        this.changed('all');
      } else if (status.type === 'reconnect') {
        this.epochs.clear();
        this.last = undefined;
        this.natsUp = true;
        this.changed('all');
        this.ask();
      }
    }
  }
}
