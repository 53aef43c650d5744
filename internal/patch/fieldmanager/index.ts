// Field ownership: server-side apply merges an applied configuration and
// records what each applier owns; every other write records an `Update`
// entry for the fields it changed. Both keep `metadata.managedFields`.
import { isDeepStrictEqual } from 'node:util';
import type { ApiObject } from '../../apimachinery/meta.js';
import { dropEmptyCollections, nowTimestamp } from '../../apimachinery/meta.js';
import { badRequest, internalError, invalid, type StatusCause } from '../../apimachinery/status.js';
import { invalidValue, tooLong } from '../../apimachinery/validation.js';
import { GROUP_META, LAST_APPLIED_ANNOTATION } from '../../names/index.js';
import { isPlainObject, type TypeNode } from '../schema.js';
import { ApplyConflictError, type Conflict } from './conflicts.js';
import { canonicalJson } from './fieldpath.js';
import { decodeManaged, encodeManaged, isResetRequest, managerId, tryDecodeManaged, type Managed, type ManagerEntry } from './managed.js';
import { FieldSet } from './set.js';
import { additions, compare, merge, reconcileWithSchema, removeDisowned, toFieldSet, type Comparison } from './typed.js';

export { FieldSet } from './set.js';

export interface FieldManagerOptions {
  /** The kind's type; untyped for kinds without a built-in schema. */
  type: TypeNode;
  /** `group/version` of the request. */
  apiVersion: string;
  kind: string;
  manager: string;
  /** The sub-resource written, if any; its entries are separate. */
  subresource?: string;
  /** Fields this write cannot take ownership of (status through the main resource, ...). */
  ignored?: FieldSet;
}

export interface ApplyOptions extends FieldManagerOptions {
  force: boolean;
}

/** Managers whose entries merge into one per apiVersion when updaters exceed this count. */
const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES = 'ancient-changes';
const BEFORE_FIRST_APPLY = 'before-first-apply';
/** The manager name kubectl applies with; its client-side apply annotation is honoured. */
const KUBECTL = 'kubectl';
/** kubectl writes the annotation under the upstream domain; the product's spelling counts too. */
const LAST_APPLIED_KEYS = [LAST_APPLIED_ANNOTATION.own, LAST_APPLIED_ANNOTATION.upstream];

/** Fields no manager owns: type information and server-set metadata. */
const STRIPPED = FieldSet.of(
  [{ field: 'apiVersion' }], [{ field: 'kind' }], [{ field: 'metadata' }],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion']
    .map((f) => [{ field: 'metadata' }, { field: f }]),
);

/** Printable as Go's unicode.IsPrint: graphic characters and the ASCII space. */
const printable = (ch: string) => ch === ' ' || !/[\p{C}\p{Z}]/u.test(ch);

/** The manager a write is recorded under: `fieldManager`, else the User-Agent up to its first `/`. */
export function managerName(fieldManager: string | null | undefined, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  let out = '';
  for (const ch of (userAgent ?? '').split('/')[0]) {
    if (!printable(ch)) continue;
    if (Buffer.byteLength(out + ch) > 128) break;
    out += ch;
  }
  return out;
}

/** `fieldManager` must be at most 128 printable characters; 422 on the request's options otherwise. */
export function validateManagerName(name: string, optionsKind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'): void {
  const causes: StatusCause[] = [];
  if (name.length > 128) causes.push(tooLong('fieldManager', 128));
  else if (![...name].every(printable)) causes.push(invalidValue('fieldManager', name, 'must only contain printable characters'));
  if (causes.length) throw invalid(optionsKind, { group: GROUP_META, resource: '' }, '', causes);
}

const withoutManagedFields = (obj: ApiObject): ApiObject => {
  const copy = structuredClone(obj);
  if (copy.metadata) delete copy.metadata.managedFields;
  return copy;
};

/** The object without its managedFields, sharing every other member: for comparisons, which write nothing. */
const managedFieldsHidden = (obj: ApiObject): ApiObject => {
  if (!obj.metadata || obj.metadata.managedFields === undefined) return obj;
  const { managedFields: _managed, ...metadata } = obj.metadata;
  return { ...obj, metadata };
};

const excluding = (c: Comparison, ignored?: FieldSet): Comparison => (ignored ? {
  added: c.added.recursiveDifference(ignored), removed: c.removed.recursiveDifference(ignored), modified: c.modified.recursiveDifference(ignored),
} : c);

/** What a write changes: from `live` to `next`, or every field of `next` when it is new (`live` undefined). */
function changes(live: unknown, next: unknown, opts: FieldManagerOptions): Comparison {
  const cmp = live === undefined ? { added: additions(next, opts.type), removed: new FieldSet(), modified: new FieldSet() } : compare(live, next, opts.type);
  return excluding(cmp, opts.ignored);
}

/**
 * What a write from `workflow` making the changes `cmp` does to the other managers: fields it changes
 * that they own conflict (with force they move to `workflow`), fields it removes leave their sets.
 */
