// Invariants a schema's markers add to the plain value checks: list-type `set`
// items and list-type `map` keys are unique, and every embedded resource has an
// apiVersion, a kind and valid ObjectMeta.
import type { StatusCause } from '../apimachinery/status.js';
import * as meta from '../apimachinery/validation.js';
import { dns1035Label, duplicate, invalid, pathSegmentName, required } from '../registry/causes.js';
import { isObject } from '../registry/values.js';
import { canonical } from './validation-values.js';
import { isEmbedded, LIST_MAP_KEYS, LIST_TYPE, memberSchema, type Schema } from './structural.js';

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** Duplicates in list-type set and map lists, and the embedded resources' own fields, below `value`. */
export function validateMarkers(value: unknown, s: Schema | undefined, path: string, embedded = false): StatusCause[] {
  const out: StatusCause[] = [];
  walk(value, s, path, embedded, out);
  return out;
}

function walk(value: unknown, s: Schema | undefined, path: string, embedded: boolean, out: StatusCause[]): void {
  if (!s) return;
  if (Array.isArray(value)) {
    if (s[LIST_TYPE] === 'set') duplicates(value, path, out);
    else if (s[LIST_TYPE] === 'map') mapKeys(value, (s[LIST_MAP_KEYS] as string[] | undefined) ?? [], path, out);
    const items = s.items;
    value.forEach((item, i) => walk(item, items, `${path}[${i}]`, isEmbedded(items), out));
  } else if (isObject(value)) {
    if (embedded) embeddedResource(value, path, out);
    for (const [key, member] of Object.entries(value)) {
      const ms = memberSchema(s, key);
      if (ms) walk(member, ms, join(path, key), isEmbedded(ms), out);
    }
  }
}

/** Second and later copies of a value, once each. */
function duplicates(items: unknown[], path: string, out: StatusCause[], keyOf: (v: unknown) => unknown = (v) => v): void {
  const seen = new Map<string, number>();
  items.forEach((item, i) => {
    const key = canonical(keyOf(item));
    const times = seen.get(key) ?? 0;
    seen.set(key, times + 1);
    if (times === 1) out.push(duplicate(`${path}[${i}]`, keyOf(item)));
  });
}

function mapKeys(items: unknown[], keys: string[], path: string, out: StatusCause[]): void {
  const bad = items.findIndex((x) => x !== null && !isObject(x));
  if (bad >= 0) {
    out.push(invalid(`${path}[${bad}]`, items[bad], 'must be an object for an array of list-type map'));
    return;
  }
  duplicates(items, path, out, (x) => {
    const key: Record<string, unknown> = {};
    if (isObject(x)) for (const k of keys) if (x[k] !== undefined) key[k] = x[k];
    return key;
  });
}

const GROUP_VERSION = /^([^/]+\/)?[^/]+$/;

/** apiVersion and kind required and well formed; metadata as ObjectMeta (name not required). */
function embeddedResource(x: Record<string, unknown>, path: string, out: StatusCause[]): void {
  if (x.apiVersion === undefined) out.push(required(join(path, 'apiVersion')));
  else if (typeof x.apiVersion !== 'string') out.push(invalid(join(path, 'apiVersion'), x.apiVersion, 'must be a string'));
  else if (!x.apiVersion) out.push(invalid(join(path, 'apiVersion'), '', 'must not be empty'));
  else if (!GROUP_VERSION.test(x.apiVersion)) out.push(invalid(join(path, 'apiVersion'), x.apiVersion, `unexpected GroupVersion string: ${x.apiVersion}`));
  if (x.kind === undefined) out.push(required(join(path, 'kind')));
  else if (typeof x.kind !== 'string') out.push(invalid(join(path, 'kind'), x.kind, 'must be a string'));
  else if (!x.kind) out.push(invalid(join(path, 'kind'), '', 'must not be empty'));
  else {
    const errs = dns1035Label(join(path, 'kind'), x.kind.toLowerCase());
    if (errs.length) out.push(invalid(join(path, 'kind'), x.kind, `may have mixed case, but should otherwise match: ${(errs[0].message ?? '').replace(/^Invalid value: "[^"]*": /, '')}`));
  }
  if (isObject(x.metadata)) objectMeta(x.metadata, join(path, 'metadata'), out);
}

function objectMeta(m: Record<string, unknown>, path: string, out: StatusCause[]): void {
  if (typeof m.name === 'string' && m.name) out.push(...pathSegmentName(join(path, 'name'), m.name));
  if (typeof m.generateName === 'string' && m.generateName) out.push(...pathSegmentName(join(path, 'generateName'), m.generateName));
  if (typeof m.namespace === 'string' && m.namespace) out.push(...meta.dns1123Label(join(path, 'namespace'), m.namespace));
  if (isObject(m.labels)) out.push(...meta.labels(join(path, 'labels'), m.labels as Record<string, string>));
  if (isObject(m.annotations)) out.push(...meta.annotations(join(path, 'annotations'), m.annotations as Record<string, string>));
}
