// Strategic merge patch: a merge patch whose lists merge by the schema's patch
// strategy (`merge` lists join item by item on their merge key, or as sets of
// scalars; other lists are replaced), with the directives `$patch`,
// `$retainKeys`, `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`.
import { StatusError, badRequest } from '../apimachinery/status.js';
import { isPlainObject, type TypeNode } from './schema.js';

type Obj = Record<string, unknown>;

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ORDER = '$setElementOrder/';
const DELETE_FROM = '$deleteFromPrimitiveList/';

const BAD_RETAIN_KEYS = 'invalid patch format of retainKeys';
const BAD_SET_ORDER = 'invalid patch format of setElementOrder list';
const BAD_PRIMITIVE_LIST = 'invalid patch format of primitive list';

const unprocessable = (message: string) => new StatusError(422, 'Invalid',
  'the server rejected our request due to an error in our request', { causes: [{ message }] });
/** The remaining malformed patches (unknown directives, items without their merge key, mixed lists) are the client's 400. */
const patchError = (message: string) => badRequest(message);

const goValue = (v: unknown): string => (isPlainObject(v) ? `map[${Object.entries(v).map(([k, x]) => `${k}:${goValue(x)}`).join(' ')}]` : String(v));
const noMergeKey = (m: Obj, key: string) => patchError(`map: ${goValue(m)} does not contain declared merge key: ${key}`);

/** Applies `patch` to `original` (neither is modified) for a value of type `t`. */
export function strategicMergePatch(original: Obj, patch: Obj, t: TypeNode): Obj {
  return mergeMap(structuredClone(original), structuredClone(patch), t);
}

const fieldType = (t: TypeNode, name: string) => t.field(name) ?? t.element();

function mergeMap(original: Obj | undefined, patch: Obj, t: TypeNode): Obj {
  if (Object.hasOwn(patch, DIRECTIVE)) {
    const directive = patch[DIRECTIVE];
    if (directive === 'delete') return {};
    if (directive !== 'replace') throw patchError(`unknown patch type: ${String(directive)} in map: ${goValue(patch)}`);
    delete patch[DIRECTIVE];
    return mergeMap(undefined, patch, t);
  }
  const out = original ?? {};
  retainKeys(out, patch);
  applySetElementOrder(out, patch, t);
  for (const [rawKey, value] of Object.entries(patch)) {
    const isDeleteList = rawKey.startsWith(DELETE_FROM);
    const key = isDeleteList ? directiveTarget(rawKey, DELETE_FROM, BAD_PRIMITIVE_LIST) : rawKey;
    if (!isDeleteList && key.startsWith('$')) continue;
    if (value === null) {
      delete out[key];
      continue;
    }
    const ft = fieldType(t, key);
    const current = out[key];
    if (current === undefined || (isPlainObject(current) !== isPlainObject(value)) || (Array.isArray(current) !== Array.isArray(value))) {
      if (!isDeleteList) out[key] = fresh(value, ft);
      continue;
    }
    if (isPlainObject(current)) out[key] = ft.strategy.includes('replace') ? fresh(value, ft) : mergeMap(current, value as Obj, ft);
    else if (Array.isArray(current)) out[key] = mergeListField(current, value as unknown[], ft, isDeleteList);
    else out[key] = value;
  }
  return out;
}

/** A patch value for a field the original lacks: directives applied to nothing. */
function fresh(value: unknown, t: TypeNode): unknown {
  if (isPlainObject(value)) return mergeMap(undefined, value, t);
  if (Array.isArray(value) && t.strategy.includes('merge') && value.length) return mergeList([], value, t.element(), t.mergeKey, false);
  return value;
}

function mergeListField(original: unknown[], patch: unknown[], t: TypeNode, isDeleteList: boolean): unknown[] {
  return t.strategy.includes('merge') ? mergeList(original, patch, t.element(), t.mergeKey, isDeleteList) : patch;
}

function directiveTarget(key: string, prefix: string, error: string): string {
  const target = key.slice(prefix.length);
  if (!target) throw badRequest(error);
  return target;
}

