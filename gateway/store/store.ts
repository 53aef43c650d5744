// The store of one kind, which the write verbs call: it runs the kind's strategy
// (server fields, defaults, validation, the update rules of the registry), the
// checks a write must pass (escalation, admission), claims shared values (a
// Service's IPs and ports), and writes through the typed storage client.
import { isDeepStrictEqual } from 'node:util';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import { generateName } from '../../internal/apimachinery/meta.js';
import { StatusError, alreadyExists, notFound } from '../../internal/apimachinery/status.js';
import { recordUpdate } from '../../internal/patch/index.js';
import type { KindDef } from '../../internal/registry/index.js';
import type { UserInfo__Output as UserInfo } from '../../internal/rpc/gen/svc/authn/v1/UserInfo.js';
import type { KeyValue } from '../../internal/storage/client.js';
import type { Objects } from '../objects.js';
import type { Allocator, Release } from '../serviceallocator.js';
import { admit, type AdmissionCall } from './admission.js';
import { managerOptions } from './fields.js';
import {
  checkDeletePreconditions, deleteFinalizer, heldByFinalizers, isFinalized, markedForDeletion, prepareCreate, prepareUpdate,
  validateObject, writeRules, type DeleteOptions, type WriteRules,
} from './strategy.js';

/** Attempts of a write that lost a race to a concurrent one before answering 409. */
const MAX_WRITE_ATTEMPTS = 5;
/** Attempts at a free name for `generateName` before answering AlreadyExists. */
const MAX_GENERATE_ATTEMPTS = 8;

export interface StoreDeps {
  admission: AdmissionCall;
  /** A check the writer must pass besides admission (escalation prevention on roles and bindings). */
  guard?: (obj: ApiObject, old?: ApiObject) => Promise<void>;
  /** The shared pools a spec write of this kind draws from; none for most kinds. */
  allocator?: Allocator;
}

export interface WriteOptions {
  user: UserInfo;
  dryRun: boolean;
  /** The sub-resource written through ('' or absent: the object itself). */
  subresource?: string;
  /** Names the manager the fields the write changes are recorded under; absent when the write records its
   * own (apply). Asked once the body is read, so the options are checked after the body is. */
  manager?: () => string;
  /** Hears (once) the fields of the written object the kind's schema does not know, which are dropped. */
  unknownFields?: (paths: string[]) => void;
  /** Hears the warnings of admission (the client's `Warning` headers). */
  warn?: (text: string) => void;
}

export interface UpdateOptions extends WriteOptions {
  /** The client named a resourceVersion: a lost race is its 409, never retried. */
  conditional: boolean;
}

/** Computes the object an update wants from the stored one. */
export type Change = (current: ApiObject) => ApiObject | Promise<ApiObject>;

/** The object an apply creates when none is stored, once the caller's own checks of a create passed. */
export type Creation = () => ApiObject | Promise<ApiObject>;

const nothingToRelease: Release = async () => undefined;

export class Store {
  constructor(readonly objects: Objects, private readonly deps: StoreDeps) {}

  get def(): KindDef {
    return this.objects.def;
  }

  /** Creates a decoded object: server fields, defaults, validation, admission, then the write (not with dryRun). */
  async create(obj: ApiObject, opts: WriteOptions): Promise<ApiObject> {
    const findings = prepareCreate(this.def, obj, opts.user);
    opts.unknownFields?.(findings.unknownFields);
    this.recordFields(opts, undefined, obj);
    const release = await this.allocate(obj, undefined, opts.dryRun);
    try {
      validateObject(this.def, obj, undefined, 'spec', findings.clean);
      await this.deps.guard?.(obj);
      // A new object has no resourceVersion: unless its kind converts, its stored form is its JSON, which admission reads too.
      const encoded = this.def.toStorage || this.def.convert ? undefined : this.objects.encode(obj);
      const admitted = (await admit(this.deps.admission, { def: this.def, operation: 'CREATE', user: opts.user, obj, json: encoded, dryRun: opts.dryRun, warn: opts.warn }))!;
      if (admitted !== obj) { // mutated by admission: its server-set fields follow, validated again
        this.def.afterAdmission?.(admitted);
        validateObject(this.def, admitted);
      }
      if (!opts.dryRun) return await this.createWithName(admitted, admitted === obj ? encoded : undefined);
      await this.refuseTakenName(admitted);
      return admitted;
    } catch (err) {
      await release();
      throw err;
    }
  }

  /**
   * The read-modify-write of an update: reads the stored object, lets `change`
   * compute the new one, runs the strategy, validates and admits it, and writes
   * it only if storage still holds what was read. A lost race is retried unless
   * the write is conditional (then it is the client's 409).
   */
  async update(namespace: string, name: string, change: Change, opts: UpdateOptions): Promise<ApiObject> {
    return (await this.readModifyWrite(namespace, name, change, opts)).obj;
  }

  /** An update that creates the object when none is stored (server-side apply): one read, then the write. */
  upsert(namespace: string, name: string, change: Change, create: Creation, opts: UpdateOptions): Promise<{ obj: ApiObject; created: boolean }> {
    return this.readModifyWrite(namespace, name, change, opts, create);
  }

