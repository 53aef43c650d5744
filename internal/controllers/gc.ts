// Garbage collection through the API. Every listable resource is followed by an
// informer of its objects' metadata (PartialObjectMetadata), of which only
// identity, owners and finalizers are kept; dependents are the objects whose ownerReferences carry an owner's
// uid, found through an index (owner uid → dependent uids). The three deletion
// policies:
// - background (the default): once an owner is gone, a dependent none of whose
//   owners exists any more is deleted (its own dependents follow the same way),
//   and one that keeps other owners loses its reference to the missing one;
// - orphan (finalizer `orphan`): the owner's dependents lose their reference to
//   it, then the owner's finalizer is dropped and it goes;
// - foreground (finalizer `foregroundDeletion`): the owner's dependents are
//   deleted, and once they are gone, so is the owner.
// Nothing is decided before every informer has listed once: an owner not yet
// seen is not an owner that is gone.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiObject } from '../apimachinery/meta.js';
import { splitApiVersion } from '../apimachinery/meta.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, ownGroup } from '../names/index.js';
import { type ApiClient, collectionPath, type Resource } from '../client/index.js';
import { Informer } from '../client/informer.js';

const POLICY_FINALIZERS = [ORPHAN_FINALIZER, FOREGROUND_FINALIZER];
const RETRY_MS = 1000;
/** Attempts at one conditional write that other writers race with. */
const MAX_ATTEMPTS = 5;
const MERGE_PATCH = 'application/merge-patch+json';

interface OwnerReference { apiVersion?: string; kind?: string; name?: string; uid?: string }
interface Known { resource: Resource; obj: ApiObject }

const ownerRefs = (obj: ApiObject): OwnerReference[] => (obj.metadata?.ownerReferences as OwnerReference[] | undefined) ?? [];
const uidOf = (obj: ApiObject) => obj.metadata?.uid ?? '';
const held = (obj: ApiObject): string | undefined =>
  obj.metadata?.deletionTimestamp ? obj.metadata.finalizers?.find((f) => POLICY_FINALIZERS.includes(f)) : undefined;
/** One string per namespace name, where each object decoded would bring its own copy. */
const namespaces = new Map<string, string>();
const intern = (namespace: string | undefined): string | undefined => {
  if (namespace === undefined) return undefined;
  const known = namespaces.get(namespace);
  if (known !== undefined) return known;
  namespaces.set(namespace, namespace);
  return namespace;
};
/** What the collector reads of an object: who it is, its owners, and what holds its deletion (not its managedFields,
 * labels or annotations, which are most of a metadata view's bytes); fields an object lacks take no slot. The fields
 * every object of a kind has are in one literal: a field added later would cost an out-of-object property store. */
function identity(obj: ApiObject): ApiObject {
  const { uid, name, namespace, resourceVersion, ownerReferences, finalizers, deletionTimestamp } = obj.metadata ?? {};
  const metadata: NonNullable<ApiObject['metadata']> = namespace === undefined
    ? { uid, name, resourceVersion }
    : { uid, name, namespace: intern(namespace), resourceVersion };
  if (ownerReferences?.length) metadata.ownerReferences = ownerReferences;
  if (finalizers?.length) metadata.finalizers = finalizers;
  if (deletionTimestamp) metadata.deletionTimestamp = deletionTimestamp;
  return { metadata };
}
const itemPath = ({ resource, obj }: Known) => `${collectionPath(resource, obj.metadata?.namespace)}/${obj.metadata?.name}`;

/** Owner uid → the uids of its dependents, and back. */
class OwnerIndex {
  private readonly dependentsOf = new Map<string, Set<string>>();
  private readonly ownersOf = new Map<string, string[]>();

  set(uid: string, owners: string[]): void {
    this.delete(uid);
    if (owners.length === 0) return;
    this.ownersOf.set(uid, owners);
    for (const owner of owners) {
      let set = this.dependentsOf.get(owner);
      if (!set) this.dependentsOf.set(owner, (set = new Set()));
      set.add(uid);
    }
  }

  delete(uid: string): void {
    for (const owner of this.ownersOf.get(uid) ?? []) {
      const set = this.dependentsOf.get(owner);
      set?.delete(uid);
      if (set?.size === 0) this.dependentsOf.delete(owner);
    }
    this.ownersOf.delete(uid);
  }

  dependents(uid: string): string[] {
    return [...(this.dependentsOf.get(uid) ?? [])];
  }

  dependentsAll(): string[] {
    return [...this.ownersOf.keys()];
  }
}

