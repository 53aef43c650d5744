// Walks of objects along their schema: the set of fields an object sets, the
// fields two versions differ in, the merge of an applied configuration into a
// live object, the removal of fields nobody owns any more, and the
// reconciliation of recorded ownership with the schema's current markers.
import { isDeepStrictEqual } from 'node:util';
import { isPlainObject, shapeOf, type TypeNode } from '../schema.js';
import type { Path, PathElement } from './fieldpath.js';
import { serializeElement } from './fieldpath.js';
import { FieldSet } from './set.js';

/** How a list item is addressed: by its key fields, its value, or its index. */
export function listItemElement(t: TypeNode, index: number, item: unknown): PathElement {
  if (t.relation === 'set') return { value: item };
  if (t.relation === 'map' && t.keys.length > 0 && isPlainObject(item)) {
    const key: Array<[string, unknown]> = [];
    for (const k of t.keys) {
      const v = item[k] ?? t.keyDefaults[k];
      if (v !== undefined) key.push([k, v]);
    }
    return { key: key.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) };
  }
  return { index };
}

const isGranular = (t: TypeNode) => (t.kind === 'map' && t.relation === 'granular') || (t.kind === 'list' && t.relation !== 'atomic');
const isEmpty = (v: unknown) => v === undefined || v === null || (Array.isArray(v) ? v.length === 0 : isPlainObject(v) && Object.keys(v).length === 0);

/** Items of a list by their path element; the first of duplicates counts. */
function indexItems(t: TypeNode, list: unknown): Map<string, { pe: PathElement; item: unknown }> {
  const out = new Map<string, { pe: PathElement; item: unknown }>();
  if (!Array.isArray(list)) return out;
  list.forEach((item, i) => {
    const pe = listItemElement(t, i, item);
    const id = serializeElement(pe);
    if (!out.has(id)) out.set(id, { pe, item });
  });
  return out;
}

const fieldType = (t: TypeNode, name: string) => t.field(name) ?? t.element();

/** The fields a value sets: leaves, atomic values, map entries and list items. */
export function toFieldSet(v: unknown, t: TypeNode): FieldSet {
  const set = new FieldSet();
  const walk = (value: unknown, type: TypeNode, path: Path) => {
    const tt = shapeOf(type, value);
    if (!isGranular(tt)) {
      set.insert(path);
      return;
    }
    if (tt.kind === 'list') {
      if (!Array.isArray(value)) return;
      value.forEach((item, i) => {
        const p = [...path, listItemElement(tt, i, item)];
        walk(item, tt.element(), p);
        set.insert(p);
      });
      return;
    }
    if (!isPlainObject(value)) return;
    for (const [k, item] of Object.entries(value)) {
      const p = [...path, { field: k }];
      walk(item, fieldType(tt, k), p);
      if (!tt.field(k)) set.insert(p);
    }
  };
  walk(v, t, []);
  return set;
}

export interface Comparison {
  added: FieldSet;
  removed: FieldSet;
  modified: FieldSet;
}

/** The fields `r` adds to, removes from and changes in `l`. */
export function compare(l: unknown, r: unknown, t: TypeNode): Comparison {
  const out: Comparison = { added: new FieldSet(), removed: new FieldSet(), modified: new FieldSet() };
  const leaf = (a: unknown, b: unknown, path: Path) => {
    if (a === undefined) out.added.insert(path);
    else if (b === undefined) out.removed.insert(path);
    else if (!isDeepStrictEqual(a, b)) out.modified.insert(path);
  };
  const walk = (a: unknown, b: unknown, type: TypeNode, path: Path) => {
    const tt = shapeOf(type, b ?? a);
    // Empty values stay leaves so that `{}` and absent differ; so does a value whose shape changed.
    const reshaped = a !== undefined && b !== undefined && shapeOf(type, a).kind !== shapeOf(type, b).kind;
    if (!isGranular(tt) || (isEmpty(a) && isEmpty(b)) || reshaped) {
      leaf(a, b, path);
      return;
    }
    if (tt.kind === 'list') {
      const la = indexItems(tt, a);
      const lb = indexItems(tt, b);
      for (const [id, { pe, item }] of lb) walk(la.get(id)?.item, item, tt.element(), [...path, pe]);
      for (const [id, { pe, item }] of la) if (!lb.has(id)) walk(item, undefined, tt.element(), [...path, pe]);
    } else {
      const ma = isPlainObject(a) ? a : {};
      const mb = isPlainObject(b) ? b : {};
      for (const k of new Set([...Object.keys(ma), ...Object.keys(mb)])) walk(ma[k], mb[k], fieldType(tt, k), [...path, { field: k }]);
    }
    if (a === undefined) out.added.insert(path);
    else if (b === undefined) out.removed.insert(path);
  };
  walk(l, r, t, []);
  return out;
}

/** What `compare` finds when `v` is written where there was an empty object: every field it sets added, the
 * non-empty maps and lists holding them too, built in one walk without comparing against anything. */
export function additions(v: unknown, t: TypeNode): FieldSet {
  const set = new FieldSet();
  const tt = shapeOf(t, v);
  if (isPlainObject(v) && isGranular(tt)) addElements(set, v, tt);
  return set;
}

/** Adds the elements of `v`, a non-empty granular value of shape `tt`, to `set`, the level that holds them. */
function addElements(set: FieldSet, v: unknown, tt: TypeNode): void {
  if (tt.kind === 'list') {
    for (const { pe, item } of indexItems(tt, v).values()) addElement(set, pe, item, tt.element());
  } else if (isPlainObject(v)) {
    for (const k of Object.keys(v)) addElement(set, { field: k }, v[k], fieldType(tt, k));
  }
}

