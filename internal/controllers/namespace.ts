// Namespace deletion: a terminating namespace that still carries the platform's
// finalizer (in either spelling: `svc` or upstream's `kubernetes`) is emptied
// through the API (a deletecollection per namespaced resource; objects held by
// finalizers are marked and waited for, read as metadata only), its conditions
// say what it waits for, and then its finalizer is dropped through `/finalize`,
// which removes it.
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { ApiObject } from '../apimachinery/meta.js';
import { nowTimestamp } from '../apimachinery/meta.js';
import { type ApiClient, collectionPath, type Resource } from '../client/index.js';
import { Informer } from '../client/informer.js';
import { NAMESPACE_FINALIZER, isWellKnown } from '../names/index.js';

const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 5000;
const NAMESPACES = '/api/v1/namespaces';

/** What a terminating namespace still holds: objects by resource, and their finalizers. */
interface Remaining {
  objects: Map<string, number>;
  finalizers: Map<string, number>;
}

interface Condition { type: string; status: string; reason: string; message: string; lastTransitionTime?: string }

const specFinalizers = (ns: ApiObject): string[] => (ns.spec as { finalizers?: string[] } | undefined)?.finalizers ?? [];
const isTerminating = (ns: ApiObject) => Boolean(ns.metadata?.deletionTimestamp) && specFinalizers(ns).some((f) => isWellKnown(f, NAMESPACE_FINALIZER));

export class NamespaceController {
  private readonly running = new Set<string>();
  private readonly informer: Informer;

  constructor(private readonly client: ApiClient, private readonly resources: () => Promise<Resource[]>) {
    this.informer = new Informer(client, NAMESPACES, { upsert: (ns) => this.consider(ns), deleted: () => undefined });
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  stop(): void {
    this.informer.stop();
  }

  private consider(ns: ApiObject): void {
    const name = ns.metadata!.name!;
    if (!isTerminating(ns) || this.running.has(name)) return;
    this.running.add(name);
    this.finalize(name).catch((err) => console.error(`namespace controller: ${name}: ${(err as Error).message}`))
      .finally(() => this.running.delete(name));
  }

  private async finalize(name: string): Promise<void> {
    for (let delay = RETRY_MIN_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      const left = await this.deleteContents(name);
      await this.report(name, left);
      if (left.objects.size === 0) break;
      await sleep(delay);
    }
    await this.dropFinalizer(name);
  }

  /** One pass: a deletecollection per namespaced resource, then what is left, held by finalizers. */
  private async deleteContents(namespace: string): Promise<Remaining> {
    const left: Remaining = { objects: new Map(), finalizers: new Map() };
    for (const r of (await this.resources()).filter((x) => x.namespaced && x.verbs.includes('deletecollection'))) {
      const path = collectionPath(r, namespace);
      const res = await this.client.request('DELETE', path);
      if (res.status >= 500) throw new Error(`delete ${path}: ${res.status}`);
      for (const obj of (await this.client.list(path, 'metadata')).items) {
        count(left.objects, `${r.resource}.${r.group}`);
        for (const f of obj.metadata?.finalizers ?? []) count(left.finalizers, f);
      }
    }
    return left;
  }

  /** The namespace's conditions say what its deletion waits for (written only when they change). */
  private async report(name: string, left: Remaining): Promise<void> {
    const res = await this.client.request('GET', `${NAMESPACES}/${name}`);
    if (res.status !== 200) return;
    const ns = res.body as ApiObject;
    const status = (ns.status ?? {}) as { conditions?: Condition[] };
    const conditions = deletionConditions(left, status.conditions ?? []);
    if (isDeepStrictEqual(conditions, status.conditions)) return;
    ns.status = { ...status, conditions };
    await this.client.request('PUT', `${NAMESPACES}/${name}/status`, ns);
  }

  /** Drops the platform's finalizer (both spellings); the namespace goes once no finalizer is left. */
  private async dropFinalizer(name: string): Promise<void> {
    for (let delay = RETRY_MIN_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      const res = await this.client.request('GET', `${NAMESPACES}/${name}`);
      if (res.status === 404) return;
      const ns = res.body as ApiObject;
      ns.spec = { ...(ns.spec as object), finalizers: specFinalizers(ns).filter((f) => !isWellKnown(f, NAMESPACE_FINALIZER)) };
      const put = await this.client.request('PUT', `${NAMESPACES}/${name}/finalize`, ns);
      if (put.status === 200 || put.status === 404) return;
      await sleep(delay);
    }
  }
}

const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
const tally = (m: Map<string, number>, unit: string) => [...m].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${unit} ${n} resource instances`).join(', ');

/** The platform's deletion conditions; a condition keeps its transition time while its status stays. */
function deletionConditions(left: Remaining, before: Condition[]): Condition[] {
  const fresh: Condition[] = [
    { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
    { type: 'NamespaceDeletionGroupVersionParsingFailure', status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
    { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
    left.objects.size > 0
      ? { type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${tally(left.objects, 'has')}` }
      : { type: 'NamespaceContentRemaining', status: 'False', reason: 'ContentRemoved', message: 'All content successfully removed' },
    left.finalizers.size > 0
      ? { type: 'NamespaceFinalizersRemaining', status: 'True', reason: 'SomeFinalizersRemain', message: `Some content in the namespace has finalizers remaining: ${tally(left.finalizers, 'in')}` }
      : { type: 'NamespaceFinalizersRemaining', status: 'False', reason: 'ContentHasNoFinalizers', message: 'All content-preserving finalizers finished' },
  ];
  return fresh.map((c) => {
    const old = before.find((b) => b.type === c.type);
    const same = old && old.status === c.status && old.reason === c.reason && old.message === c.message;
    return same ? old : { ...c, lastTransitionTime: old?.status === c.status ? old.lastTransitionTime : nowTimestamp() };
  });
}