/** How often the collector looks for resources served since it started: the platform's 30 s. */
const REDISCOVERY_MS = 30_000;

export class GarbageCollector {
  /** An informer per resource, its store keyed by uid: the objects the collector knows to exist. */
  private readonly followed: Array<{ resource: Resource; informer: Informer }> = [];
  private readonly index = new OwnerIndex();
  /** Resources followed here by kind: a reference to another kind cannot be checked, and counts as a live owner. */
  private readonly kinds = new Map<string, Resource>();
  private readonly running = new Set<string>();
  /** Woken by the next change any informer sees. */
  private readonly changeWaiters = new Set<() => void>();
  private synced = false;
  private stopped = false;

  constructor(private readonly client: ApiClient) {}

  /** Follows every resource that can be listed and watched; acts once all have listed. `current`, when given, answers
   * what is served now: resources served later (custom kinds) are followed once it shows them. */
  async start(resources: Resource[], current?: () => Promise<Resource[]>): Promise<void> {
    const added = this.followNew(resources);
    await Promise.all(added.map((f) => f.informer.start()));
    this.synced = true;
    for (const { informer } of this.followed) for (const obj of [...informer.store.values()]) this.considerPolicy(obj);
    for (const uid of this.index.dependentsAll()) this.run(`dangling ${uid}`, () => this.afterOwnerGone(uid));
    if (current) void this.rediscover(current);
  }

  /** Asks what is served every while, one question at a time, until stopped. */
  private async rediscover(current: () => Promise<Resource[]>): Promise<void> {
    while (!this.stopped) {
      await sleep(REDISCOVERY_MS);
      const resources = await current();
      if (!this.stopped) this.follow(resources);
    }
  }

  /** Follows what is served now (kinds CustomResourceDefinitions define come and go): new resources once listed,
   * and no longer those gone. */
  private follow(resources: Resource[]): void {
    const served = new Set(resources.map((r) => collectionPath(r)));
    for (const f of this.followed.filter((x) => !served.has(collectionPath(x.resource)))) {
      f.informer.stop();
      this.followed.splice(this.followed.indexOf(f), 1);
      if (this.kinds.get(`${f.resource.group}/${f.resource.kind}`) === f.resource) this.kinds.delete(`${f.resource.group}/${f.resource.kind}`);
    }
    for (const f of this.followNew(resources)) {
      void f.informer.start().then(() => {
        for (const obj of [...f.informer.store.values()]) this.considerPolicy(obj);
        // Owners of this kind counted as existing while it was not followed: each is checked now.
        for (const uid of this.index.dependentsAll()) this.run(`dangling ${uid}`, () => this.afterOwnerGone(uid));
      });
    }
  }

  /** Informers (not started) for the listable and watchable resources not followed yet. */
  private followNew(resources: Resource[]): Array<{ resource: Resource; informer: Informer }> {
    const followed = new Set(this.followed.map((f) => collectionPath(f.resource)));
    const added = resources.filter((x) => x.verbs.includes('list') && x.verbs.includes('watch') && !followed.has(collectionPath(x))).map((r) => {
      this.kinds.set(`${r.group}/${r.kind}`, r);
      const informer = new Informer(this.client, collectionPath(r), {
        upsert: (obj) => this.upsert(obj),
        deleted: (obj) => this.deleted(obj),
      }, { as: 'metadata', transform: identity, key: uidOf });
      return { resource: r, informer };
    });
    this.followed.push(...added);
    return added;
  }

  stop(): void {
    this.stopped = true;
    for (const f of this.followed) f.informer.stop();
  }

  /** The object with a uid, as its informer holds it. */
  private live(uid: string): Known | undefined {
    for (const { resource, informer } of this.followed) {
      const obj = informer.store.get(uid);
      if (obj) return { resource, obj };
    }
    return undefined;
  }

  private upsert(obj: ApiObject): void {
    const uid = uidOf(obj);
    this.index.set(uid, ownerRefs(obj).map((r) => r.uid).filter((u): u is string => Boolean(u)));
    this.changed();
    if (!this.synced) return;
    this.considerPolicy(obj);
    // An owner this collector never saw may have gone while its watch was down: checked with the API.
    if (ownerRefs(obj).some((r) => !this.live(r.uid ?? ''))) this.run(`dependent ${uid}`, () => this.afterOwnerGone(uid));
  }

  private deleted(obj: ApiObject): void {
    const uid = uidOf(obj);
    this.index.delete(uid);
    this.changed();
    if (!this.synced) return;
    for (const dependent of this.index.dependents(uid)) this.run(`dependent ${dependent}`, () => this.afterOwnerGone(dependent));
  }