function addElement(set: FieldSet, pe: PathElement, v: unknown, type: TypeNode): void {
  const id = serializeElement(pe);
  set.members.set(id, pe);
  const tt = shapeOf(type, v);
  if (!isGranular(tt) || isEmpty(v)) return;
  const below = new FieldSet();
  addElements(below, v, tt);
  set.children.set(id, { pe, set: below });
}

/**
 * Merges an applied configuration into a live value: leaves and atomic values
 * from the configuration, maps key by key, granular lists item by item keeping
 * the live order with the configuration's items placed where it puts them.
 * A null in the configuration clears the field.
 */
export function merge(live: unknown, config: unknown, t: TypeNode): unknown {
  if (config === undefined) return live;
  // A null in the configuration (`labels: null`) replaces the live value, as any scalar would: the field goes.
  if (live === undefined || live === null || config === null) return stripNulls(config, t);
  const tt = shapeOf(t, config);
  if (!isGranular(tt) || (isEmpty(live) && isEmpty(config)) || shapeOf(t, live).kind !== tt.kind) return stripNulls(config, t);
  if (tt.kind === 'list') return mergeLists(live as unknown[], config as unknown[], tt);
  const l = live as Record<string, unknown>;
  const c = config as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of [...Object.keys(l), ...Object.keys(c).filter((k) => !Object.hasOwn(l, k))]) {
    const v = merge(l[k], c[k], fieldType(tt, k));
    if (v !== null && v !== undefined) out[k] = v;
  }
  return out;
}

/** A configuration value as stored: granular maps drop their null entries. */
function stripNulls(v: unknown, t: TypeNode): unknown {
  const tt = shapeOf(t, v);
  if (!isGranular(tt) || !isPlainObject(v)) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const [k, item] of Object.entries(v)) if (item !== null) out[k] = stripNulls(item, fieldType(tt, k));
  return out;
}

function mergeLists(live: unknown[], config: unknown[], t: TypeNode): unknown[] {
  const lhs = [...indexItems(t, live).entries()];
  const rhs = [...indexItems(t, config).entries()];
  const lhsById = new Map(lhs);
  const rhsById = new Map(rhs);
  const shared = rhs.filter(([id]) => lhsById.has(id)).map(([id]) => id);
  let next = shared.shift();
  const out: unknown[] = [];
  const done = new Set<string>();
  const emit = (id: string) => {
    out.push(merge(lhsById.get(id)?.item, rhsById.get(id)?.item, t.element()));
    done.add(id);
  };
  let li = 0;
  let ri = 0;
  while (li < lhs.length || ri < rhs.length) {
    if (li < lhs.length && done.has(lhs[li][0])) { li++; continue; }
    if (li < lhs.length && ri < rhs.length) {
      const id = lhs[li][0];
      if (id === rhs[ri][0]) {
        emit(id);
        li++;
        ri++;
        next = shared.shift();
        continue;
      }
      // A shared item the configuration places later waits for its turn.
      if (rhsById.has(id) && next !== undefined && next !== id) { li++; continue; }
    }
    if (li < lhs.length && !rhsById.has(lhs[li][0])) {
      emit(lhs[li][0]);
      li++;
      continue;
    }
    if (ri < rhs.length) {
      const id = rhs[ri][0];
      emit(id);
      ri++;
      if (next === id) next = shared.shift();
    } else {
      li++;
    }
  }
  return out;
}

/** Whether `pe` is in `set`, a declared field counting when anything below it is. */
function owns(set: FieldSet, pe: PathElement, named: boolean): boolean {
  return set.hasMember(pe) || (named && set.hasChildren(pe));
}

/**
 * Removes what the applier owned last time and no longer owns, when no manager
 * (the applier's new set included) owns it. A map or list this empties is removed too.
 */
export function removeDisowned(v: unknown, t: TypeNode, last: FieldSet, managed: FieldSet): unknown {
  const tt = shapeOf(t, v);
  if (!isGranular(tt) || last.empty()) return v;
  if (tt.kind === 'list') {
    if (!Array.isArray(v)) return v;
    const out: unknown[] = [];
    v.forEach((item, i) => {
      const pe = listItemElement(tt, i, item);
      if (owns(last, pe, false) && !owns(managed, pe, false)) return;
      out.push(removeDisowned(item, tt.element(), last.withPrefix(pe), managed.withPrefix(pe)));
    });
    return out;
  }
  if (!isPlainObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, item] of Object.entries(v)) {
    const pe = { field: k };
    const named = tt.field(k) !== undefined;
    if (owns(last, pe, named) && !owns(managed, pe, named)) continue;
    const kept = removeDisowned(item, fieldType(tt, k), last.withPrefix(pe), managed.withPrefix(pe));
    if (isEmpty(kept) && !isEmpty(item)) continue;
    out[k] = kept;
  }
  return out;
}

/**
 * Ownership recorded while a value was granular that is now atomic becomes
 * ownership of the whole value. Ownership of a formerly atomic value that is
 * now granular stays on the value itself, so nobody owns its parts.
 */
export function reconcileWithSchema(set: FieldSet, t: TypeNode): FieldSet {
  const toReplace: Path[] = [];
  const walk = (s: FieldSet, type: TypeNode, path: Path) => {
    for (const { pe, set: below } of s.children.values()) {
      const ct = 'field' in pe ? fieldType(type, pe.field) : type.element();
      const p = [...path, pe];
      if ((ct.kind === 'map' || ct.kind === 'list') && ct.relation === 'atomic') toReplace.push(p);
      else if (ct.kind === 'map' || ct.kind === 'list') walk(below, ct, p);
    }
  };
  if (t.kind !== 'untyped') walk(set, t, []);
  if (toReplace.length === 0) return set;
  const replaced = FieldSet.of(...toReplace);
  return set.recursiveDifference(replaced).union(replaced);
}
