// Following a generation a service announces on NATS (`<epoch>.<counter>`: the
// epoch names the service's process, the counter moves with every change that
// may turn the answers it gave). The gateway keeps answers made at the current
// generation and is told when it moves; while NATS is down an announcement may
// be missed, so nothing may be kept (`up` is false) and what was kept goes.
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

export class GenerationFollower {
  private generation?: Generation;
  /** The current epoch was announced on NATS, not only named in answers. */
  private heard = false;
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

  /** The service's announcements reach this gateway: its current epoch was heard on NATS. */
  get confirmed(): boolean {
    return this.natsUp && this.heard;
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

  /** A generation announced or answered: a newer one is taken and reported. */
  observe(text: string): void {
    const next = parseGeneration(text);
    if (!next) return;
    const current = this.generation;
    if (current && current.epoch === next.epoch && current.counter >= next.counter) return;
    const sameEpoch = current?.epoch === next.epoch;
    this.generation = next;
    if (!sameEpoch) this.heard = false;
    this.changed(sameEpoch ? 'counter' : 'all');
  }

  private announced(text: string): void {
    this.observe(text);
    if (parseGeneration(text)?.epoch === this.generation?.epoch) this.heard = true;
  }

  /** Asks the service to announce now rather than at its next periodic announcement. */
  private ask(): void {
    try {
      this.nc.publish(generationAskSubject(this.subject));
    } catch {
      // NATS is closing: nothing is kept anyway
    }
  }

  /** Whether an answer made at `text` is of the current generation (observe it first). */
  isCurrent(text: string): boolean {
    const made = parseGeneration(text);
    const current = this.generation;
    return Boolean(made && current && made.epoch === current.epoch && made.counter === current.counter);
  }

  private async followNats(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') {
        this.natsUp = false;
        this.changed('all');
      } else if (status.type === 'reconnect') {
        this.generation = undefined;
        this.heard = false;
        this.natsUp = true;
        this.changed('all');
        this.ask();
      }
    }
  }
}
