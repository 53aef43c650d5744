// The write strategy every kind shares, around the kind's own rules from the
// registry: server-set fields of a create, what an update may not change, which
// rules a write answers to, metadata validation and preconditions.
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import { dropEmptyCollections, generateName, isObject, newUid, nowTimestamp } from '../../internal/apimachinery/meta.js';
import { conflict, invalid, staleConflict, type GroupResource, type StatusCause } from '../../internal/apimachinery/status.js';
import * as v from '../../internal/apimachinery/validation.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../../internal/names/index.js';
import { nameCauses, type KindDef, type Requester, type SchemaReport } from '../../internal/registry/index.js';
import { fieldPath } from '../fieldvalidation.js';
import { groupResource } from '../objects.js';

/** Which of the kind's rules a write answers to: its spec rules, its status rules, or none
 * (server-defined changes such as a binding or a finalize). */
export type WriteRules = 'spec' | 'status' | 'metadata';

/** Sub-resources that change one part of an object (a namespace's finalizers, a pod's node or
 * container resources, a request's approval) bypass the kind's spec rules, which forbid exactly
 * those changes; the sub-resource keeps everything else as stored. */
const PARTIAL_SUBRESOURCES = new Set(['finalize', 'binding', 'approval', 'resize', 'ephemeralcontainers']);

export function writeRules(subresource: string): WriteRules {
  if (subresource === 'status') return 'status';
  return PARTIAL_SUBRESOURCES.has(subresource) ? 'metadata' : 'spec';
}

/** What the walk of the schema in prepare found. */
export interface SchemaFindings {
  /** Fields the schema does not know (dropped), as `spec.foo`. */
  unknownFields: string[];
  /** The walk found no cause: validation need not walk the schema again. */
  clean: boolean;
}

const findingsOf = (report: SchemaReport | undefined): SchemaFindings =>
  ({ unknownFields: report?.unknownFields.map(fieldPath) ?? [], clean: (report?.causes.length ?? 0) === 0 });

/** Metadata rules every kind shares, then the kind's own rules; 422 Invalid on any cause. `schemaChecked`: the
 * object is as prepare's clean walk left it (but for the server's own changes), so its schema is not walked again. */
export function validateObject(def: KindDef, obj: ApiObject, old?: ApiObject, rules: WriteRules = 'spec', schemaChecked = false): void {
  const meta = obj.metadata ?? {};
  const causes: StatusCause[] = [];
  if (!meta.name) causes.push(v.required(meta.generateName !== undefined ? 'metadata.generateName' : 'metadata.name'));
  else causes.push(...nameCauses(def, meta.name));
  if (def.namespaced && !meta.namespace) causes.push(v.required('metadata.namespace'));
  if (!def.namespaced && meta.namespace) causes.push(v.forbiddenField('metadata.namespace', 'not allowed on this type'));
  causes.push(...v.labels('metadata.labels', meta.labels), ...v.annotations('metadata.annotations', meta.annotations));
  if (old) causes.push(...v.metadataUpdate(meta, old.metadata ?? {}));
  if (rules === 'status' && old) causes.push(...(def.validateStatusUpdate?.(obj, old, schemaChecked) ?? []));
  if (rules === 'spec') causes.push(...(def.validate?.(obj, old, schemaChecked) ?? []));
  if (causes.length) throw invalid(def.kind, groupResource(def), meta.name ?? meta.generateName ?? '', causes);
}

