// ResourceQuota (validating, on by default, last before AlwaysDeny): a write that
// adds usage is checked against every quota of its namespace that applies, and
// the usage is charged to those quotas before the write is admitted. Writes of one
// namespace are checked in batches, one at a time: each batch is checked in order
// against the running usage, then each changed quota is written once, on the
// condition that it is still at the revision read. A quota another writer changed
// meanwhile is read again and the batch's pending writes are checked against it
// again, so concurrent creates, here or through another admission process, never
// charge past a quota. A dry run is checked and never charged.
import { equalLists, evaluatorFor, type Evaluator, type Quota } from '../../quota/index.js';
import type { StorageClient } from '../../storage/client.js';
import { AdmissionError, type AdmissionPlugin, type AdmissionRequest, type Operation } from '../types.js';
import { checkRequest, type LimitedResource } from './resourcequota-check.js';
import { QuotaStore, type StoredQuota } from './resourcequota-store.js';

export const RESOURCE_QUOTA = 'ResourceQuota';
export type { LimitedResource };

/** How often a batch is checked again after its charge lost to a concurrent write. */
const MAX_RETRIES = 10;

interface Waiter {
  request: AdmissionRequest;
  evaluator: Evaluator;
  /** Undefined while the outcome is open; null once admitted. */
  outcome?: AdmissionError | Error | null;
  done: (outcome: AdmissionError | Error | null) => void;
}

/** Decides a waiting write once (later decisions are ignored). */
type Decide = (w: Waiter, outcome: AdmissionError | Error | null) => void;

const conflict = (name: string) => new AdmissionError(409, 'Conflict',
  `Operation cannot be fulfilled on resourcequotas "${name}": the object has been modified; please apply your changes to the latest version and try again`);

export class ResourceQuota implements AdmissionPlugin {
  readonly name = RESOURCE_QUOTA;
  readonly phase = 'validating' as const;
  private readonly store: QuotaStore;
  private started = false;
  private readonly pending = new Map<string, Waiter[]>();
  private readonly draining = new Set<string>();

  constructor(storage: StorageClient, private readonly limited: LimitedResource[] = [], private readonly clock: () => number = Date.now) {
    this.store = new QuotaStore(storage);
  }

  handles(operation: Operation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  stop(): void {
    this.store.stop();
  }

  async admit(request: AdmissionRequest): Promise<void> {
    // Subresources change no usage, except a pod resized in place.
    if (request.subresource !== '' && request.subresource !== 'resize') return;
    if (!request.namespace) return;
    const evaluator = evaluatorFor(request.resource.group, request.resource.resource);
    if (!evaluator?.handles(request.operation, request.subresource)) return;
    if (!this.started) {
      // Quotas are followed from the first write that may be charged on.
      this.started = true;
      this.store.start();
    }
    // Nothing to check: no quota in the namespace, and no resource needs one.
    if (this.limited.length === 0 && this.store.knownEmpty(request.namespace)) return;
    if (request.dryRun) {
      const quotas = await this.store.inNamespace(request.namespace);
      checkRequest(quotas.map((q) => q.quota), request, evaluator, this.limited, this.clock());
      return;
    }
    const outcome = await new Promise<AdmissionError | Error | null>((done) => this.enqueue(request.namespace, { request, evaluator, done }));
    if (outcome) throw outcome;
  }

  private enqueue(namespace: string, waiter: Waiter): void {
    const queue = this.pending.get(namespace);
    if (queue) queue.push(waiter);
    else this.pending.set(namespace, [waiter]);
    if (!this.draining.has(namespace)) void this.drain(namespace);
  }

  /** Checks the namespace's waiting writes, a batch at a time, until none wait. */
  private async drain(namespace: string): Promise<void> {
    this.draining.add(namespace);
    try {
      for (let batch = this.pending.get(namespace); batch; batch = this.pending.get(namespace)) {
        this.pending.delete(namespace);
        await this.settle(namespace, batch);
      }
    } finally {
      this.draining.delete(namespace);
    }
  }

  private async settle(namespace: string, batch: Waiter[]): Promise<void> {
    const decide: Decide = (w, outcome) => {
      if (w.outcome !== undefined) return;
      w.outcome = outcome;
      w.done(outcome);
    };
    try {
      await this.charge(await this.store.inNamespace(namespace), batch, decide);
    } catch (err) {
      for (const w of batch) decide(w, err as Error);
    }
  }

  /** Checks the open writes against the quotas and charges them; again against the quotas that changed meanwhile. */
  private async charge(quotas: StoredQuota[], batch: Waiter[], decide: Decide): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const open = batch.filter((w) => w.outcome === undefined);
      // Without quotas only limitedResources can refuse.
      if (open.length === 0 || (quotas.length === 0 && this.limited.length === 0)) break;
      const { running, charged } = this.check(quotas.map((q) => q.quota), open, decide);
      const changed = quotas.filter((q, i) => !equalLists(q.quota.used, running[i].used));
      const landed = await Promise.all(changed.map((q) => this.store.charge(q, running[quotas.indexOf(q)].used)));
      const lost = changed.filter((_, i) => !landed[i]);
      if (lost.length === 0) break;
      if (attempt >= MAX_RETRIES) {
        for (const w of charged) decide(w, conflict(lost[0].quota.name));
        return;
      }
      // Writes charged to a quota that landed stay charged; they are checked again only against the ones that did not.
      quotas = (await Promise.all(lost.map((q) => this.store.reread(q.key)))).filter((q): q is StoredQuota => q !== undefined);
    }
    for (const w of batch) decide(w, null);
  }

  /** Checks each open write in turn against the running usage: a refusal or a write that charges nothing is decided now;
   * the others wait for their charges to land. */
  private check(quotas: Quota[], open: Waiter[], decide: Decide): { running: Quota[]; charged: Set<Waiter> } {
    let running = quotas;
    const charged = new Set<Waiter>();
    for (const w of open) {
      try {
        const next = checkRequest(running, w.request, w.evaluator, this.limited, this.clock());
        if (next.some((q, i) => !equalLists(q.used, running[i].used))) {
          charged.add(w);
          running = next;
        } else {
          decide(w, null);
        }
      } catch (err) {
        decide(w, err as Error);
      }
    }
    return { running, charged };
  }
}
