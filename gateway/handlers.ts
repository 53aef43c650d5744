// The write verbs on one kind: create, update, delete, deletecollection.
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { generateName, isObject, newUid, nowTimestamp } from '../internal/apimachinery/meta.js';
import { StatusError, alreadyExists, badRequest, conflict, staleConflict, invalid, success } from '../internal/apimachinery/status.js';
import { recordManagedFields } from './patch.js';
import { answerEphemeral } from './reviews.js';
import { enforceFieldValidation, fieldValidationOf, unknownFields } from './fieldvalidation.js';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER, ownGroup } from '../internal/names/index.js';
import type { Backends } from './backends.js';
import type { ResourceRequest } from './context.js';
import type { KeyValue } from '../internal/storage/client.js';
import type { Release } from './serviceallocator.js';
import { listObjects } from './reads.js';
import { admit, validateObject, type WriteRules } from './admit.js';
import { isDryRun, readDeleteOptions, readObject, type DeleteOptions } from './body.js';
import { writeList, writeObject, writeBody, formatOf, presentedStatus } from './respond.js';
import { confirmNoEscalation } from './escalation.js';


/** Attempts of a write that lost a race to a concurrent one before answering 409. */
const MAX_WRITE_ATTEMPTS = 5;
/** Attempts at a free name for `generateName` before answering AlreadyExists. */
const MAX_GENERATE_ATTEMPTS = 8;

