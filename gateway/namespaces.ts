// The namespaces that exist from the start, and the finalizer that empties a
// terminating namespace and then removes it.
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
    for (let delay = RETRY_MIN_MS; (await this.deleteContents(name)) > 0; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
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

  /** One pass over the namespace's objects; answers how many are still held by finalizers. */
  private async deleteContents(namespace: string): Promise<number> {
    let held = 0;
    for (const def of this.registry.all().filter((k) => k.namespaced)) {
      const page = await this.storage.list(collectionPrefix(def.group, def.resource, namespace));
      for (const kv of page.items) {
        const obj = decodeStored(kv);
        if ((obj.metadata?.finalizers?.length ?? 0) === 0) {
          await this.storage.delete(kv.key, { modRevision: kv.modRevision }).catch(ignoreStorageRace);
          continue;
        }
        held++;
        if (obj.metadata!.deletionTimestamp) continue;
        obj.metadata!.deletionTimestamp = nowTimestamp();
        obj.metadata!.deletionGracePeriodSeconds = 0;
        await this.storage.update(kv.key, encodeStored(obj), { modRevision: kv.modRevision }).catch(ignoreStorageRace);
      }
    }
    return held;
  }
}

