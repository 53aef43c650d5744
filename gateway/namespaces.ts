// The namespaces that exist from the start, and the finalizer that empties a
// terminating namespace and then removes it.
import { isDeepStrictEqual } from 'node:util';
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { newUid, nowTimestamp } from '../internal/apimachinery/meta.js';
import { INITIAL_NAMESPACES, NAMESPACE_FINALIZER } from '../internal/names/index.js';
import type { Registry } from '../internal/registry/index.js';
import { ignoreStorageCodes, ignoreStorageRace, type StorageClient, type StorageEvent } from '../internal/storage/client.js';
import { collectionPrefix, objectKey } from '../internal/storage/keys.js';
import { grpc } from '../internal/rpc/index.js';
import type { WatchHub } from './hub.js';
import { decodeStored, encodeStored } from './objects.js';

const NAMESPACES_PREFIX = collectionPrefix('', 'namespaces');
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 5000;
const nsKey = (name: string) => objectKey('', 'namespaces', '', name);

/** Creates `default`, `svc-system`, `svc-public` and `svc-node-lease` when absent. */
export async function ensureInitialNamespaces(storage: StorageClient, registry: Registry): Promise<void> {
  const def = registry.lookup('', 'v1', 'namespaces')!;
  for (const name of INITIAL_NAMESPACES) {
    const ns: ApiObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name, uid: newUid(), creationTimestamp: nowTimestamp() } };
    def.prepareForCreate?.(ns);
    await storage.create(nsKey(name), encodeStored(ns), ns.metadata!.uid!).catch(ignoreStorageCodes(grpc.status.ALREADY_EXISTS));
  }
}

const isTerminating = (ns: ApiObject) =>
  Boolean(ns.metadata?.deletionTimestamp) && ((ns.spec as { finalizers?: string[] })?.finalizers ?? []).includes(NAMESPACE_FINALIZER);

export class NamespaceFinalizer {
  private readonly running = new Set<string>();

  constructor(private readonly storage: StorageClient, private readonly registry: Registry) {}

  /** Finishes namespaces left terminating, then follows namespace changes on the hub. */
  async start(hub: WatchHub): Promise<void> {
    const follow = () => hub.register(NAMESPACES_PREFIX, {
      onEvent: (ev: StorageEvent) => { if (ev.type === 'PUT') this.consider(decodeStored(ev.kv!)); },
      onFail: () => setTimeout(() => { follow(); void this.sweep(); }, 1000).unref(),
    });
    follow();
    await this.sweep();
  }

  private async sweep(): Promise<void> {
    const list = await this.storage.list(NAMESPACES_PREFIX).catch(() => undefined);
    for (const kv of list?.items ?? []) this.consider(decodeStored(kv));
  }

  private consider(ns: ApiObject): void {
    const name = ns.metadata!.name!;
    if (!isTerminating(ns) || this.running.has(name)) return;
    this.running.add(name);
    this.finalize(name).catch((err) => console.error(`namespace finalizer: ${name}: ${(err as Error).message}`))
      .finally(() => this.running.delete(name));
  }

  /** Deletes every namespaced object in the namespace (objects held by finalizers are marked and
   * waited for), then drops the namespace's finalizer and removes it. */
  private async finalize(name: string): Promise<void> {
    for (let delay = RETRY_MIN_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      const left = await this.deleteContents(name);
      await this.report(name, left);
      if (left.objects.size === 0) break;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    const { kv } = await this.storage.get(nsKey(name));
    const ns = decodeStored(kv!);
    const spec = ns.spec as { finalizers?: string[] };
    spec.finalizers = (spec.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER);
    if ((ns.metadata!.finalizers?.length ?? 0) > 0 || spec.finalizers.length > 0) {
      await this.storage.update(nsKey(name), encodeStored(ns), { modRevision: kv!.modRevision });
      return;
    }
    await this.storage.delete(nsKey(name), { modRevision: kv!.modRevision }).catch(ignoreStorageCodes(grpc.status.NOT_FOUND));
  }

  /** The namespace's conditions say what its deletion waits for (kept as they are when nothing changed). */
  private async report(name: string, left: Remaining): Promise<void> {
    const res = await this.storage.get(nsKey(name)).catch(() => undefined);
    if (!res?.kv) return;
    const ns = decodeStored(res.kv);
    const status = (ns.status ?? {}) as { conditions?: Condition[] };
    const conditions = deletionConditions(left, status.conditions ?? []);
    if (isDeepStrictEqual(conditions, status.conditions)) return;
    ns.status = { ...status, conditions };
    await this.storage.update(nsKey(name), encodeStored(ns), { modRevision: res.kv.modRevision }).catch(ignoreStorageRace);
  }

  /** One pass over the namespace's objects: deletes or marks each; answers what is left, held by finalizers. */
  private async deleteContents(namespace: string): Promise<Remaining> {
    const left: Remaining = { objects: new Map(), finalizers: new Map() };
    for (const def of this.registry.all().filter((k) => k.namespaced)) {
      const page = await this.storage.list(collectionPrefix(def.group, def.resource, namespace));
      for (const kv of page.items) {
        const obj = decodeStored(kv);
        if ((obj.metadata?.finalizers?.length ?? 0) === 0) {
          await this.storage.delete(kv.key, { modRevision: kv.modRevision }).catch(ignoreStorageRace);
          continue;
        }
        count(left.objects, `${def.resource}.${def.group}`);
        for (const f of obj.metadata!.finalizers!) count(left.finalizers, f);
        if (obj.metadata!.deletionTimestamp) continue;
        obj.metadata!.deletionTimestamp = nowTimestamp();
        obj.metadata!.deletionGracePeriodSeconds = 0;
        await this.storage.update(kv.key, encodeStored(obj), { modRevision: kv.modRevision }).catch(ignoreStorageRace);
      }
    }
    return left;
  }
}

/** What a terminating namespace still holds: objects by resource, and their finalizers. */
interface Remaining {
  objects: Map<string, number>;
  finalizers: Map<string, number>;
}

interface Condition { type: string; status: string; reason: string; message: string; lastTransitionTime?: string }

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

