// The generation of a service's answers: `<epoch>.<counter>`, the epoch naming
// the process and the counter moving with every change that can turn an answer
// it gave (authz: RBAC objects, the node graph, a reloaded configuration; authn:
// revoked credentials). It is published on NATS at start, at every change and
// now and then, so gateways drop the answers they keep exactly when these may no
// longer hold.
import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { generationAskSubject } from '../names/index.js';
import { addressesOf } from './client.js';

/** Re-announced this often, for gateways that connected after the last change. */
const ANNOUNCE_INTERVAL_MS = 10_000;

export class AnswerGeneration {
  readonly epoch = randomBytes(6).toString('hex');
  private counter = 0;
  private readonly listeners: Array<(generation: string) => void> = [];

  get current(): string {
    return `${this.epoch}.${this.counter}`;
  }

  bump(): void {
    this.counter++;
    for (const listener of this.listeners) listener(this.current);
  }

  onChange(listener: (generation: string) => void): void {
    this.listeners.push(listener);
  }
}

/** Where a generation is announced and who announces it (authz its policy generation, authn its revocation one). */
export interface Announcer {
  subject: string;
  program: string;
}

export class GenerationPublisher {
  private nc?: NatsConnection;
  private timer?: NodeJS.Timeout;
  private closed = false;
  private disconnected = false;

  constructor(private readonly generation: AnswerGeneration, private readonly announcer: Announcer,
    private readonly log: (line: string) => void = console.error) {
    generation.onChange(() => this.announce());
  }

  /** Connected to NATS: the generations it announces reach the gateways (else they must not keep answers). */
  get connected(): boolean {
    return Boolean(this.nc && !this.nc.isClosed() && !this.disconnected);
  }

  /** Connects to the NATS servers of a comma list (retrying forever in the background) and announces the generation. */
  start(url: string): this {
    void connect({ servers: addressesOf(url), name: `svc-${this.announcer.program}`, maxReconnectAttempts: -1, waitOnFirstConnect: true, reconnectTimeWait: 500 })
      .then((nc) => {
        if (this.closed) return void nc.close();
        this.nc = nc;
        // Followers that start later ask instead of waiting for the next periodic announcement.
        nc.subscribe(generationAskSubject(this.announcer.subject), { callback: () => this.announce() });
        this.announce();
        void this.announceOnReconnect(nc);
      })
      .catch((err: Error) => this.log(`${this.announcer.program}: cannot connect to NATS at ${url}: ${err.message}`));
    this.timer = setInterval(() => this.announce(), ANNOUNCE_INTERVAL_MS);
    this.timer.unref();
    return this;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.nc?.drain().catch(() => undefined);
  }

  private announce(): void {
    if (!this.nc || this.nc.isClosed()) return;
    try {
      this.nc.publish(this.announcer.subject, this.generation.current);
    } catch (err) {
      this.log(`${this.announcer.program}: cannot publish the generation: ${(err as Error).message}`);
    }
  }

  private async announceOnReconnect(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') this.disconnected = true;
      if (status.type !== 'reconnect') continue;
      this.disconnected = false;
      this.announce();
    }
  }
}
