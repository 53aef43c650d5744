// What the bootstrap-token controllers share: an informer of the bootstrap
// token Secrets of svc-system, and timers that fire at a token's expiry.
import type { ApiObject } from '../apimachinery/meta.js';
import { isBootstrapSecret } from '../bootstraptoken/index.js';
import type { ApiClient } from '../client/index.js';
import { Informer, type InformerHandlers } from '../client/informer.js';
import { NAMESPACE_SYSTEM } from '../names/index.js';

/** Every Secret of svc-system: a field selector names one value, and the token's type has two spellings. */
const BOOTSTRAP_SECRETS = `/api/v1/namespaces/${NAMESPACE_SYSTEM}/secrets`;

/** The longest a timer may wait (Node's limit); longer waits are re-armed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The informer of svc-system's Secrets; its handlers hear of bootstrap token Secrets only. */
export const bootstrapSecretInformer = (client: ApiClient, handlers: InformerHandlers): Informer => {
  const only = (f: (obj: ApiObject) => void) => (obj: ApiObject) => { if (isBootstrapSecret(obj)) f(obj); };
  return new Informer(client, BOOTSTRAP_SECRETS, { upsert: only(handlers.upsert), deleted: only(handlers.deleted) });
};

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