/** The server's fields of a new object (identity, a drawn name), then the kind's defaults and fields. */
export function prepareCreate(def: KindDef, obj: ApiObject, requester: Requester): SchemaFindings {
  const meta = obj.metadata!;
  Object.assign(meta, { uid: newUid(), creationTimestamp: nowTimestamp() });
  for (const f of ['resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) delete meta[f];
  if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
  dropEmptyCollections(meta);
  return findingsOf(def.prepareForCreate?.(obj, requester));
}

/** What the stored object keeps whatever an update sends, then the kind's update strategy for its rules. */
export function prepareUpdate(def: KindDef, next: ApiObject, current: ApiObject, rules: WriteRules): SchemaFindings {
  carryServerFields(next, current);
  if (rules === 'status') return findingsOf(def.prepareForStatusUpdate?.(next, current));
  if (rules === 'spec') return findingsOf(def.prepareForUpdate?.(next, current));
  return { unknownFields: [], clean: false };
}

/** Fields a client cannot change through an update: what it sends for creationTimestamp is ignored (the
 * same instant is often spelled differently), a missing uid is the stored one. */
function carryServerFields(next: ApiObject, current: ApiObject): void {
  const meta = next.metadata!;
  const old = current.metadata!;
  if (!meta.uid) meta.uid = old.uid;
  if (old.creationTimestamp) meta.creationTimestamp = old.creationTimestamp;
  meta.deletionTimestamp = old.deletionTimestamp;
  meta.deletionGracePeriodSeconds = old.deletionGracePeriodSeconds;
  if (old.generation !== undefined) meta.generation = old.generation;
  for (const f of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'generation', 'resourceVersion'] as const) {
    if (meta[f] === undefined) delete meta[f];
  }
  dropEmptyCollections(meta);
}

/** What a replacing write asserts about the stored object: a uid it carries must be the stored one (a
 * precondition, 409, as for delete) and a resourceVersion it names must be current. */
export function checkUpdatePreconditions(gr: GroupResource, sent: ApiObject, current: ApiObject): void {
  checkDeletePreconditions(gr, current, { preconditions: { uid: sent.metadata?.uid } });
  const stored = current.metadata!;
  const requested = sent.metadata?.resourceVersion;
  if (requested && requested !== stored.resourceVersion) throw staleConflict(gr, stored.name!);
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  orphanDependents?: boolean;
  dryRun?: string[];
}

export function checkDeletePreconditions(gr: GroupResource, obj: ApiObject, opts: DeleteOptions): void {
  const p = opts.preconditions ?? {};
  const meta = obj.metadata!;
  if (p.uid && p.uid !== meta.uid) {
    throw conflict(gr, meta.name!, `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${meta.uid}`);
  }
  if (p.resourceVersion && p.resourceVersion !== meta.resourceVersion) {
    throw conflict(gr, meta.name!, `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion}`);
  }
}

/** The finalizer a delete adds: the kind's own on a first delete, else the one the propagation policy asks for. */
export const deleteFinalizer = (def: KindDef, obj: ApiObject, opts: DeleteOptions): string | undefined =>
  (obj.metadata!.deletionTimestamp ? undefined : def.deletionFinalizer) ?? propagationFinalizer(opts);

/** The finalizer a propagation policy asks the garbage collector to honour before removal. */
function propagationFinalizer(opts: DeleteOptions): string | undefined {
  if (opts.propagationPolicy === 'Orphan' || (opts.propagationPolicy === undefined && opts.orphanDependents === true)) return ORPHAN_FINALIZER;
  return opts.propagationPolicy === 'Foreground' ? FOREGROUND_FINALIZER : undefined;
}

const hasSpecFinalizers = (obj: ApiObject) => isObject(obj.spec) && Array.isArray(obj.spec.finalizers) && obj.spec.finalizers.length > 0;

/** Whether finalizers keep the object once deleted (those it holds, and the one the policy adds). */
export const heldByFinalizers = (obj: ApiObject, policyFinalizer?: string): boolean =>
  (obj.metadata!.finalizers?.length ?? 0) > 0 || hasSpecFinalizers(obj) || policyFinalizer !== undefined;

/** An object being deleted whose last finalizer is gone is removed. */
export const isFinalized = (obj: ApiObject): boolean =>
  Boolean(obj.metadata!.deletionTimestamp) && !heldByFinalizers(obj);

/** The object marked for deletion (deletionTimestamp once, the policy's finalizer); undefined when it is already as asked. */
export function markedForDeletion(def: KindDef, obj: ApiObject, opts: DeleteOptions, policyFinalizer?: string): ApiObject | undefined {
  const finalizers = obj.metadata!.finalizers ?? [];
  const addFinalizer = policyFinalizer !== undefined && !finalizers.includes(policyFinalizer);
  if (obj.metadata!.deletionTimestamp && !addFinalizer) return undefined;
  const next = structuredClone(obj);
  if (addFinalizer) next.metadata!.finalizers = [...finalizers, policyFinalizer!];
  next.metadata!.deletionTimestamp ??= nowTimestamp();
  next.metadata!.deletionGracePeriodSeconds ??= opts.gracePeriodSeconds ?? 0;
  def.prepareForDelete?.(next);
  return next;
}
