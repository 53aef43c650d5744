// A steady writer with a ledger: creates ConfigMaps one after another over HTTPS
// and records every create the server acknowledged (201 Created), so a test can
// check after crashes that none of them was lost. A create that failed or got no
// answer is not in the ledger (it may or may not have happened); the next attempt
// uses a new name.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor } from './cluster.js';

export type Send = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

/** One create the writer tried: when it was sent and answered, the status (0: no answer), acknowledged, the revision,
 * and refused, why (the Status message, or the error of a request that got no answer). */
export interface Attempt { name: string; start: number; end: number; status: number; resourceVersion?: number; error?: string }

const PAUSE_MS = 20;
const FAILURE_PAUSE_MS = 200;
/** A list that answers a retryable status is asked again for this long (clients retry these). */
const LIST_RETRY_MS = 15_000;
const RETRYABLE = new Set([429, 500, 503, 504]);

export class LedgerWriter {
  /** Acknowledged creates: name → the value written. */
  readonly acked = new Map<string, string>();
  /** Attempts that got no 201, by status (0: no answer). */
  readonly failures = new Map<number, number>();
  /** Every attempt, in order. */
  readonly attempts: Attempt[] = [];
  readonly label = `ledger-${randomUUID().slice(0, 8)}`;
  private running = false;
  private loop?: Promise<void>;

  constructor(private readonly send: Send, readonly namespace: string) {}

  private get collection(): string {
    return `/api/v1/namespaces/${this.namespace}/configmaps`;
  }

  start(): this {
    this.running = true;
    this.loop = this.run();
    return this;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  /** Resolves true once `n` more creates than now are acknowledged, false after timeoutMs. */
  acks(n: number, timeoutMs: number): Promise<boolean> {
    const want = this.acked.size + n;
    return waitFor(() => this.acked.size >= want, timeoutMs, 50);
  }

  private async run(): Promise<void> {
    for (let i = 0; this.running; i++) {
      const name = `${this.label}-${i}`;
      const value = randomUUID();
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { ledger: this.label } }, data: { value } };
      const attempt: Attempt = { name, start: Date.now(), end: 0, status: 0 };
      const res = await this.send('POST', this.collection, body).catch((err: Error) => { attempt.error = err.message; return undefined; });
      const status = res?.status ?? 0;
      Object.assign(attempt, { end: Date.now(), status, resourceVersion: status === 201 ? Number(res!.body?.metadata?.resourceVersion) : undefined });
      if (res && status !== 201) attempt.error = String(res.body?.message ?? '');
      this.attempts.push(attempt);
      if (status === 201) this.acked.set(name, value);
      else this.failures.set(status, (this.failures.get(status) ?? 0) + 1);
      await sleep(status === 201 ? PAUSE_MS : FAILURE_PAUSE_MS);
    }
  }

  /** The acknowledged creates that are missing, or hold other data, in one list of the ledger's objects (asked with
   * `send`, the writer's own unless given). */
  async lost(send: Send = this.send): Promise<string[]> {
    // Only what was acknowledged before the list was asked for must be in it (the writer may go on meanwhile).
    const acked = [...this.acked];
    const res = await this.listAll(send);
    if (res.status !== 200) throw new Error(`listing the ledger's objects: ${res.status}`);
    const stored = new Map<string, string>((res.body.items as any[]).map((o) => [o.metadata.name, o.data?.value]));
    return acked.filter(([name, value]) => stored.get(name) !== value).map(([name]) => name);
  }

  /** The ledger's objects, asked again for a bounded time while the answer is retryable (a service just restarted). */
  private async listAll(send: Send): Promise<{ status: number; body: any }> {
    const deadline = Date.now() + LIST_RETRY_MS;
    for (;;) {
      const res = await send('GET', `${this.collection}?labelSelector=ledger%3D${this.label}`);
      if (!RETRYABLE.has(res.status) || Date.now() > deadline) return res;
      await sleep(FAILURE_PAUSE_MS);
    }
  }

  /** What went wrong meanwhile, for an assertion message. */
  describe(): string {
    return `${this.acked.size} acknowledged; failures by status: ${JSON.stringify(Object.fromEntries(this.failures))}`;
  }
}
