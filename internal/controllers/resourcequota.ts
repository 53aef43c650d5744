// The ResourceQuota controller: each quota's status.hard follows spec.hard, and
// status.used is recomputed from a fresh list of the objects it tracks in its
// namespace, when the quota is created or changed, when a tracked object changes
// or goes (a deletion releases usage), and on a full resync. The kinds quotas
// track are followed (metadata only) from the first quota that names them;
// informers list again after a lost watch or a 410. Usage admission charged a
// moment ago may belong to an object not stored yet: a lower usage is written
// only once the quota has gone a settle period without a charge.
import type { ApiObject } from '../apimachinery/meta.js';
import { type ApiClient, collectionPath, type Resource } from '../client/index.js';
import { Informer } from '../client/informer.js';
import {
  add, equalLists, evaluatorsForNames, listToJSON, mask, parseList, quotaOf, ZERO,
  type Evaluator, type Obj, type ResourceList,
} from '../quota/index.js';

const QUOTAS = '/api/v1/resourcequotas';
/** Upstream's --resource-quota-sync-period default. */
const RESYNC_MS = 5 * 60_000;
/** Upstream's --concurrent-resource-quota-syncs default. */
const WORKERS = 5;
const SETTLE_MS = 2_000;
const RETRY_MS = 1_000;
/** Kinds whose usage depends on more than their existence: their objects are listed whole. */
const READ_WHOLE = new Set(['/pods', '/services', '/persistentvolumeclaims']);

export interface ResourceQuotaOptions {
  resyncMs?: number;
  settleMs?: number;
  workers?: number;
}

