// What the bootstrap-token controllers share: an informer of the bootstrap
// token Secrets of svc-system, and timers that fire at a token's expiry.
import type { ApiClient } from '../client/index.js';
import { Informer, type InformerHandlers } from '../client/informer.js';
import { NAMESPACE_SYSTEM, SECRET_TYPE_BOOTSTRAP_TOKEN } from '../names/index.js';

export const BOOTSTRAP_SECRETS = `/api/v1/namespaces/${NAMESPACE_SYSTEM}/secrets?fieldSelector=${encodeURIComponent(`type=${SECRET_TYPE_BOOTSTRAP_TOKEN}`)}`;

/** The longest a timer may wait (Node's limit); longer waits are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const bootstrapSecretInformer = (client: ApiClient, handlers: InformerHandlers): Informer =>
  new Informer(client, BOOTSTRAP_SECRETS, handlers);

/** Timers by key, each calling back at (or after) its time. */
export class Deadlines {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly fire: (key: string) => void) {}

  /** Calls back at `at` (ms since the epoch); replaces an earlier timer of the key. */
  set(key: string, at: number): void {
    this.clear(key);
    const wait = Math.max(0, at - Date.now());
    const timer = setTimeout(() => {
      this.timers.delete(key);
      if (wait > MAX_TIMER_MS) this.set(key, at);
      else this.fire(key);
    }, Math.min(wait, MAX_TIMER_MS));
    this.timers.set(key, timer);
  }

  clear(key: string): void {
    clearTimeout(this.timers.get(key));
    this.timers.delete(key);
  }

  clearAll(): void {
    for (const key of [...this.timers.keys()]) this.clear(key);
  }
}
