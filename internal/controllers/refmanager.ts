// Which objects a controller owns, as the platform's ControllerRefManager decides:
// an object whose controller reference names the controller stays its own while
// its selector matches and is released (the reference removed) when it no longer
// does; an orphan (no controller reference) that matches is adopted (a controller
// reference patched on), unless the controller or the object is being deleted, and
// only after a fresh read shows the controller is still the same object. Objects
// another controller owns are never touched.
import type { ApiObject } from '../apimachinery/meta.js';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The patch answer's status (0: the server was not reached) and message. */
export interface PatchResult {
  status: number;
  message?: string;
}

export interface RefManagerOptions<T extends ApiObject> {
  /** The controller claiming objects. */
  owner: ApiObject;
  /** The owner's apiVersion and kind, as its controller references name it. */
  ownerType: { apiVersion: string; kind: string };
  /** Whether an object belongs to the owner: its selector, and any other condition. */
  matches(obj: T): boolean;
  /** Reads the owner afresh and rejects when it is gone, another object by now, or being deleted; asked once, before the first adoption. */
  canAdopt(): Promise<void>;
  /** Sends a strategic merge patch of one object. */
  patch(obj: T, patch: unknown): Promise<PatchResult>;
  /** Finalizers added on adoption and removed on release (the Job controller's tracking finalizer). */
  finalizers?: string[];
}

export interface Claim<T> {
  /** The objects the owner controls now, adopted ones included. */
  claimed: T[];
  adopted: T[];
  released: T[];
  /** What failed; the caller retries later (a released or adopted object's event also brings it back). */
  errors: string[];
}

/** The controller reference of an object, if it has one. */
export const controllerRefOf = (obj: ApiObject): OwnerReference | undefined =>
  (obj.metadata?.ownerReferences as OwnerReference[] | undefined)?.find((r) => r.controller === true);

/** The controller reference an owner puts on what it controls. */
export const controllerRefTo = (owner: ApiObject, type: { apiVersion: string; kind: string }): OwnerReference => ({
  apiVersion: type.apiVersion, kind: type.kind, name: owner.metadata!.name!, uid: owner.metadata!.uid!, controller: true, blockOwnerDeletion: true,
});

const describe = (obj: ApiObject) => `${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name} (${obj.metadata?.uid})`;

export class ControllerRefManager<T extends ApiObject> {
  private adoptable?: Promise<void>;

  constructor(private readonly opts: RefManagerOptions<T>) {}

  private get owner(): ApiObject {
    return this.opts.owner;
  }

  private get ownerDeleting(): boolean {
    return Boolean(this.owner.metadata?.deletionTimestamp);
  }

  /** Decides each object: kept, released, adopted or left alone. */
  async claim(objects: T[]): Promise<Claim<T>> {
    const out: Claim<T> = { claimed: [], adopted: [], released: [], errors: [] };
    await Promise.all(objects.map(async (obj) => {
      try {
        const outcome = await this.claimOne(obj);
        if (outcome === 'owned' || outcome === 'adopted') out.claimed.push(obj);
        if (outcome === 'adopted') out.adopted.push(obj);
        if (outcome === 'released') out.released.push(obj);
      } catch (err) {
        out.errors.push((err as Error).message);
      }
    }));
    // Answered in the order given, whatever order the patches finished in.
    const order = new Map(objects.map((o, i) => [o, i]));
    for (const list of [out.claimed, out.adopted, out.released]) list.sort((a, b) => order.get(a)! - order.get(b)!);
    return out;
  }

  private async claimOne(obj: T): Promise<'owned' | 'adopted' | 'released' | 'ignored'> {
    const ref = controllerRefOf(obj);
    if (ref) {
      if (ref.uid !== this.owner.metadata?.uid) return 'ignored';
      if (this.opts.matches(obj)) return 'owned';
      if (this.ownerDeleting) return 'ignored';
      return (await this.release(obj)) ? 'released' : 'ignored';
    }
    if (this.ownerDeleting || !this.opts.matches(obj) || obj.metadata?.deletionTimestamp) return 'ignored';
    const namespace = this.owner.metadata?.namespace;
    if (namespace && namespace !== obj.metadata?.namespace) return 'ignored';
    return (await this.adopt(obj)) ? 'adopted' : 'ignored';
  }

  /** Adopts an orphan; false when it is gone. The `uid` in the patch makes it fail on another object of the same name. */
  private async adopt(obj: T): Promise<boolean> {
    this.adoptable ??= this.opts.canAdopt();
    try {
      await this.adoptable;
    } catch (err) {
      throw new Error(`can't adopt ${describe(obj)}: ${(err as Error).message}`);
    }
    const finalizers = this.opts.finalizers ?? [];
    const patch = {
      metadata: {
        uid: obj.metadata?.uid, ownerReferences: [controllerRefTo(this.owner, this.opts.ownerType)], ...(finalizers.length ? { finalizers } : {}),
      },
    };
    const res = await this.opts.patch(obj, patch);
    if (res.status === 404) return false;
    if (res.status !== 200) throw new Error(`adopting ${describe(obj)}: ${res.status} ${res.message ?? ''}`);
    return true;
  }

  /** Releases an object; an object gone (404) or no longer the one seen (422) needs no release. */
  private async release(obj: T): Promise<boolean> {
    const finalizers = this.opts.finalizers ?? [];
    const patch = {
      metadata: {
        uid: obj.metadata?.uid, ownerReferences: [{ $patch: 'delete', uid: this.owner.metadata?.uid }],
        ...(finalizers.length ? { '$deleteFromPrimitiveList/finalizers': finalizers } : {}),
      },
    };
    const res = await this.opts.patch(obj, patch);
    if (res.status === 200) return true;
    if (res.status === 404 || res.status === 422) return false;
    throw new Error(`releasing ${describe(obj)}: ${res.status} ${res.message ?? ''}`);
  }
}
