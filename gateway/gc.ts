// Garbage collection. Dependents are the objects whose ownerReferences carry an
// owner's uid; an index of them (owner uid → dependent keys), built from a list
// of every collection and kept current by the change stream, answers "what
// depends on X" without a scan. The three deletion policies:
// - background (the default): once an owner is gone, a dependent none of whose
//   owners exists any more is deleted (its own dependents follow the same way),
//   and one that keeps other owners loses its reference to the missing one;
// - orphan (finalizer `orphan`): the owner's dependents lose their reference to
//   it, then the owner goes;
// - foreground (finalizer `foregroundDeletion`): the owner's dependents are
//   deleted, and once they are gone, so is the owner.
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { nowTimestamp, splitApiVersion } from '../internal/apimachinery/meta.js';
import { ownGroup } from '../internal/names/index.js';
import type { Registry } from '../internal/registry/index.js';
import { ignoreStorageRace, type KeyValue, type StorageClient, type StorageEvent } from '../internal/storage/client.js';
import { collectionPrefix, objectKey } from '../internal/storage/keys.js';
import { ORPHAN_FINALIZER, FOREGROUND_FINALIZER } from './handlers.js';
import type { WatchHub } from './hub.js';
import { decodeStored, encodeStored } from './objects.js';

const RETRY_MS = 1000;
/** Attempts at one read-modify-write of a dependent that other writers race with. */
const MAX_ATTEMPTS = 5;
const DELETION_MARK = Buffer.from('"deletionTimestamp"');
const OWNERS_MARK = Buffer.from('"ownerReferences"');
const POLICY_FINALIZERS = [ORPHAN_FINALIZER, FOREGROUND_FINALIZER];

interface OwnerReference { apiVersion?: string; kind?: string; name?: string; uid?: string }

const held = (obj: ApiObject): string | undefined =>
  obj.metadata?.deletionTimestamp ? obj.metadata.finalizers?.find((f) => POLICY_FINALIZERS.includes(f)) : undefined;

const ownerRefs = (obj: ApiObject): OwnerReference[] => (obj.metadata?.ownerReferences as OwnerReference[] | undefined) ?? [];

type Owned = { kv: KeyValue; obj: ApiObject };

/** Owner uid → the keys of its dependents, and back. */
class OwnerIndex {
  private readonly dependentsOf = new Map<string, Set<string>>();
  private readonly ownersOf = new Map<string, string[]>();

  set(key: string, owners: string[]): void {
    this.delete(key);
    if (owners.length === 0) return;
    this.ownersOf.set(key, owners);
    for (const uid of owners) {
      let keys = this.dependentsOf.get(uid);
      if (!keys) this.dependentsOf.set(uid, (keys = new Set()));
      keys.add(key);
    }
  }

  delete(key: string): void {
    for (const uid of this.ownersOf.get(key) ?? []) {
      const keys = this.dependentsOf.get(uid);
      keys?.delete(key);
      if (keys?.size === 0) this.dependentsOf.delete(uid);
    }
    this.ownersOf.delete(key);
  }

  dependents(uid: string): string[] {
    return [...(this.dependentsOf.get(uid) ?? [])];
  }
}

export class GarbageCollector {
  private readonly running = new Set<string>();
  private readonly index = new OwnerIndex();

  constructor(private readonly storage: StorageClient, private readonly registry: Registry) {}

  /** Indexes every dependent and finishes what waits already, then follows every change on the hub. */
  async start(hub: WatchHub): Promise<void> {
    const follow = () => hub.register('', {
      onEvent: (ev: StorageEvent) => this.onEvent(ev),
      onFail: () => setTimeout(() => { follow(); void this.sweep(); }, RETRY_MS).unref(),
    });
    follow();
    await this.sweep();
  }

  private onEvent(ev: StorageEvent): void {
    const kv = ev.kv!;
    if (ev.type === 'PUT') {
      this.indexOwners(kv);
      this.consider(kv);
    } else if (ev.type === 'DELETE') {
      this.index.delete(kv.key);
      this.ownerGone(kv);
    }
  }

  private async sweep(): Promise<void> {
    for (const prefix of this.prefixes()) {
      const page = await this.storage.list(prefix).catch(() => undefined);
      for (const kv of page?.items ?? []) {
        this.indexOwners(kv);
        this.consider(kv);
      }
    }
  }

  private prefixes(): string[] {
    return [...new Set(this.registry.all().map((k) => collectionPrefix(k.group, k.resource)))];
  }