/** `$retainKeys`: keys of the original not listed are cleared; keys the patch sets must be listed. */
function retainKeys(original: Obj, patch: Obj): void {
  if (!Object.hasOwn(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw badRequest(BAD_RETAIN_KEYS);
  const keep = new Set(list);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM) || k.startsWith(SET_ORDER)) continue;
    if (!keep.has(k)) throw badRequest(BAD_RETAIN_KEYS);
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}

type Kind = 'map' | 'scalar';

/** The kind shared by every item of the lists; mixed kinds and lists of lists are errors. */
function elementKind(...lists: unknown[][]): Kind | undefined {
  let kind: string | undefined;
  for (const list of lists) {
    for (const v of list) {
      const k = Array.isArray(v) ? 'list' : isPlainObject(v) ? 'map' : v === null ? 'null' : typeof v;
      if (k === 'list') throw unprocessable('lists of lists are not supported');
      if (kind !== undefined && kind !== k) throw patchError(`list element types are not identical: ${JSON.stringify(lists)}`);
      kind = k;
    }
  }
  return kind === undefined ? undefined : kind === 'map' ? 'map' : 'scalar';
}

const keyOf = (v: unknown, mergeKey: string | undefined, kind: Kind): unknown => (kind === 'map' ? (v as Obj)[mergeKey!] : v);

/** Where each key first appears in a list: lookups by key keep merging linear in the lists' lengths. */
function positions(list: unknown[], mergeKey: string | undefined, kind: Kind): Map<unknown, number> {
  const at = new Map<unknown, number>();
  list.forEach((v, i) => {
    const key = keyOf(v, mergeKey, kind);
    if (!at.has(key)) at.set(key, i);
  });
  return at;
}

function mergeList(original: unknown[], patch: unknown[], elem: TypeNode, mergeKey: string | undefined, isDeleteList: boolean): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = elementKind(original, patch)!;
  let merged: unknown[];
  let orderedBy = patch;
  if (kind === 'scalar') {
    if (isDeleteList) {
      const deleted = new Set(patch);
      return original.filter((v) => !deleted.has(v));
    }
    merged = [...new Set([...original, ...patch])];
  } else {
    if (!mergeKey) throw patchError('cannot merge lists without merge key for type map');
    const special = applySpecialItems(original, patch, mergeKey);
    merged = mergeByKey(special.original, special.patch, mergeKey, elem);
    orderedBy = special.patch;
    original = special.original;
  }
  return normalizeOrder(merged, orderedBy, original, mergeKey, kind);
}

/** Items with `$patch`: `delete` removes the matching items, `replace` makes the list the patch's other items. */
function applySpecialItems(original: unknown[], patch: unknown[], mergeKey: string): { original: unknown[]; patch: unknown[] } {
  const plain: unknown[] = [];
  let replace = false;
  const deleted = new Set<unknown>();
  for (const item of patch as Obj[]) {
    if (!Object.hasOwn(item, DIRECTIVE)) {
      plain.push(item);
      continue;
    }
    const directive = item[DIRECTIVE];
    if (directive === 'delete') {
      if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
      deleted.add(item[mergeKey]);
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw patchError('merging lists cannot yet be specified in the patch');
    } else {
      throw patchError(`unknown patch type: ${String(directive)} in map: ${goValue(item)}`);
    }
  }
  if (replace) return { original: plain, patch: [] };
  return { original: deleted.size ? original.filter((x) => !deleted.has((x as Obj)[mergeKey])) : original, patch: plain };
}

function mergeByKey(original: unknown[], patch: unknown[], mergeKey: string, elem: TypeNode): unknown[] {
  const out = [...original];
  const at = new Map<unknown, number>();
  out.forEach((x, i) => {
    if (isPlainObject(x) && !at.has(x[mergeKey])) at.set(x[mergeKey], i);
  });
  for (const item of patch as Obj[]) {
    if (!Object.hasOwn(item, mergeKey)) throw noMergeKey(item, mergeKey);
    const i = at.get(item[mergeKey]);
    if (i !== undefined) out[i] = mergeMap(out[i] as Obj, item, elem);
    else {
      at.set(item[mergeKey], out.length);
      out.push(mergeMap(undefined, item, elem));
    }
  }
  return out;
}

