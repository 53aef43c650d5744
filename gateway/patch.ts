// PATCH: JSON patch (RFC 6902), merge patch (RFC 7386), strategic merge patch
// (built-in kinds) and server-side apply, which creates the object when absent.
// Every write records its manager's fields in `metadata.managedFields`.
import { isDeepStrictEqual } from 'node:util';
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { isObject } from '../internal/apimachinery/meta.js';
import { StatusError, badRequest, notFound, staleConflict, invalid, unsupportedMediaType } from '../internal/apimachinery/status.js';
import { forbiddenField } from '../internal/apimachinery/validation.js';
import { GROUP_META } from '../internal/names/index.js';
import { apply, applyJsonPatch, mergePatch, rootType, strategicMergePatch, type ApplyOptions, type TypeNode } from '../internal/patch/index.js';
import type { Backends } from './backends.js';
import type { ResourceRequest } from './context.js';
import { readObject, readRaw } from './body.js';
import { checkTypeAndScope, inOwnSpelling } from './handlers.js';
import { duplicateJsonFields, enforceFieldValidation, fieldValidationOf, parseYamlWithDuplicates, unknownFields } from './fieldvalidation.js';
import { authorizeRequest } from './authorization.js';
import { cborEnabled, writeObject } from './respond.js';
import { decodeCbor } from './negotiation.js';
import { checkJsonDepth, checkValueDepth } from '../internal/apimachinery/depth.js';
import { kindType, managerOptions } from './store/fields.js';
import { applyManager, updateManager } from './managers.js';
import { storeFor, writeOptions } from './stores.js';

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
const APPLY_PATCH = 'application/apply-patch+yaml';
/** Apply in CBOR, served with gate CBORServingAndStorage. */
const APPLY_PATCH_CBOR = 'application/apply-patch+cbor';

/** Whether the kind is built in: strategic merge patch needs its patch strategies. */
const builtIn = (r: ResourceRequest): boolean => rootType({ group: r.def.group, version: r.def.version, kind: r.def.kind }) !== undefined;

/** How field ownership records the request's manager, under its sub-resource. */
const optionsFor = (r: ResourceRequest, manager: string) => managerOptions(r.def, r.objects.apiVersion, manager, r.info.subresource);

function parseJson(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  checkJsonDepth(text, 'the patch');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`error decoding patch: ${(err as Error).message}`);
  }
}

/** The applied configuration and the keys it repeats (the last one counts). */
function parseApplied(raw: Buffer, cbor: boolean): { config: ApiObject; duplicates: string[] } {
  const { value, duplicates } = cbor ? { value: decodeApplyCbor(raw), duplicates: [] } : parseYamlWithDuplicates(raw.toString('utf8'), 'error decoding YAML');
  const doc = checkValueDepth(value);
  if (!isObject(doc)) throw badRequest('error decoding YAML: the applied configuration must be an object');
  if (Object.hasOwn(doc, 'metadata') && !isObject(doc.metadata)) throw badRequest('error decoding YAML: metadata must be an object');
  return { config: doc as ApiObject, duplicates };
}

function decodeApplyCbor(raw: Buffer): unknown {
  try {
    return decodeCbor(raw);
  } catch (err) {
    if (err instanceof StatusError) throw err;
    throw badRequest(`error decoding CBOR: ${(err as Error).message}`);
  }
}

const optionsError = (message: string) => invalid('PatchOptions', { group: GROUP_META, resource: '' }, '', [forbiddenField('force', message)]);

/** `force`, only for apply; a `true` or `false` value. */
function forceOption(r: ResourceRequest, isApply: boolean): boolean {
  const value = r.query.get('force');
  if (value === null) return false;
  if (!isApply) throw optionsError('may not be specified for non-apply patch');
  if (value !== 'true' && value !== 'false') throw badRequest(`force: invalid value "${value}": must be true or false`);
  return value === 'true';
}