function takeOver(cmp: Comparison, managed: Managed, workflow: string, force: boolean): void {
  if (managed.size === 0 || (managed.size === 1 && managed.has(workflow))) return;
  const changed = cmp.modified.union(cmp.added);
  const conflicts: Conflict[] = [];
  const lost = new Map<string, FieldSet>();
  for (const id of [...managed.keys()].sort()) {
    if (id === workflow) continue;
    const entry = managed.get(id)!;
    const clash = entry.set.intersection(changed);
    if (!clash.empty()) {
      conflicts.push(...clash.paths().map((path) => ({ manager: entry, path })));
      lost.set(id, clash);
    }
  }
  if (conflicts.length && !force) throw new ApplyConflictError(conflicts);
  for (const [id, entry] of managed) {
    if (id === workflow) continue;
    entry.set = entry.set.difference(lost.get(id) ?? new FieldSet()).difference(cmp.removed);
    if (entry.set.empty()) managed.delete(id);
  }
}

function decodeOrFail(entries: unknown): Managed {
  try {
    return decodeManaged(entries);
  } catch (err) {
    throw internalError(`failed to decode managed fields: ${(err as Error).message}`);
  }
}

function reconcileAll(managed: Managed, type: TypeNode): void {
  for (const e of managed.values()) e.set = reconcileWithSchema(e.set, type);
}

function stripMeta(managed: Managed, id: string): void {
  const e = managed.get(id);
  if (!e) return;
  e.set = e.set.difference(STRIPPED);
  if (e.set.empty()) managed.delete(id);
}

/**
 * Records the fields a non-apply write changed under an `Update` entry of its
 * manager, on `next` (which it returns). `live` is undefined for a create.
 * A write whose managedFields is `[{}]` drops every entry first; managedFields
 * a write sets otherwise (and validly) replace the recorded ones.
 */
export function recordUpdate(live: ApiObject | undefined, next: ApiObject, opts: FieldManagerOptions): ApiObject {
  const requested = next.metadata?.managedFields;
  const reset = !opts.subresource && isResetRequest(requested);
  const fromRequest = opts.subresource || reset ? undefined : tryDecodeManaged(requested);
  const managed: Managed = reset ? new Map() : (fromRequest?.size ? fromRequest : tryDecodeManaged(live?.metadata?.managedFields) ?? new Map());
  // Objects written before any ownership was recorded stay untracked until their first apply.
  if (managed.size > 0 || !live || reset) updateManaged(managed, live && managedFieldsHidden(live), managedFieldsHidden(next), opts);
  return setManaged(next, managed, live);
}

/** Records an `Update` by `opts.manager` from `live` (undefined: a new object) to `next`. */
function updateManaged(managed: Managed, live: unknown, next: unknown, opts: FieldManagerOptions): void {
  reconcileAll(managed, opts.type);
  const workflow = '\u0000current-operation';
  const cmp = changes(live, next, opts);
  takeOver(cmp, managed, workflow, true);
  // The ignored fields are out of cmp already.
  const set = (live === undefined ? cmp.added : cmp.modified.union(cmp.added).difference(cmp.removed)).difference(STRIPPED);
  if (set.empty()) return;
  const id = managerId({ manager: opts.manager, operation: 'Update', apiVersion: opts.apiVersion, subresource: opts.subresource });
  const previous = managed.get(id);
  managed.set(id, {
    manager: opts.manager, operation: 'Update', apiVersion: opts.apiVersion, subresource: opts.subresource,
    time: nowTimestamp(), set: previous ? previous.set.union(set) : set,
  });
  capUpdaters(managed);
}

/** Merges the oldest update entries into one `ancient-changes` entry per apiVersion until at most ten updaters remain. */
function capUpdaters(managed: Managed): void {
  const updaters = [...managed.entries()].filter(([, e]) => e.operation === 'Update');
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  const secs = (e: ManagerEntry) => (e.time ? Math.floor(Date.parse(e.time) / 1000) : 0);
  updaters.sort(([ia, a], [ib, b]) => secs(a) - secs(b) || (ia < ib ? -1 : ia > ib ? 1 : 0));
  const firstOfVersion = new Map<string, string>();
  let count = updaters.length;
  for (const [id, e] of updaters) {
    if (count <= MAX_UPDATE_MANAGERS) break;
    const bucketId = managerId({ manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: e.apiVersion });
    const first = firstOfVersion.get(e.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(e.apiVersion, id);
      continue;
    }
    if (!managed.has(bucketId)) {
      const firstEntry = managed.get(first)!;
      managed.delete(first);
      managed.set(bucketId, { ...firstEntry, manager: ANCIENT_CHANGES, subresource: undefined });
    }
    const bucket = managed.get(bucketId)!;
    managed.set(bucketId, { ...bucket, set: bucket.set.union(e.set), time: e.time });
    managed.delete(id);
    count--;
  }
}

