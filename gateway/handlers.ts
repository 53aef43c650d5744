// The write verbs on one kind: create, update, delete, deletecollection. Each
// reads its request and calls the kind's store.
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { isObject } from '../internal/apimachinery/meta.js';
import { StatusError, badRequest, invalid, success } from '../internal/apimachinery/status.js';
import { ownGroup } from '../internal/names/index.js';
import { answerEphemeral } from './reviews.js';
import { enforceFieldValidation, fieldValidationOf, unknownFields } from './fieldvalidation.js';
import type { Backends } from './backends.js';
import type { ResourceRequest } from './context.js';
import { listObjects } from './reads.js';
import { readDeleteOptions, readObject, refuseProtobufBody } from './body.js';
import { writeList, writeObject, writeBody, formatOf, presentedStatus } from './respond.js';
import { checkUpdatePreconditions } from './store/strategy.js';
import { updateManager } from './managers.js';
import { storeFor, writeOptions } from './stores.js';

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

/** The body of a create or update, and how the request's fieldValidation answers the unknown fields the
 * store's schema walk finds, with the fields the body repeats. */
async function readChecked(r: ResourceRequest): Promise<{ obj: ApiObject; unknownFields: (paths: string[]) => void }> {
  const directive = fieldValidationOf(r.query);
  if (r.def.custom) refuseProtobufBody(r.ctx);
  const { obj, duplicates } = await readObject(r.ctx);
  checkTypeAndScope(r, obj);
  return { obj, unknownFields: (paths) => enforceFieldValidation(r.ctx, directive, paths, duplicates) };
}

export async function createObject(r: ResourceRequest, backends: Backends): Promise<void> {
  const opts = writeOptions(r);
  if (r.def.terminating) throw new StatusError(405, 'MethodNotAllowed', 'create not allowed while custom resource definition is terminating');
  const { obj, unknownFields: answerUnknown } = await readChecked(r);
  if (r.def.namespaced && !r.info.namespace) throw badRequest('the namespace of the object is required');
  if (r.def.ephemeral) {
    answerUnknown(unknownFields(r.def, obj));
    return writeObject(r.ctx, r.def, 201, await answerRequest(r, backends, obj));
  }
  const manager = () => updateManager(r, 'CreateOptions');
  writeObject(r.ctx, r.def, 201, await storeFor(r, backends).create(obj, { ...opts, manager, unknownFields: answerUnknown }));
}

/** A review or binding: validated and answered, never stored, and needing no name. */
async function answerRequest(r: ResourceRequest, backends: Backends, obj: ApiObject): Promise<ApiObject> {
  const { status: _answer, ...request } = obj; // the status is the answer: what a client sends there is ignored
  const causes = r.def.validate?.(request) ?? [];
  if (causes.length) throw invalid(r.def.kind, r.objects.gr, obj.metadata?.name ?? '', causes);
  return answerEphemeral(r, backends, request);
}

export async function updateObject(r: ResourceRequest, backends: Backends): Promise<void> {
  const opts = writeOptions(r);
  const { obj, unknownFields: answerUnknown } = await readChecked(r);
  const meta = obj.metadata!;
  if (meta.name !== r.info.name) {
    throw badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${r.info.name})`);
  }
  const manager = () => updateManager(r, 'UpdateOptions');
  const requested = meta.resourceVersion;
  const result = await storeFor(r, backends).update(r.info.namespace, r.info.name, (current) => {
    checkUpdatePreconditions(r.objects.gr, obj, current);
    return structuredClone(obj);
  }, { ...opts, manager, unknownFields: answerUnknown, conditional: requested !== undefined && requested !== '' });
  writeObject(r.ctx, r.def, 200, result);
}

export async function deleteObject(r: ResourceRequest, backends: Backends): Promise<void> {
  const opts = writeOptions(r);
  const options = await readDeleteOptions(r.ctx, r.query);
  const { obj, removed } = await storeFor(r, backends).delete(r.info.namespace, r.info.name, options, opts);
  if (!removed || r.def.returnDeletedObject) return writeObject(r.ctx, r.def, 200, obj);
  writeBody(r.ctx, 200, presentedStatus(r.ctx, success(r.objects.gr, r.info.name, obj.metadata?.uid)), formatOf(r.ctx).mediaType);
}

export async function deleteCollection(r: ResourceRequest, backends: Backends): Promise<void> {
  const opts = writeOptions(r);
  const options = await readDeleteOptions(r.ctx, r.query);
  const store = storeFor(r, backends);
  const { items } = await listObjects(r, backends);
  const deleted: ApiObject[] = [];
  for (const item of items) {
    try {
      deleted.push((await store.delete(item.metadata!.namespace ?? '', item.metadata!.name!, options, opts)).obj);
    } catch (err) {
      if (!(err instanceof StatusError && err.code === 404)) throw err;
    }
  }
  writeList(r.ctx, r.def, r.objects.apiVersion, deleted, {});
}