const STRING_FIELDS = ['name', 'generateName', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp'] as const;
const isStringMap = (v: unknown) => isObject(v) && Object.values(v).every((x) => typeof x === 'string');

/** The metadata fields the server reads before validation must have their types, as decoding would insist. */
function checkMetadataTypes(meta: unknown): void {
  const wrong = (field: string, type: string) => badRequest(`metadata.${field}: must be ${type} in the request body`);
  if (!isObject(meta)) throw badRequest('metadata: must be an object in the request body');
  // null stands for absent, as clients send `creationTimestamp: null`.
  for (const f of STRING_FIELDS) if (meta[f] !== undefined && meta[f] !== null && typeof meta[f] !== 'string') throw wrong(f, 'a string');
  for (const f of ['labels', 'annotations']) if (meta[f] !== undefined && meta[f] !== null && !isStringMap(meta[f])) throw wrong(f, 'a map of strings');
  const { finalizers } = meta as { finalizers?: unknown };
  if (finalizers !== undefined && finalizers !== null && !(Array.isArray(finalizers) && finalizers.every((f) => typeof f === 'string'))) throw wrong('finalizers', 'a list of strings');
}

/** A body sent through an upstream group name, in the product's spelling: its apiVersion and the group names it carries. */
export function inOwnSpelling(r: ResourceRequest, obj: ApiObject): void {
  if (!r.info.groupAlias) return;
  if (obj.apiVersion === `${r.info.groupAlias}/${r.def.version}`) obj.apiVersion = r.objects.apiVersion;
  r.def.spellGroups?.(obj, ownGroup);
}

/** Checks apiVersion/kind (defaulting them) and the namespace against the URL. */
export function checkTypeAndScope(r: ResourceRequest, obj: ApiObject): void {
  const expected = r.objects.apiVersion;
  inOwnSpelling(r, obj);
  if (obj.apiVersion !== undefined && obj.apiVersion !== expected) {
    throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${expected})`);
  }
  if (obj.kind !== undefined && obj.kind !== r.def.kind) {
    throw badRequest(`the kind in the data (${obj.kind}) does not match the expected kind (${r.def.kind})`);
  }
  obj.apiVersion = expected;
  obj.kind = r.def.kind;
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
  checkMetadataTypes(obj.metadata);
  const meta = obj.metadata!;
  if (r.def.namespaced) {
    if (meta.namespace && meta.namespace !== r.info.namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = r.info.namespace;
  }
}

/** Reads the body of a create or update, applying the request's fieldValidation. */
async function readChecked(r: ResourceRequest): Promise<ApiObject> {
  const directive = fieldValidationOf(r.query);
  const { obj, duplicates } = await readObject(r.ctx);
  checkTypeAndScope(r, obj);
  enforceFieldValidation(r.ctx, directive, directive === 'Ignore' ? [] : unknownFields(r.def, obj), duplicates);
  return obj;
}

export async function createObject(r: ResourceRequest, backends: Backends): Promise<void> {
  const dryRun = isDryRun(r.query);
  const obj = await readChecked(r);
  if (r.def.namespaced && !r.info.namespace) throw badRequest('the namespace of the object is required');
  if (r.def.ephemeral) return writeObject(r.ctx, r.def, 201, await answerRequest(r, backends, obj));
  writeObject(r.ctx, r.def, 201, await createPrepared(r, backends, recordManagedFields(r, undefined, obj), dryRun));
}

/** A review or binding: validated and answered, never stored, and needing no name. */
async function answerRequest(r: ResourceRequest, backends: Backends, obj: ApiObject): Promise<ApiObject> {
  const { status: _answer, ...request } = obj; // the status is the answer: what a client sends there is ignored
  const causes = r.def.validate?.(request) ?? [];
  if (causes.length) throw invalid(r.def.kind, r.objects.gr, obj.metadata?.name ?? '', causes);
  return answerEphemeral(r, backends, request);
}

/** The steps of every create after decoding: server fields, defaults, validation, admission, the write. */
export async function createPrepared(r: ResourceRequest, backends: Backends, obj: ApiObject, dryRun: boolean): Promise<ApiObject> {
  const meta = obj.metadata!;
  Object.assign(meta, { uid: newUid(), creationTimestamp: nowTimestamp() });
  for (const f of ['resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) delete meta[f];
  if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
  r.def.prepareForCreate?.(obj, r.user);
  const release = await allocateShared(r, obj, undefined, dryRun);
  try {
    validateObject(r.def, obj);
    await confirmNoEscalation(r, backends, obj);
    const admitted = (await admit(backends, r.def, 'CREATE', r.user, obj, undefined, dryRun))!;
    if (admitted !== obj) validateObject(r.def, admitted); // mutated by admission: validated again
    if (!dryRun) return await createWithName(r, admitted);
    await refuseTakenName(r, admitted);
    return admitted;
  } catch (err) {
    await release();
    throw err;
  }
}

const nothingToRelease: Release = async () => undefined;

/** Claims the values of shared pools a spec write needs (a Service's cluster IP and node ports). */
function allocateShared(r: ResourceRequest, obj: ApiObject, old: ApiObject | undefined, dryRun: boolean): Promise<Release> {
  return r.allocator ? r.allocator.allocate(obj, old, dryRun) : Promise.resolve(nothingToRelease);
}

/** A dry-run create fails where the real one would: on a name that is taken. */
async function refuseTakenName(r: ResourceRequest, obj: ApiObject): Promise<void> {
  const meta = obj.metadata!;
  const taken = await r.objects.get(meta.namespace ?? '', meta.name!).then(() => true, (err) => {
    if (err instanceof StatusError && err.code === 404) return false;
    throw err;
  });
  if (taken && !meta.generateName) throw alreadyExists(r.objects.gr, meta.name!);
}

/** Creates the object; a generated name that is taken is drawn again. */
async function createWithName(r: ResourceRequest, obj: ApiObject): Promise<ApiObject> {
  const meta = obj.metadata!;
  for (let attempt = 1; ; attempt++) {
    try {
      return await r.objects.create(obj);
    } catch (err) {
      const retry = err instanceof StatusError && err.reason === 'AlreadyExists' && meta.generateName && attempt < MAX_GENERATE_ATTEMPTS;
      if (!retry) throw err;
      meta.name = generateName(meta.generateName!);
    }
  }
}

export async function updateObject(r: ResourceRequest, backends: Backends): Promise<void> {
  const dryRun = isDryRun(r.query);
  const obj = await readChecked(r);
  const meta = obj.metadata!;
  if (meta.name !== r.info.name) {
    throw badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${r.info.name})`);
  }
  const requested = meta.resourceVersion;
  const result = await writeWithRetry(r, backends, requested !== undefined && requested !== '', async (current) => {
    checkUpdatePreconditions(r, obj, current);
    return recordManagedFields(r, current, structuredClone(obj));
  }, dryRun);
  writeObject(r.ctx, r.def, 200, result);
}

/** What a replacing write asserts about the stored object: a uid it carries must be the stored one (a
 * precondition, 409, as for delete) and a resourceVersion it names must be current. */