  private changed(): void {
    // Each wake deletes only itself, which a Set's iteration allows.
    for (const wake of this.changeWaiters) wake();
  }

  /** Resolves at the next change an informer sees, or after RETRY_MS at the latest (to try a failed write again). */
  private nextChange(): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => { clearTimeout(timer); this.changeWaiters.delete(wake); resolve(); };
      const timer = setTimeout(wake, RETRY_MS);
      this.changeWaiters.add(wake);
    });
  }

  private run(what: string, task: () => Promise<void>): void {
    if (this.running.has(what)) return;
    this.running.add(what);
    task().catch((err) => console.error(`garbage collector: ${what}: ${(err as Error).message}`)).finally(() => this.running.delete(what));
  }

  private considerPolicy(obj: ApiObject): void {
    const finalizer = held(obj);
    if (finalizer) this.run(`owner ${uidOf(obj)}`, () => this.collect(uidOf(obj), finalizer));
  }

  /**
   * Whether a reference names an owner that exists: one seen by an informer, or
   * (as informers may lag) one the API still answers for with that uid. An owner
   * of a kind not followed here cannot be checked and counts as existing.
   */
  private async ownerExists(ref: OwnerReference, namespace: string): Promise<boolean> {
    if (this.live(ref.uid ?? '')) return true;
    const { group } = splitApiVersion(ref.apiVersion ?? '');
    const resource = this.kinds.get(`${ownGroup(group)}/${ref.kind}`);
    if (!resource || !ref.name) return true;
    const res = await this.client.get(`${collectionPath(resource, resource.namespaced ? namespace : undefined)}/${ref.name}`, 'metadata');
    if (res.status === 404) return false;
    return res.status !== 200 || res.body?.metadata?.uid === ref.uid;
  }

  /** Background: deletes a dependent whose owners are all gone, or drops the references to the gone ones. */
  private async afterOwnerGone(uid: string): Promise<void> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const dependent = this.live(uid);
      if (!dependent) return;
      const refs = ownerRefs(dependent.obj);
      const exists = await Promise.all(refs.map((r) => this.ownerExists(r, dependent.obj.metadata?.namespace ?? '')));
      const kept = refs.filter((_, i) => exists[i]);
      if (kept.length === refs.length) return;
      const status = kept.length === 0 ? await this.remove(dependent) : await this.keepOwners(dependent, kept);
      if (status !== 409) return;
      await sleep(RETRY_MS / 4);
    }
  }

  private async collect(uid: string, finalizer: string): Promise<void> {
    for (;;) {
      const dependents = this.index.dependents(uid).map((d) => this.live(d)).filter((d): d is Known => d !== undefined);
      // Done once the informers show no dependent naming the owner any more.
      if (dependents.length === 0) break;
      // Woken by what these writes change (or others do): dependents held by finalizers of their own may take long to go.
      const changed = this.nextChange();
      for (const d of dependents) {
        if (finalizer === ORPHAN_FINALIZER) await this.keepOwners(d, ownerRefs(d.obj).filter((r) => r.uid !== uid));
        else await this.remove(d);
      }
      await changed;
    }
    await this.dropFinalizer(uid, finalizer);
  }

  /** The dependent with only the `kept` references (a conditional write); the answer's status. */
  private async keepOwners(d: Known, kept: OwnerReference[]): Promise<number> {
    const patch = { metadata: { ownerReferences: kept.length ? kept : null, resourceVersion: d.obj.metadata?.resourceVersion } };
    return (await this.client.request('PATCH', itemPath(d), patch, MERGE_PATCH)).status;
  }

  /** Deletes an object (marked only, when finalizers of its own hold it); the answer's status. */
  private async remove(d: Known): Promise<number> {
    if (d.obj.metadata?.deletionTimestamp) return 200;
    const res = await this.client.request('DELETE', itemPath(d), { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
    return res.status;
  }

  /** Drops the policy's finalizer from the owner, which then goes when no finalizer is left. */
  private async dropFinalizer(uid: string, finalizer: string): Promise<void> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const owner = this.live(uid);
      if (!owner) return;
      const finalizers = (owner.obj.metadata?.finalizers ?? []).filter((f) => f !== finalizer);
      const patch = { metadata: { finalizers: finalizers.length ? finalizers : null, resourceVersion: owner.obj.metadata?.resourceVersion } };
      const res = await this.client.request('PATCH', itemPath(owner), patch, MERGE_PATCH);
      if (res.status !== 409) return;
      await sleep(RETRY_MS / 4);
    }
  }
}
