// The policy generation: `<epoch>.<counter>`, the epoch naming this process and
// the counter moving with every change that can turn a decision (RBAC objects,
// the node graph, a reloaded configuration). It is published on NATS at start,
// at every change and now and then, so gateways drop the decisions they keep
// exactly when these may no longer hold.
import { randomBytes } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { NATS_AUTHZ_GENERATION_SUBJECT } from '../names/index.js';

/** Re-announced this often, for gateways that connected after the last change. */
const ANNOUNCE_INTERVAL_MS = 10_000;

export class PolicyGeneration {
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

export class GenerationPublisher {
  private nc?: NatsConnection;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly generation: PolicyGeneration, private readonly log: (line: string) => void = console.error) {
    generation.onChange(() => this.announce());
  }

  /** Connects (retrying forever in the background) and announces the generation. */
  start(url: string): this {
    void connect({ servers: url, name: 'svc-authz', maxReconnectAttempts: -1, waitOnFirstConnect: true, reconnectTimeWait: 500 })
      .then((nc) => {
        if (this.closed) return void nc.close();
        this.nc = nc;
        this.announce();
        void this.announceOnReconnect(nc);
      })
      .catch((err: Error) => this.log(`authz: cannot connect to NATS at ${url}: ${err.message}`));
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
      this.nc.publish(NATS_AUTHZ_GENERATION_SUBJECT, this.generation.current);
    } catch (err) {
      this.log(`authz: cannot publish the policy generation: ${(err as Error).message}`);
    }
  }

  private async announceOnReconnect(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) if (status.type === 'reconnect') this.announce();
  }
}