const keyOf = (o: ApiObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const grKey = (e: Pick<Evaluator, 'group' | 'resource'>) => `${e.group}/${e.resource}`;
const hardNames = (q: ApiObject): string[] => Object.keys(parseList((q.spec as Obj | undefined)?.hard));
const sameJSON = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
/** Only what tells that a tracked object changed and where. */
const slim = (o: ApiObject): ApiObject => ({ metadata: { name: o.metadata?.name, namespace: o.metadata?.namespace, resourceVersion: o.metadata?.resourceVersion } });

export class ResourceQuotaController {
  private readonly quotas: Informer;
  /** Informers of the tracked kinds, by `group/resource` (undefined while the kind is being looked up). */
  private readonly tracked = new Map<string, Informer | undefined>();
  private readonly queue = new Set<string>();
  private readonly busy = new Set<string>();
  /** When each quota's usage last changed by another writer (admission). */
  private readonly charged = new Map<string, number>();
  /** resourceVersions this controller wrote. */
  private readonly own = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private resync?: NodeJS.Timeout;
  private stopped = false;
  private readonly opts: Required<ResourceQuotaOptions>;

  constructor(private readonly client: ApiClient, private readonly resources: () => Promise<Resource[]>, opts: ResourceQuotaOptions = {}) {
    this.opts = { resyncMs: RESYNC_MS, settleMs: SETTLE_MS, workers: WORKERS, ...opts };
    this.quotas = new Informer(client, QUOTAS, {
      upsert: (q, old) => this.quotaChanged(q, old),
      deleted: (q) => this.charged.delete(keyOf(q)),
    });
  }

  async start(): Promise<void> {
    await this.quotas.start();
    this.resync = setInterval(() => { for (const k of this.quotas.store.keys()) this.enqueue(k); }, this.opts.resyncMs);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.resync);
    for (const t of this.timers) clearTimeout(t);
    this.quotas.stop();
    for (const i of this.tracked.values()) i?.stop();
  }

  private quotaChanged(q: ApiObject, old?: ApiObject): void {
    const key = keyOf(q);
    const rv = q.metadata?.resourceVersion ?? '';
    if (this.own.delete(rv)) return;
    if (old && !sameJSON((old.status as Obj | undefined)?.used, (q.status as Obj | undefined)?.used)) this.charged.set(key, Date.now());
    this.follow(q);
    this.enqueue(key);
  }

  /** Starts following the kinds the quota tracks that no informer follows yet. */
  private follow(q: ApiObject): void {
    for (const e of evaluatorsForNames(hardNames(q))) {
      const k = grKey(e);
      if (this.tracked.has(k) || this.stopped) continue;
      this.tracked.set(k, undefined);
      void this.resourceOf(e).then((r) => {
        if (!r || this.stopped) { this.tracked.delete(k); return; }
        const onChange = (o: ApiObject) => this.objectChanged(o.metadata?.namespace ?? '', k);
        const informer = new Informer(this.client, collectionPath(r), { upsert: onChange, deleted: onChange }, { as: 'metadata', transform: slim });
        this.tracked.set(k, informer);
        return informer.start();
      });
    }
  }

  private objectChanged(namespace: string, gr: string): void {
    for (const [key, q] of this.quotas.store) {
      if (q.metadata?.namespace === namespace && evaluatorsForNames(hardNames(q)).some((e) => grKey(e) === gr)) this.enqueue(key);
    }
  }

  private async resourceOf(e: Evaluator): Promise<Resource | undefined> {
    return (await this.resources()).find((r) => r.group === e.group && r.resource === e.resource && r.namespaced && r.verbs.includes('list'));
  }

  private enqueue(key: string): void {
    if (this.stopped) return;
    this.queue.add(key);
    this.pump();
  }

  private later(key: string, ms: number): void {
    const t = setTimeout(() => { this.timers.delete(t); this.enqueue(key); }, ms);
    this.timers.add(t);
  }

  private pump(): void {
    for (const key of this.queue) {
      if (this.busy.size >= this.opts.workers) return;
      if (this.busy.has(key)) continue;
      this.queue.delete(key);
      this.busy.add(key);
      this.sync(key)
        .catch((err) => { console.error(`resourcequota controller: ${key}: ${(err as Error).message}`); this.later(key, RETRY_MS); })
        .finally(() => { this.busy.delete(key); this.pump(); });
    }
  }

  /** Recomputes one quota's status and writes it when it changed. */
  private async sync(key: string): Promise<void> {
    const q = this.quotas.store.get(key);
    if (!q) return;
    const spec = (q.spec ?? {}) as Obj;
    const status = (q.status ?? {}) as Obj;
    const names = hardNames(q);
    const before = parseList(status.used);
    const computed = await this.usage(q, names);
    let used = mask({ ...before, ...computed }, names);
    used = this.holdReleases(key, before, used);
    if (sameJSON(spec.hard, status.hard) && status.used && equalLists(used, before)) return;
    const body = { ...q, status: { ...status, hard: spec.hard ?? {}, used: listToJSON(used) } };
    const { namespace, name } = q.metadata!;
    const res = await this.client.request('PUT', `/api/v1/namespaces/${namespace}/resourcequotas/${name}/status`, body);
    if (res.status === 200) {
      this.own.add(res.body?.metadata?.resourceVersion ?? '');
      return;
    }
    // A conflict: the newer quota's event queues it again. Gone: nothing to do.
    if (res.status !== 409 && res.status !== 404) throw new Error(`update status: ${res.status} ${res.body?.message ?? ''}`);
    if (res.status === 409) this.later(key, RETRY_MS);
  }

  /** A lower usage waits until the quota has gone the settle period without a charge. */
  private holdReleases(key: string, before: ResourceList, used: ResourceList): ResourceList {
    const since = Date.now() - (this.charged.get(key) ?? 0);
    if (since >= this.opts.settleMs) return used;
    const held = { ...used };
    let holding = false;
    for (const [n, q] of Object.entries(used)) {
      if (before[n] && q.nanos < before[n].nanos) { held[n] = before[n]; holding = true; }
    }
    if (holding) this.later(key, this.opts.settleMs - since);
    return held;
  }

  /** The usage of the quota's tracked names, from a fresh list of each tracked kind in its namespace. */
  private async usage(q: ApiObject, names: string[]): Promise<ResourceList> {
    const quota = { ...quotaOf(q), hard: parseList((q.spec as Obj | undefined)?.hard) };
    const now = Date.now();
    let out: ResourceList = {};
    for (const e of evaluatorsForNames(names)) {
      const r = await this.resourceOf(e);
      if (!r) continue;
      const matched = e.matchingResources(names);
      let usage: ResourceList = Object.fromEntries(matched.map((n) => [n, ZERO]));
      const { items } = await this.client.list(collectionPath(r, quota.namespace), READ_WHOLE.has(grKey(e)) ? 'object' : 'metadata');
      for (const obj of items) {
        if (quota.selectors.every((s) => e.matchesScope(s, obj as Obj))) usage = add(usage, mask(e.usage(obj as Obj, now), matched));
      }
      out = { ...out, ...usage };
    }
    return out;
  }
}