  /** Every change passes here: only one that names owners is decoded. */
  private indexOwners(kv: KeyValue): void {
    if (!kv.value.includes(OWNERS_MARK)) {
      this.index.delete(kv.key);
      return;
    }
    const owners = ownerRefs(decodeStored(kv)).map((r) => r.uid).filter((uid): uid is string => Boolean(uid));
    this.index.set(kv.key, owners);
  }

  private consider(kv: KeyValue): void {
    if (!kv.value.includes(DELETION_MARK)) return;
    const obj = decodeStored(kv);
    const finalizer = held(obj);
    if (!finalizer || this.running.has(kv.key)) return;
    this.running.add(kv.key);
    this.collect(kv.key, obj, finalizer)
      .catch((err) => console.error(`garbage collector: ${kv.key}: ${(err as Error).message}`))
      .finally(() => this.running.delete(kv.key));
  }

  /** Background: the dependents of a removed object are deleted, or keep only their other owners. */
  private ownerGone(kv: KeyValue): void {
    const uid = decodeStored(kv).metadata?.uid;
    if (!uid) return;
    for (const key of this.index.dependents(uid)) {
      this.afterOwnerGone(key).catch((err) => console.error(`garbage collector: ${key}: ${(err as Error).message}`));
    }
  }

  private async afterOwnerGone(key: string): Promise<void> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const dependent = await this.read(key);
      if (!dependent) return;
      const refs = ownerRefs(dependent.obj);
      const present = await Promise.all(refs.map((r) => this.ownerExists(r, dependent.obj.metadata?.namespace ?? '')));
      const kept = refs.filter((_, i) => present[i]);
      if (kept.length === refs.length) return;
      const done = kept.length === 0 ? await this.remove(dependent) : await this.keepOwners(dependent, kept);
      if (done) return;
    }
  }

  /** Whether the object a reference names exists with that uid; an owner of a kind not served here counts as existing. */
  private async ownerExists(ref: OwnerReference, namespace: string): Promise<boolean> {
    if (!ref.apiVersion || !ref.kind || !ref.name) return true;
    const { group, version } = splitApiVersion(ref.apiVersion);
    const def = this.registry.lookupKind(ownGroup(group), version, ref.kind);
    if (!def) return true;
    const owner = await this.read(objectKey(def.group, def.resource, def.namespaced ? namespace : '', ref.name));
    return owner?.obj.metadata?.uid === ref.uid;
  }

  private async read(key: string): Promise<Owned | undefined> {
    const res = await this.storage.get(key).catch((err) => { ignoreStorageRace(err); return undefined; });
    return res?.kv ? { kv: res.kv, obj: decodeStored(res.kv) } : undefined;
  }

  private async collect(key: string, owner: ApiObject, finalizer: string): Promise<void> {
    const uid = owner.metadata!.uid!;
    for (;;) {
      const dependents = await this.dependents(uid);
      if (finalizer === ORPHAN_FINALIZER) {
        for (const d of dependents) await this.keepOwners(d, ownerRefs(d.obj).filter((r) => r.uid !== uid));
        break;
      }
      if (dependents.length === 0) break;
      for (const d of dependents) await this.remove(d);
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    await this.dropFinalizer(key, finalizer);
  }

  private async dependents(uid: string): Promise<Owned[]> {
    const found = await Promise.all(this.index.dependents(uid).map((key) => this.read(key)));
    return found.filter((d): d is Owned => d !== undefined && ownerRefs(d.obj).some((r) => r.uid === uid));
  }

  /** The dependent with only the `kept` references; false when another write came first. */
  private async keepOwners({ kv, obj }: Owned, kept: OwnerReference[]): Promise<boolean> {
    obj.metadata = { ...obj.metadata, ownerReferences: kept };
    if (kept.length === 0) delete obj.metadata.ownerReferences;
    return this.storage.update(kv.key, encodeStored(obj), { modRevision: kv.modRevision }).then(() => true, (err) => { ignoreStorageRace(err); return false; });
  }

  /** Deletes a dependent (marks it, when finalizers of its own hold it); false when another write came first. */
  private async remove({ kv, obj }: Owned): Promise<boolean> {
    const write = (obj.metadata?.finalizers?.length ?? 0) === 0
      ? this.storage.delete(kv.key, { modRevision: kv.modRevision })
      : obj.metadata!.deletionTimestamp ? undefined : this.markDeleting(kv, obj);
    if (!write) return true;
    return write.then(() => true, (err) => { ignoreStorageRace(err); return false; });
  }

  private markDeleting(kv: KeyValue, obj: ApiObject) {
    obj.metadata = { ...obj.metadata, deletionTimestamp: nowTimestamp(), deletionGracePeriodSeconds: 0 };
    return this.storage.update(kv.key, encodeStored(obj), { modRevision: kv.modRevision });
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

