// Garbage collection of the two deletion policies that finalizers hold: an object
// deleted with `orphan` is released once its dependents no longer name it as
// owner; one deleted with `foregroundDeletion` once its dependents are gone.
// Dependents are the objects whose ownerReferences carry the owner's uid.
import type { ApiObject } from '../internal/apimachinery/meta.js';
import type { Registry } from '../internal/registry/index.js';
import { ignoreStorageRace, type KeyValue, type StorageClient, type StorageEvent } from '../internal/storage/client.js';
import { collectionPrefix } from '../internal/storage/keys.js';
import { nowTimestamp } from '../internal/apimachinery/meta.js';
import { ORPHAN_FINALIZER, FOREGROUND_FINALIZER } from './handlers.js';
import type { WatchHub } from './hub.js';
import { decodeStored, encodeStored } from './objects.js';

const RETRY_MS = 1000;
const DELETION_MARK = Buffer.from('"deletionTimestamp"');
const POLICY_FINALIZERS = [ORPHAN_FINALIZER, FOREGROUND_FINALIZER];

const held = (obj: ApiObject): string | undefined =>
  obj.metadata?.deletionTimestamp ? obj.metadata.finalizers?.find((f) => POLICY_FINALIZERS.includes(f)) : undefined;


type Owned = { kv: KeyValue; obj: ApiObject };

export class GarbageCollector {
  private readonly running = new Set<string>();

  constructor(private readonly storage: StorageClient, private readonly registry: Registry) {}

  /** Finishes what waits already, then follows every change on the hub. */
  async start(hub: WatchHub): Promise<void> {
    const follow = () => hub.register('', {
      onEvent: (ev: StorageEvent) => { if (ev.type === 'PUT') this.consider(ev.kv!); },
      onFail: () => setTimeout(() => { follow(); void this.sweep(); }, RETRY_MS).unref(),
    });
    follow();
    await this.sweep();
  }

  private async sweep(): Promise<void> {
    for (const prefix of this.prefixes()) {
      const page = await this.storage.list(prefix).catch(() => undefined);
      for (const kv of page?.items ?? []) this.consider(kv);
    }
  }

  private prefixes(): string[] {
    return [...new Set(this.registry.all().map((k) => collectionPrefix(k.group, k.resource)))];
  }

  private consider(kv: KeyValue): void {
    // Every change passes here: only one being deleted is decoded.
    if (!kv.value.includes(DELETION_MARK)) return;
    const obj = decodeStored(kv);
    const finalizer = held(obj);
    if (!finalizer || this.running.has(kv.key)) return;
    this.running.add(kv.key);
    this.collect(kv.key, obj, finalizer)
      .catch((err) => console.error(`garbage collector: ${kv.key}: ${(err as Error).message}`))
      .finally(() => this.running.delete(kv.key));
  }

  private async collect(key: string, owner: ApiObject, finalizer: string): Promise<void> {
    const uid = owner.metadata!.uid!;
    for (;;) {
      const dependents = await this.dependents(uid);
      if (finalizer === ORPHAN_FINALIZER) {
        for (const d of dependents) await this.release(d, uid);
        break;
      }
      if (dependents.length === 0) break;
      for (const d of dependents) await this.remove(d);
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    await this.dropFinalizer(key, finalizer);
  }

  private async dependents(uid: string): Promise<Owned[]> {
    const found: Owned[] = [];
    for (const prefix of this.prefixes()) {
      const page = await this.storage.list(prefix, { allowCached: true });
      for (const kv of page.items) {
        const obj = decodeStored(kv);
        if ((obj.metadata?.ownerReferences as Array<{ uid?: string }> | undefined)?.some((r) => r.uid === uid)) found.push({ kv, obj });
      }
    }
    return found;
  }

  /** Orphaning: the dependent stays, without its reference to the owner. */
  private async release({ kv, obj }: Owned, uid: string): Promise<void> {
    const refs = (obj.metadata!.ownerReferences as Array<{ uid?: string }>).filter((r) => r.uid !== uid);
    obj.metadata = { ...obj.metadata, ownerReferences: refs };
    if (refs.length === 0) delete obj.metadata.ownerReferences;
    await this.storage.update(kv.key, encodeStored(obj), { modRevision: kv.modRevision }).catch(ignoreStorageRace);
  }

  /** Foreground: the dependent is deleted (marked, when finalizers of its own hold it). */
  private async remove({ kv, obj }: Owned): Promise<void> {
    if ((obj.metadata?.finalizers?.length ?? 0) === 0) {
      await this.storage.delete(kv.key, { modRevision: kv.modRevision }).catch(ignoreStorageRace);
    } else if (!obj.metadata!.deletionTimestamp) {
      obj.metadata = { ...obj.metadata, deletionTimestamp: nowTimestamp(), deletionGracePeriodSeconds: 0 };
      await this.storage.update(kv.key, encodeStored(obj), { modRevision: kv.modRevision }).catch(ignoreStorageRace);
    }
  }

  /** Removes the policy's finalizer; the owner goes once no finalizer is left. */
  private async dropFinalizer(key: string, finalizer: string): Promise<void> {
    const { kv } = await this.storage.get(key);
    const obj = decodeStored(kv!);
    const finalizers = (obj.metadata!.finalizers ?? []).filter((f) => f !== finalizer);
    const specFinalizers = (obj.spec as { finalizers?: string[] } | undefined)?.finalizers ?? [];
    if (finalizers.length === 0 && specFinalizers.length === 0) {
      await this.storage.delete(key, { modRevision: kv!.modRevision }).catch(ignoreStorageRace);
      return;
    }
    obj.metadata = { ...obj.metadata, finalizers };
    await this.storage.update(key, encodeStored(obj), { modRevision: kv!.modRevision }).catch(ignoreStorageRace);
  }
}
