// Paths to fields as FieldsV1 names them: `f:` a field or map key, `k:` a list
// item by its key fields, `v:` a set item by its value, `i:` a list index.
import { isPlainObject } from '../schema.js';

export type PathElement =
  | { field: string }
  | { key: Array<[string, unknown]> }
  | { value: unknown }
  | { index: number };

export type Path = PathElement[];

/** JSON as Go's encoder writes it: object keys sorted, `<`, `>` and `&` escaped. */
export function canonicalJson(v: unknown): string {
  const sort = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sort);
    if (isPlainObject(x)) return Object.fromEntries(Object.keys(x).sort().map((k) => [k, sort(x[k])]));
    return x;
  };
  return JSON.stringify(sort(v)).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}

/** The FieldsV1 name of a path element; also its identity. */
export function serializeElement(pe: PathElement): string {
  if ('field' in pe) return `f:${pe.field}`;
  if ('key' in pe) return `k:{${pe.key.map(([k, v]) => `${canonicalJson(k)}:${canonicalJson(v)}`).join(',')}}`;
  if ('value' in pe) return `v:${canonicalJson(pe.value)}`;
  return `i:${pe.index}`;
}

/** Parses a FieldsV1 name; undefined for a kind of element this server does not know (it is dropped). */
export function parseElement(s: string): PathElement | undefined {
  if (s.length < 2 || s[1] !== ':') throw new Error(`invalid path element ${JSON.stringify(s)}`);
  const body = s.slice(2);
  switch (s[0]) {
    case 'f': return { field: body };
    case 'v': return { value: JSON.parse(body) };
    case 'i': {
      if (!/^-?\d+$/.test(body)) throw new Error(`invalid index in ${JSON.stringify(s)}`);
      return { index: Number(body) };
    }
    case 'k': {
      const obj = JSON.parse(body) as unknown;
      if (!isPlainObject(obj)) throw new Error(`invalid key in ${JSON.stringify(s)}`);
      return { key: Object.entries(obj).sort(([a], [b]) => compareStrings(a, b)) };
    }
    default: return undefined;
  }
}

export const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Orders values of any type: numbers, strings, booleans, lists, maps, then null. */
export function compareValues(a: unknown, b: unknown): number {
  const rank = (v: unknown) => (typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : typeof v === 'boolean' ? 2
    : Array.isArray(v) ? 3 : isPlainObject(v) ? 4 : 5);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number' || typeof a === 'string') return a < (b as typeof a) ? -1 : a > (b as typeof a) ? 1 : 0;
  if (typeof a === 'boolean') return Number(a) - Number(b);
  if (Array.isArray(a)) {
    const bl = b as unknown[];
    for (let i = 0; i < Math.min(a.length, bl.length); i++) {
      const c = compareValues(a[i], bl[i]);
      if (c) return c;
    }
    return a.length - bl.length;
  }
  return ra === 4 ? compareStrings(canonicalJson(a), canonicalJson(b)) : 0;
}

function compareKeys(a: Array<[string, unknown]>, b: Array<[string, unknown]>): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compareStrings(a[i][0], b[i][0]) || compareValues(a[i][1], b[i][1]);
    if (c) return c;
  }
  return a.length - b.length;
}

/** The order FieldsV1 lists elements in: fields, keys, values, indexes. */
export function compareElements(a: PathElement, b: PathElement): number {
  const rank = (pe: PathElement) => ('field' in pe ? 0 : 'key' in pe ? 1 : 'value' in pe ? 2 : 3);
  const d = rank(a) - rank(b);
  if (d) return d;
  if ('field' in a) return compareStrings(a.field, (b as { field: string }).field);
  if ('key' in a) return compareKeys(a.key, (b as { key: Array<[string, unknown]> }).key);
  if ('value' in a) return compareValues(a.value, (b as { value: unknown }).value);
  return a.index - (b as { index: number }).index;
}

/** A value as conflict messages print it: strings quoted, the rest as JSON. */
function valueString(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(valueString).join(',')}]`;
  if (isPlainObject(v)) return `{${Object.keys(v).sort().map((k) => `${k}=${valueString(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

/** A path as messages print it, e.g. `.spec.containers[name="app"].image`. */
export function pathString(path: Path): string {
  return path.map((pe) => {
    if ('field' in pe) return `.${pe.field}`;
    if ('key' in pe) return `[${pe.key.map(([k, v]) => `${k}=${valueString(v)}`).join(',')}]`;
    if ('value' in pe) return `[=${valueString(pe.value)}]`;
    return `[${pe.index}]`;
  }).join('');
}
