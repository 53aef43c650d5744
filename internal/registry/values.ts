// Reading and comparing decoded JSON without trusting its shape: every kind's
// defaulting and validation goes through these so a wrongly typed field never throws.
import { isObject, type ApiObject } from '../apimachinery/meta.js';

export type Obj = Record<string, unknown>;

export { isObject };

export const asObj = (v: unknown): Obj | undefined => (isObject(v) ? v : undefined);
/** An object's spec, empty when it has none. */
export const specOf = (o: ApiObject | undefined): Obj => asObj(o?.spec) ?? {};
export const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** The object members of a list. */
export const objects = (v: unknown): Obj[] => asList(v).filter(isObject);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** The object at `key`, created when absent (or replaced when not an object). */
export function child(o: Obj, key: string): Obj {
  if (!isObject(o[key])) o[key] = {};
  return o[key] as Obj;
}

/** The object at a path, or undefined when any step is missing or not an object. */
export function at(o: unknown, ...path: string[]): Obj | undefined {
  let cur: unknown = o;
  for (const k of path) cur = asObj(cur)?.[k];
  return asObj(cur);
}

/** Sets `o[key] = value` when the key is absent (the usual `if x == nil { x = default }`). */
export function setDefault(o: Obj, key: string, value: unknown): void {
  if (o[key] === undefined) o[key] = value;
}

/** Structural equality of JSON values; key order does not matter, undefined members count as absent. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (!isObject(a) || !isObject(b)) return false;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
}

export const clone = <T>(v: T): T => (v === undefined ? v : structuredClone(v));

/** Label selector matching (`matchLabels` and `matchExpressions`); a missing selector matches nothing. */
export function selectorMatches(selector: unknown, labels: unknown): boolean {
  const sel = asObj(selector);
  if (!sel) return false;
  const set = (asObj(labels) ?? {}) as Record<string, unknown>;
  const has = (k: string) => Object.hasOwn(set, k);
  for (const [k, v] of Object.entries(asObj(sel.matchLabels) ?? {})) if (set[k] !== v) return false;
  for (const e of objects(sel.matchExpressions)) {
    const key = String(e.key);
    const values = asList(e.values);
    const ok = e.operator === 'In' ? has(key) && values.includes(set[key])
      : e.operator === 'NotIn' ? !has(key) || !values.includes(set[key])
        : e.operator === 'Exists' ? has(key)
          : e.operator === 'DoesNotExist' ? !has(key) : false;
    if (!ok) return false;
  }
  return true;
}