/** Writes the entries into `obj` in place, keeping the live array itself when nothing changed. */
function setManaged(obj: ApiObject, managed: Managed, live?: ApiObject): ApiObject {
  const encoded = encodeManaged(managed);
  obj.metadata ??= {};
  const previous = live?.metadata?.managedFields;
  if (encoded === undefined) delete obj.metadata.managedFields;
  else obj.metadata.managedFields = isDeepStrictEqual(previous, encoded) ? previous : encoded;
  return obj;
}

function checkApplied(config: ApiObject, opts: ApplyOptions): void {
  if (config.metadata?.managedFields !== undefined) throw badRequest('metadata.managedFields must be nil');
  if (config.apiVersion !== opts.apiVersion || config.kind !== opts.kind) {
    const av = String(config.apiVersion ?? '');
    const gv = av.includes('/') ? av : `/${av}`;
    throw badRequest(`invalid object type: ${gv}, Kind=${config.kind ?? ''}`);
  }
}

/**
 * Server-side apply of `config` to `live` (an empty object when creating):
 * the merged object with its managedFields, or a 409 listing the fields other
 * managers own with different values unless `force`.
 */
export function apply(live: ApiObject, config: ApiObject, opts: ApplyOptions): ApiObject {
  checkApplied(config, opts);
  try {
    return applyOnce(live, config, opts, opts.force);
  } catch (err) {
    if (!(err instanceof ApplyConflictError) || opts.manager !== KUBECTL) throw err;
    const allowed = allowedByLastApplied(live, opts);
    const remaining = err.conflicts.filter((c) => !allowed?.has(c.path));
    if (remaining.length > 0) throw remaining.length === err.conflicts.length ? err : new ApplyConflictError(remaining);
    return applyOnce(live, config, opts, true);
  }
}

function applyOnce(live: ApiObject, config: ApiObject, opts: ApplyOptions, force: boolean): ApiObject {
  const managed = decodeOrFail(live.metadata?.managedFields);
  const liveObj = withoutManagedFields(live);
  if (managed.size === 0) updateManaged(managed, undefined, liveObj, { ...opts, manager: BEFORE_FIRST_APPLY });
  reconcileAll(managed, opts.type);
  const id = managerId({ manager: opts.manager, operation: 'Apply', apiVersion: opts.apiVersion, subresource: opts.subresource });
  const last = managed.get(id);
  let set = toFieldSet(config, opts.type);
  if (opts.ignored) set = set.recursiveDifference(opts.ignored);
  managed.set(id, { manager: opts.manager, operation: 'Apply', apiVersion: opts.apiVersion, subresource: opts.subresource, time: last?.time, set });
  let merged = merge(liveObj, config, opts.type) as ApiObject;
  if (last && !last.set.empty()) {
    const everyone = [...managed.values()].reduce((acc, e) => acc.union(e.set), new FieldSet());
    merged = removeDisowned(merged, opts.type, last.set, everyone) as ApiObject;
  }
  takeOver(changes(liveObj, merged, opts), managed, id, force);
  stripMeta(managed, id);
  // Empty metadata maps and lists are not stored, so one the config names (kubectl's `labels: {}`) is no change.
  if (merged.metadata) {
    merged = { ...merged, metadata: { ...merged.metadata } };
    dropEmptyCollections(merged.metadata!);
  }
  const unchanged = isDeepStrictEqual(liveObj, merged);
  const entry = managed.get(id);
  if (entry && !unchanged) entry.time = nowTimestamp();
  const result = unchanged ? structuredClone(live) : merged;
  if (opts.manager === KUBECTL) syncLastApplied(result, config);
  return setManaged(result, managed, live);
}

function lastAppliedOf(obj: ApiObject): [string, string] | undefined {
  const annotations = obj.metadata?.annotations ?? {};
  const key = LAST_APPLIED_KEYS.find((k) => annotations[k]);
  return key ? [key, annotations[key]] : undefined;
}

/**
 * kubectl moving from client-side to server-side apply may take over the
 * fields its last-applied annotation set, as long as they still hold those values.
 */
function allowedByLastApplied(live: ApiObject, opts: ApplyOptions): FieldSet | undefined {
  const found = lastAppliedOf(live);
  if (!found) return undefined;
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(found[1]);
  } catch {
    return undefined;
  }
  if (!isPlainObject(lastApplied) || lastApplied.apiVersion !== opts.apiVersion) return undefined;
  const cmp = compare(lastApplied, withoutManagedFields(live), opts.type);
  return toFieldSet(lastApplied, opts.type).difference(cmp.modified).difference(cmp.added).difference(cmp.removed);
}

/** After kubectl applies server-side, its client-side annotation follows the applied configuration. */
function syncLastApplied(result: ApiObject, config: ApiObject): void {
  const found = lastAppliedOf(result);
  if (!found) return;
  const applied = structuredClone(config);
  const annotations = applied.metadata?.annotations;
  if (annotations) for (const k of LAST_APPLIED_KEYS) delete annotations[k];
  result.metadata!.annotations![found[0]] = canonicalJson(applied);
}