export function checkUpdatePreconditions(r: ResourceRequest, sent: ApiObject, current: ApiObject): void {
  const uid = sent.metadata?.uid;
  const stored = current.metadata!;
  if (uid && uid !== stored.uid) {
    throw conflict(r.objects.gr, r.info.name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${stored.uid}`);
  }
  const requested = sent.metadata?.resourceVersion;
  if (requested && requested !== stored.resourceVersion) throw staleConflict(r.objects.gr, r.info.name);
}

/**
 * The read-modify-write of an update: reads the stored object, lets `change`
 * compute the new one, validates and admits it, and writes it only if storage
 * still holds what was read. A lost race is retried unless the client named a
 * resourceVersion (then it is the client's 409).
 */
export async function writeWithRetry(r: ResourceRequest, backends: Backends, clientVersioned: boolean,
  change: (current: ApiObject) => Promise<ApiObject>, dryRun: boolean): Promise<ApiObject> {
  for (let attempt = 1; ; attempt++) {
    const { obj: current, kv } = await r.objects.get(r.info.namespace, r.info.name);
    const next = await change(current);
    carryServerFields(next, current);
    const rules = writeRules(r.info.subresource);
    if (rules === 'status') r.def.prepareForStatusUpdate?.(next, current);
    else if (rules === 'spec') r.def.prepareForUpdate?.(next, current);
    const release = rules === 'spec' ? await allocateShared(r, next, current, dryRun) : nothingToRelease;
    try {
      const written = await validateAdmitWrite(r, backends, next, current, kv, rules, dryRun);
      return written === current ? (await release(), current) : written;
    } catch (err) {
      await release();
      const lostRace = err instanceof StatusError && err.reason === 'Conflict';
      if (!lostRace || clientVersioned || attempt >= MAX_WRITE_ATTEMPTS) throw err;
    }
  }
}

/** The end of an update: validation, admission and the write, unless nothing changed (then `current`). */
async function validateAdmitWrite(r: ResourceRequest, backends: Backends, next: ApiObject, current: ApiObject, kv: KeyValue,
  rules: WriteRules, dryRun: boolean): Promise<ApiObject> {
  validateObject(r.def, next, current, rules);
  if (rules === 'spec') await confirmNoEscalation(r, backends, next, current);
  const admitted = (await admit(backends, r.def, 'UPDATE', r.user, next, current, dryRun, {}, r.info.subresource))!;
  if (admitted !== next) validateObject(r.def, admitted, current, rules);
  if (r.objects.encode(admitted).equals(kv.value)) return current;
  if (dryRun) return admitted;
  const written = await r.objects.update(admitted, kv.modRevision);
  return finishIfFinalized(r, written);
}

/** Sub-resources that change one part of an object (a namespace's finalizers, a pod's node or
 * container resources, a request's approval) bypass the kind's spec rules, which forbid exactly
 * those changes; the sub-resource keeps everything else as stored. */
const PARTIAL_SUBRESOURCES = new Set(['finalize', 'binding', 'approval', 'resize', 'ephemeralcontainers']);

function writeRules(subresource: string): WriteRules {
  if (subresource === 'status') return 'status';
  return PARTIAL_SUBRESOURCES.has(subresource) ? 'metadata' : 'spec';
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
}

/** An object being deleted whose last finalizer is gone is removed. */
async function finishIfFinalized(r: ResourceRequest, obj: ApiObject): Promise<ApiObject> {
  const meta = obj.metadata!;
  if (!meta.deletionTimestamp || (meta.finalizers?.length ?? 0) > 0 || hasSpecFinalizers(obj)) return obj;
  await r.objects.delete(meta.namespace ?? '', meta.name!, Number(meta.resourceVersion)).catch((err) => {
    if (!(err instanceof StatusError && (err.code === 404 || err.code === 409))) throw err;
  });
  return obj;
}

const hasSpecFinalizers = (obj: ApiObject) => isObject(obj.spec) && Array.isArray(obj.spec.finalizers) && obj.spec.finalizers.length > 0;

function checkPreconditions(r: ResourceRequest, obj: ApiObject, opts: DeleteOptions): void {
  const p = opts.preconditions ?? {};
  const meta = obj.metadata!;
  if (p.uid && p.uid !== meta.uid) {
    throw conflict(r.objects.gr, meta.name!, `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${meta.uid}`);
  }
  if (p.resourceVersion && p.resourceVersion !== meta.resourceVersion) {
    throw conflict(r.objects.gr, meta.name!, `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion}`);
  }
}

/** Deletes one object: marks it when finalizers hold it, else removes it. */
export async function deleteOne(r: ResourceRequest, backends: Backends, namespace: string, name: string,
  opts: DeleteOptions, dryRun: boolean): Promise<{ obj: ApiObject; removed: boolean }> {
  for (let attempt = 1; ; attempt++) {
    const { obj, kv } = await r.objects.get(namespace, name);
    checkPreconditions(r, obj, opts);
    await admit(backends, r.def, 'DELETE', r.user, undefined, obj, dryRun, { kind: 'DeleteOptions', apiVersion: 'v1', ...opts });
    const policyFinalizer = propagationFinalizer(opts);
    const held = (obj.metadata!.finalizers?.length ?? 0) > 0 || hasSpecFinalizers(obj) || policyFinalizer !== undefined;
    try {
      if (!held) return { obj: dryRun ? obj : await r.objects.delete(namespace, name, kv.modRevision), removed: true };
      return { obj: await markDeleting(r, obj, kv.modRevision, opts, dryRun, policyFinalizer), removed: false };
    } catch (err) {
      if (!(err instanceof StatusError && err.reason === 'Conflict') || attempt >= MAX_WRITE_ATTEMPTS) throw err;
    }
  }
}

/** The finalizer a propagation policy asks the garbage collector to honour before removal. */
function propagationFinalizer(opts: DeleteOptions): string | undefined {
  if (opts.propagationPolicy === 'Orphan' || (opts.propagationPolicy === undefined && opts.orphanDependents === true)) return ORPHAN_FINALIZER;
  return opts.propagationPolicy === 'Foreground' ? FOREGROUND_FINALIZER : undefined;
}

/** Sets deletionTimestamp (once), and the policy's finalizer, on an object that finalizers keep. */
async function markDeleting(r: ResourceRequest, obj: ApiObject, revision: number, opts: DeleteOptions, dryRun: boolean,
  policyFinalizer?: string): Promise<ApiObject> {
  const finalizers = obj.metadata!.finalizers ?? [];
  const addFinalizer = policyFinalizer !== undefined && !finalizers.includes(policyFinalizer);
  if (obj.metadata!.deletionTimestamp && !addFinalizer) return obj;
  const next = structuredClone(obj);
  if (addFinalizer) next.metadata!.finalizers = [...finalizers, policyFinalizer!];
  next.metadata!.deletionTimestamp ??= nowTimestamp();
  next.metadata!.deletionGracePeriodSeconds ??= opts.gracePeriodSeconds ?? 0;
  r.def.prepareForDelete?.(next);
  return dryRun ? next : r.objects.update(next, revision);
}

export async function deleteObject(r: ResourceRequest, backends: Backends): Promise<void> {
  const dryRun = isDryRun(r.query);
  const opts = await readDeleteOptions(r.ctx, r.query);
  const { obj, removed } = await deleteOne(r, backends, r.info.namespace, r.info.name, opts, dryRun || (opts.dryRun ?? []).includes('All'));
  if (!removed || r.def.returnDeletedObject) return writeObject(r.ctx, r.def, 200, obj);
  writeBody(r.ctx, 200, presentedStatus(r.ctx, success(r.objects.gr, r.info.name, obj.metadata?.uid)), formatOf(r.ctx).mediaType);
}

export async function deleteCollection(r: ResourceRequest, backends: Backends): Promise<void> {
  const opts = await readDeleteOptions(r.ctx, r.query);
  const dryRun = isDryRun(r.query) || (opts.dryRun ?? []).includes('All');
  const { items } = await listObjects(r, backends);
  const deleted: ApiObject[] = [];
  for (const item of items) {
    try {
      deleted.push((await deleteOne(r, backends, item.metadata!.namespace ?? '', item.metadata!.name!, opts, dryRun)).obj);
    } catch (err) {
      if (!(err instanceof StatusError && err.code === 404)) throw err;
    }
  }
  writeList(r.ctx, r.def, r.objects.apiVersion, deleted, {});
}
