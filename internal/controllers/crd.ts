// The CustomResourceDefinition controller: names (NamesAccepted and
// status.acceptedNames, one CRD at a time so two never take the same name),
// then Established once the names are in, and the cleanup of a deleted CRD's
// objects. It follows the CRDs with an informer (which lists again after a
// failed or expired watch) and writes through the API like any client.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiObject } from '../apimachinery/meta.js';
import { type Condition, findCondition, isConditionTrue, sameCondition, setCondition } from '../apiextensions/conditions.js';
import { caBundleValid } from '../apiextensions/conversion.js';
import { groupOf } from '../apiextensions/crd.js';
import type { ApiClient } from '../client/index.js';
import { Informer } from '../client/informer.js';
import { CRD_CLEANUP_FINALIZER } from '../names/index.js';
import { deepEqual } from '../registry/values.js';
import { CRDS, CrdCleanup } from './crdcleanup.js';
import { acceptedNames, decideNames, namesSettled, readNames } from './crdnames.js';

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 10_000;

const nameOf = (crd: ApiObject): string => crd.metadata!.name!;
const rv = (o: ApiObject | undefined): number => Number(o?.metadata?.resourceVersion ?? 0);
const deleting = (crd: ApiObject) => Boolean(crd.metadata?.deletionTimestamp) && (crd.metadata?.finalizers ?? []).includes(CRD_CLEANUP_FINALIZER);

export class CrdController {
  private readonly informer: Informer;
  /** The CRDs this controller wrote, until the informer catches up: names taken a moment ago count at once. */
  private readonly written = new Map<string, ApiObject>();
  private readonly queue = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly cleanups = new Set<string>();
  private readonly cleanup: CrdCleanup;
  private working = false;
  private stopped = false;

  constructor(private readonly client: ApiClient) {
    this.cleanup = new CrdCleanup(client);
    this.informer = new Informer(client, CRDS, {
      upsert: (crd) => this.enqueue(nameOf(crd)),
      deleted: (crd) => { this.written.delete(nameOf(crd)); this.enqueueGroup(groupOf(crd), nameOf(crd)); },
    }, { key: nameOf });
  }

  /** Every CRD of the first list is taken in as an upsert, so each is considered once at start. */
  start(): Promise<void> {
    return this.informer.start();
  }

  stop(): void {
    this.stopped = true;
    this.informer.stop();
  }

  /** The newest state known of a CRD: the informer's, or what this controller wrote if that is newer. */
  private current(name: string): ApiObject | undefined {
    const seen = this.informer.store.get(name);
    const mine = this.written.get(name);
    if (!seen) return undefined;
    if (mine && rv(mine) > rv(seen)) return mine;
    this.written.delete(name);
    return seen;
  }

  private all(): ApiObject[] {
    return [...this.informer.store.keys()].map((n) => this.current(n)!);
  }

  private enqueue(name: string): void {
    this.queue.add(name);
    void this.work();
  }

  /** A CRD's names changed or were freed: every other CRD of its group may now take them. */
  private enqueueGroup(group: string, except: string): void {
    for (const crd of this.all()) if (groupOf(crd) === group && nameOf(crd) !== except) this.enqueue(nameOf(crd));
  }

  /** One worker: the naming decisions of two CRDs never overlap. */
  private async work(): Promise<void> {
    if (this.working) return;
    this.working = true;
    try {
      while (this.queue.size > 0 && !this.stopped) {
        const [name] = this.queue;
        this.queue.delete(name);
        await this.syncOne(name);
      }
    } finally {
      this.working = false;
    }
  }

  private async syncOne(name: string): Promise<void> {
    try {
      await this.sync(name);
      this.failures.delete(name);
    } catch (err) {
      const n = (this.failures.get(name) ?? 0) + 1;
      this.failures.set(name, n);
      console.error(`crd controller: ${name}: ${(err as Error).message}`);
      setTimeout(() => this.enqueue(name), Math.min(RETRY_MIN_MS * 2 ** n, RETRY_MAX_MS)).unref();
    }
  }

  private async sync(name: string): Promise<void> {
    let crd = this.current(name);
    if (!crd) return;
    if (!namesSettled(crd)) {
      const updated = await this.name(crd);
      if (!updated) return;
      crd = updated;
    }
    if (isConditionTrue(crd, 'NamesAccepted') && !isConditionTrue(crd, 'Established')) {
      const updated = await this.establish(crd);
      if (!updated) return;
      crd = updated;
    }
    if (deleting(crd)) this.startCleanup(name);
  }

  /** Takes the names nobody else holds; undefined when the write lost a race (the newer state comes as an event). */
  private async name(crd: ApiObject): Promise<ApiObject | undefined> {
    const outcome = decideNames(crd, this.all());
    if (deepEqual(readNames(outcome.acceptedNames), acceptedNames(crd)) && sameCondition(outcome.namesAccepted, findCondition(crd, 'NamesAccepted'))) return crd;
    const next = structuredClone(crd);
    next.status = { ...(next.status as object), acceptedNames: outcome.acceptedNames };
    setCondition(next, outcome.namesAccepted);
    setCondition(next, outcome.established);
    const written = await this.writeStatus(next);
    if (written) this.enqueueGroup(groupOf(crd), nameOf(crd));
    return written;
  }

  /** Established once the names are in, unless the conversion webhook's CA bundle cannot be read. */
  private async establish(crd: ApiObject): Promise<ApiObject | undefined> {
    const established: Condition = caBundleValid(crd)
      ? { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }
      : { type: 'Established', status: 'False', reason: 'InvalidCABundle', message: 'The conversion webhook CABundle is invalid' };
    if (sameCondition(established, findCondition(crd, 'Established'))) return crd;
    const next = structuredClone(crd);
    setCondition(next, established);
    return this.writeStatus(next);
  }

  /** Writes a CRD's status; undefined when it was deleted or changed meanwhile. */
  private async writeStatus(crd: ApiObject): Promise<ApiObject | undefined> {
    const name = nameOf(crd);
    const res = await this.client.request('PUT', `${CRDS}/${encodeURIComponent(name)}/status`, crd);
    if (res.status === 404 || res.status === 409) return undefined;
    if (res.status !== 200) throw new Error(`status update: ${res.status} ${res.body?.message ?? ''}`);
    this.written.set(name, res.body as ApiObject);
    return res.body as ApiObject;
  }

  /** Runs a deleted CRD's cleanup once at a time; a failed pass is tried again after a while. */
  private startCleanup(name: string): void {
    if (this.cleanups.has(name)) return;
    this.cleanups.add(name);
    const run = async () => {
      for (let delay = RETRY_MIN_MS * 10; !this.stopped; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
        const crd = this.current(name);
        if (!crd || !deleting(crd)) return;
        try {
          if (await this.cleanup.finalize(crd)) return;
        } catch (err) {
          console.error(`crd controller: cleanup of ${name}: ${(err as Error).message}`);
        }
        await sleep(delay);
      }
    };
    void run().finally(() => this.cleanups.delete(name));
  }
}