  private async readModifyWrite(namespace: string, name: string, change: Change, opts: UpdateOptions,
    create?: Creation): Promise<{ obj: ApiObject; created: boolean }> {
    const rules = writeRules(opts.subresource ?? '');
    for (let attempt = 1; ; attempt++) {
      const stored = await this.objects.find(namespace, name);
      if (!stored) {
        if (!create) throw notFound(this.objects.gr, name);
        const created = await this.create(await create(), opts).catch((err) => {
          // Created meanwhile by another writer: this one becomes an update of it.
          if (err instanceof StatusError && err.reason === 'AlreadyExists' && attempt < MAX_WRITE_ATTEMPTS) return undefined;
          throw err;
        });
        if (created) return { obj: created, created: true };
        continue;
      }
      const { obj: current, kv } = stored;
      const next = await change(current);
      const findings = prepareUpdate(this.def, next, current, rules);
      if (attempt === 1) opts.unknownFields?.(findings.unknownFields);
      this.recordFields(opts, current, next);
      const release = rules === 'spec' ? await this.allocate(next, current, opts.dryRun) : nothingToRelease;
      try {
        const written = await this.validateAdmitWrite(next, current, kv, rules, findings.clean, opts);
        if (written === current) await release();
        return { obj: written, created: false };
      } catch (err) {
        await release();
        const lostRace = err instanceof StatusError && err.reason === 'Conflict';
        if (!lostRace || opts.conditional || attempt >= MAX_WRITE_ATTEMPTS) throw err;
      }
    }
  }

  /** Deletes one object: marks it when finalizers hold it, else removes it. */
  async delete(namespace: string, name: string, options: DeleteOptions, opts: WriteOptions): Promise<{ obj: ApiObject; removed: boolean }> {
    const dryRun = opts.dryRun || (options.dryRun ?? []).includes('All');
    for (let attempt = 1; ; attempt++) {
      const { obj, kv } = await this.objects.get(namespace, name);
      checkDeletePreconditions(this.objects.gr, obj, options);
      await admit(this.deps.admission, {
        def: this.def, operation: 'DELETE', user: opts.user, old: obj, dryRun,
        options: { kind: 'DeleteOptions', apiVersion: 'v1', ...options }, subresource: opts.subresource, warn: opts.warn,
      });
      const policyFinalizer = deleteFinalizer(this.def, obj, options);
      try {
        if (!heldByFinalizers(obj, policyFinalizer)) return { obj: dryRun ? obj : await this.objects.delete(namespace, name, kv.modRevision), removed: true };
        const marked = markedForDeletion(this.def, obj, options, policyFinalizer);
        if (!marked || dryRun) return { obj: marked ?? obj, removed: false };
        return { obj: await this.objects.update(marked, kv.modRevision), removed: false };
      } catch (err) {
        if (!(err instanceof StatusError && err.reason === 'Conflict') || attempt >= MAX_WRITE_ATTEMPTS) throw err;
      }
    }
  }

  /** Records the fields a create (`live` undefined) or update changes under its manager, in
   * `obj.metadata.managedFields`. `obj` is as it will be stored (unknown fields dropped, defaults
   * applied), so a write omitting a defaulted field does not take it from its owner. */
  private recordFields(opts: WriteOptions, live: ApiObject | undefined, obj: ApiObject): void {
    if (opts.manager === undefined) return;
    recordUpdate(live, obj, managerOptions(this.def, this.objects.apiVersion, opts.manager(), opts.subresource ?? ''));
  }

  /** Claims the values of shared pools a spec write needs (a Service's cluster IP and node ports). */
  private allocate(obj: ApiObject, old: ApiObject | undefined, dryRun: boolean): Promise<Release> {
    return this.deps.allocator ? this.deps.allocator.allocate(obj, old, dryRun) : Promise.resolve(nothingToRelease);
  }

  /** A dry-run create fails where the real one would: on a name that is taken. */
  private async refuseTakenName(obj: ApiObject): Promise<void> {
    const meta = obj.metadata!;
    const taken = await this.objects.find(meta.namespace ?? '', meta.name!);
    if (taken && !meta.generateName) throw alreadyExists(this.objects.gr, meta.name!);
  }

  /** Creates the object (`encoded`: its stored form, if at hand); a generated name that is taken is drawn again. */
  private async createWithName(obj: ApiObject, encoded?: Buffer): Promise<ApiObject> {
    const meta = obj.metadata!;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.objects.create(obj, encoded);
      } catch (err) {
        const retry = err instanceof StatusError && err.reason === 'AlreadyExists' && meta.generateName && attempt < MAX_GENERATE_ATTEMPTS;
        if (!retry) throw err;
        meta.name = generateName(meta.generateName!);
        encoded = undefined;
      }
    }
  }

  /** The end of an update: validation, admission and the write, unless nothing changed (then `current`). */
  private async validateAdmitWrite(next: ApiObject, current: ApiObject, kv: KeyValue, rules: WriteRules, schemaChecked: boolean,
    opts: UpdateOptions): Promise<ApiObject> {
    validateObject(this.def, next, current, rules, schemaChecked);
    if (rules === 'spec') await this.deps.guard?.(next, current);
    const admitted = (await admit(this.deps.admission, {
      def: this.def, operation: 'UPDATE', user: opts.user, obj: next, old: current, dryRun: opts.dryRun, subresource: opts.subresource, warn: opts.warn,
    }))!;
    if (admitted !== next) validateObject(this.def, admitted, current, rules);
    const encoded = await this.objects.storedForm(admitted);
    if (sameStoredObject(encoded, kv.value)) return current;
    if (opts.dryRun) return admitted;
    const written = await this.objects.update(admitted, kv.modRevision, encoded);
    if (isFinalized(written)) await this.objects.removeIfAt(written);
    return written;
  }
}

/** Whether two stored encodings are one object: the same bytes, or the same JSON with its keys in another order
 * (a merge may reorder them; equal lengths first, so a real change is rarely parsed). */
function sameStoredObject(a: Buffer, b: Uint8Array): boolean {
  if (a.equals(b)) return true;
  if (a.length !== b.length) return false;
  try {
    return isDeepStrictEqual(JSON.parse(a.toString('utf8')), JSON.parse(Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8')));
  } catch {
    return false;
  }
}