/** Whether the patch names a resourceVersion, making its write conditional (a lost race is then the client's 409). */
function isConditional(type: string, patch: unknown): boolean {
  if (type === JSON_PATCH) return Array.isArray(patch) && patch.some((op) => isObject(op) && op.path === '/metadata/resourceVersion');
  return isObject(patch) && isObject(patch.metadata) && Boolean(patch.metadata.resourceVersion);
}

/** A patched object must stay at its URL and, when it names a resourceVersion, be based on the current one. */
function checkPatched(r: ResourceRequest, current: ApiObject, next: ApiObject): void {
  if (!isObject(next)) throw badRequest('the patch did not produce an object');
  const meta = (isObject(next.metadata) ? next.metadata : {}) as NonNullable<ApiObject['metadata']>;
  if (meta.name !== r.info.name) throw badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${r.info.name})`);
  if (r.def.namespaced && meta.namespace !== r.info.namespace) {
    throw badRequest(`the namespace of the object (${meta.namespace ?? ''}) does not match the namespace on the URL (${r.info.namespace})`);
  }
  if (meta.resourceVersion && meta.resourceVersion !== current.metadata?.resourceVersion) {
    throw staleConflict(r.objects.gr, r.info.name);
  }
}

function patchDocument(type: string, current: ApiObject, patch: unknown, t: TypeNode): ApiObject {
  if (type === JSON_PATCH) return applyJsonPatch(current, patch);
  if (type === MERGE_PATCH) return mergePatch(current, patch) as ApiObject;
  return strategicMergePatch(current, patch as ApiObject, t);
}

/** PATCH of an object, or (with `restrict`) of the part of it a sub-resource may change. */
export async function patchObject(r: ResourceRequest, backends: Backends,
  restrict: (next: ApiObject, current: ApiObject) => ApiObject = (next) => next): Promise<void> {
  const opts = writeOptions(r);
  const type = (r.ctx.get('Content-Type') || '').split(';')[0].trim().toLowerCase();
  const t = kindType(r.def);
  const applies = cborEnabled(r.ctx) ? [APPLY_PATCH, APPLY_PATCH_CBOR] : [APPLY_PATCH];
  const supported = [JSON_PATCH, MERGE_PATCH, ...(builtIn(r) ? [STRATEGIC_PATCH] : []), ...applies];
  if (!supported.includes(type)) throw unsupportedMediaType(type, supported);
  const isApply = applies.includes(type);
  const force = forceOption(r, isApply);
  const directive = fieldValidationOf(r.query);
  if (isApply) {
    const { config, duplicates } = parseApplied(await readRaw(r.ctx), type === APPLY_PATCH_CBOR);
    inOwnSpelling(r, config);
    enforceFieldValidation(r.ctx, directive, directive === 'Ignore' ? [] : unknownFields(r.def, config), duplicates);
    return applyObject(r, backends, config, force);
  }
  const manager = updateManager(r, 'PatchOptions');
  const raw = await readRaw(r.ctx);
  const patch = parseJson(raw);
  if (type !== JSON_PATCH && !isObject(patch)) throw badRequest('the patch must be a JSON object');
  const duplicates = type === JSON_PATCH || directive === 'Ignore' ? [] : duplicateJsonFields(raw.toString('utf8'));
  const result = await storeFor(r, backends).update(r.info.namespace, r.info.name, (current) => {
    const next = restrict(patchDocument(type, current, patch, t), current);
    checkPatched(r, current, next);
    return isDeepStrictEqual(next, current) ? current : next;
  }, {
    ...opts, manager: () => manager, conditional: isConditional(type, patch),
    // The stored object has no unknown fields: any the store's walk finds came with the patch.
    unknownFields: (paths) => enforceFieldValidation(r.ctx, directive, paths, duplicates),
  });
  writeObject(r.ctx, r.def, 200, result);
}

/** A request to a sub-resource that shows part of its object (scale), in the object's own terms. */
export interface PartialWrite {
  /** The resourceVersion the request names, making it conditional. */
  readonly rv?: string;
  /** The object as the request wants it, from the stored one. */
  next(current: ApiObject): ApiObject;
  /** The manager the store records the change under; absent for apply, which records its own. */
  readonly manager?: () => string;
}

/**
 * Reads a PATCH of a partial view: apply (the view's fields as an applied
 * configuration of the object, owned under the sub-resource), or merge and
 * strategic merge of the view (`toView` / `fromView` translate). Ownership of
 * what changes is recorded on the object either way.
 */
export async function readPartialPatch(r: ResourceRequest, toView: (obj: ApiObject) => ApiObject,
  fromView: (view: ApiObject, current: ApiObject) => ApiObject, configOf: (view: ApiObject, current: ApiObject) => ApiObject): Promise<PartialWrite> {
  const type = (r.ctx.get('Content-Type') || '').split(';')[0].trim().toLowerCase();
  const supported = [MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH];
  if (!supported.includes(type)) throw unsupportedMediaType(type, supported);
  const rv = (view: unknown) => (isObject(view) && isObject(view.metadata) ? view.metadata.resourceVersion as string | undefined : undefined) || undefined;
  if (type === APPLY_PATCH) {
    const force = forceOption(r, true);
    const manager = applyManager(r);
    const view = parseApplied(await readRaw(r.ctx), false).config;
    return { rv: rv(view), next: (current) => apply(current, configOf(view, current), { ...optionsFor(r, manager), force }) };
  }
  forceOption(r, false);
  const manager = updateManager(r, 'PatchOptions');
  const patch = parseJson(await readRaw(r.ctx));
  if (!isObject(patch)) throw badRequest('the patch must be a JSON object');
  return { rv: rv(patch), manager: () => manager, next: (current) => fromView(mergePatch(toView(current), patch) as ApiObject, current) };
}

/** Reads a PUT of a partial view: the whole view, ownership recorded on the object. */
export async function readPartialUpdate(r: ResourceRequest, fromView: (view: ApiObject, current: ApiObject) => ApiObject): Promise<PartialWrite> {
  const manager = updateManager(r, 'UpdateOptions');
  const { obj: view } = await readObject(r.ctx);
  return { rv: view.metadata?.resourceVersion || undefined, manager: () => manager, next: (current) => fromView(view, current) };
}

/** Server-side apply: one read-modify-write that merges into the object, or creates it (with create permission) when absent. */
async function applyObject(r: ResourceRequest, backends: Backends, config: ApiObject, force: boolean): Promise<void> {
  const opts = { ...optionsFor(r, applyManager(r)), force };
  const { obj, created } = await storeFor(r, backends).upsert(r.info.namespace, r.info.name, (current) => {
    const next = apply(current, config, opts);
    checkPatched(r, current, next);
    return isDeepStrictEqual(next, current) ? current : next;
  }, () => createdByApply(r, backends, config, opts), { ...writeOptions(r), conditional: isConditional(APPLY_PATCH, config) });
  writeObject(r.ctx, r.def, created ? 201 : 200, obj);
}

/** An apply that creates is a create: of the object itself (never through a sub-resource), with create permission as well. */
async function createdByApply(r: ResourceRequest, backends: Backends, config: ApiObject, opts: ApplyOptions): Promise<ApiObject> {
  if (r.info.subresource) throw notFound(r.objects.gr, r.info.name);
  const obj = apply({}, config, opts);
  await authorizeRequest(backends, r.user, r.info, undefined, 'create');
  obj.metadata ??= {};
  if (obj.metadata.name !== r.info.name) throw badRequest(`the name of the object (${obj.metadata.name ?? ''}) does not match the name on the URL (${r.info.name})`);
  checkTypeAndScope(r, obj);
  return obj;
}