/**
 * Orders a merged list: items the patch names in the patch's order, the
 * server's other items in their live order, interleaved where the live order
 * relates them.
 */
function normalizeOrder(merged: unknown[], patchOrder: unknown[], serverOrder: unknown[], mergeKey: string | undefined, kind: Kind): unknown[] {
  if (kind === 'map') {
    for (const v of [...merged, ...patchOrder, ...serverOrder]) {
      if (isPlainObject(v) && !Object.hasOwn(v, mergeKey!)) throw noMergeKey(v, mergeKey!);
    }
  }
  const inPatch = positions(patchOrder, mergeKey, kind);
  const inServer = positions(serverOrder, mergeKey, kind);
  const sortBy = (items: unknown[], order: Map<unknown, number>) => items
    .map((v, i) => ({ v, i, r: order.get(keyOf(v, mergeKey, kind)) ?? Number.MAX_SAFE_INTEGER }))
    .sort((a, b) => a.r - b.r || a.i - b.i).map((x) => x.v);
  const patchItems = sortBy(merged.filter((v) => inPatch.has(keyOf(v, mergeKey, kind))), inPatch);
  const serverOnly = sortBy(merged.filter((v) => !inPatch.has(keyOf(v, mergeKey, kind))), inServer);
  return interleave(serverOnly, patchItems, (v) => inServer.get(keyOf(v, mergeKey, kind)));
}

/** Merges two ordered lists, taking a server-only item first only when the live order (`serverIndex`) puts it first. */
function interleave(left: unknown[], right: unknown[], serverIndex: (v: unknown) => number | undefined): unknown[] {
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (j >= right.length) out.push(left[i++]);
    else if (i >= left.length) out.push(right[j++]);
    else {
      const li = serverIndex(left[i]);
      const ri = serverIndex(right[j]);
      out.push(li !== undefined && ri !== undefined && li < ri ? left[i++] : right[j++]);
    }
  }
  return out;
}

/**
 * `$setElementOrder/<list>`: the list (merged with the patch's list, if any)
 * takes the given order for the items it names; other items keep their live order.
 */
function applySetElementOrder(original: Obj, patch: Obj, t: TypeNode): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ORDER)) continue;
    const order = patch[key];
    delete patch[key];
    if (!Array.isArray(order)) throw badRequest(BAD_SET_ORDER);
    const target = directiveTarget(key, SET_ORDER, BAD_SET_ORDER);
    const ft = fieldType(t, target);
    const current = original[target];
    const patchList = patch[target];
    if (current !== undefined && !Array.isArray(current)) throw badRequest(BAD_SET_ORDER);
    if (patchList !== undefined && patchList !== null && !Array.isArray(patchList)) throw badRequest(BAD_SET_ORDER);
    const mergeKey = ft.strategy.includes('merge') ? ft.mergeKey : undefined;
    checkOrderCoversPatch(patchList ?? [], order, mergeKey);
    if (current === undefined && (patchList === undefined || patchList === null)) continue;
    const merged = current === undefined ? fresh(patchList, ft) as unknown[]
      : patchList === undefined || patchList === null ? current : mergeListField(current, patchList, ft, false);
    const kind = elementKind(current ?? [], (patchList as unknown[] | undefined) ?? []) ?? 'scalar';
    original[target] = normalizeOrder(merged, order, current ?? [], mergeKey, kind);
    delete patch[target];
  }
}

/** The patch's items must appear in the order list, in the same relative order. */
function checkOrderCoversPatch(patchList: unknown[], order: unknown[], mergeKey: string | undefined): void {
  const items = patchList.filter((v) => !(isPlainObject(v) && Object.hasOwn(v, DIRECTIVE)));
  const key = (v: unknown) => (mergeKey && isPlainObject(v) ? v[mergeKey] : v);
  let p = 0;
  for (let o = 0; o < order.length && p < items.length; o++) if (key(items[p]) === key(order[o])) p++;
  if (p < items.length) {
    throw patchError(`The order in patch list:\n${JSON.stringify(patchList)}\n doesn't match ${SET_ORDER.slice(0, -1)} list:\n${JSON.stringify(order)}\n`);
  }
}
