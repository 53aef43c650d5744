// A CRD version's openAPIV3Schema as the server reads it: each extension in its
// `x-svc-*` spelling (upstream's `x-kubernetes-*` spelling is read as the same),
// and the accessors the pruning, defaulting and validation walks share.
import type { Schema } from '../registry/openapi.js';
import { EMBEDDED_RESOURCE, INT_OR_STRING, PRESERVE_UNKNOWN_FIELDS } from '../cel/index.js';
import { extension, upstreamExtension } from '../names/index.js';

export type { Schema };

const EXTENSIONS = ['preserve-unknown-fields', 'int-or-string', 'embedded-resource', 'list-type', 'list-map-keys', 'map-type', 'validations'] as const;

export { EMBEDDED_RESOURCE, INT_OR_STRING, PRESERVE_UNKNOWN_FIELDS };
export const LIST_TYPE = extension('list-type');
export const LIST_MAP_KEYS = extension('list-map-keys');
export const MAP_TYPE = extension('map-type');
export const VALIDATIONS = extension('validations');

/** Each upstream spelling with the product's. */
const EXTENSION_ALIASES: ReadonlyMap<string, string> = new Map(EXTENSIONS.map((n) => [upstreamExtension(n), extension(n)]));

/** Keywords whose value is a schema, a list of schemas or a map of schemas. */
const SCHEMA_KEYWORDS = new Set(['items', 'additionalProperties', 'additionalItems', 'not']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions']);

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A copy of a schema with every upstream-spelled extension renamed (values such as defaults and enums untouched). */
export function normalizeSchema(schema: unknown): Schema {
  if (!isObj(schema)) return {};
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    const alias = EXTENSION_ALIASES.get(key);
    if (alias && schema[alias] !== undefined) continue;
    out[alias ?? key] = normalizeMember(key, value);
  }
  return out;
}

function normalizeMember(key: string, value: unknown): unknown {
  if (SCHEMA_KEYWORDS.has(key)) return Array.isArray(value) ? value.map(normalizeSchema) : isObj(value) ? normalizeSchema(value) : value;
  if (SCHEMA_LISTS.has(key)) return Array.isArray(value) ? value.map(normalizeSchema) : value;
  if (SCHEMA_MAPS.has(key) && isObj(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalizeSchema(v)]));
  return value;
}

/** How deep schemas may nest: every walk over a schema (and over values along it) recurses once per level. */
export const MAX_SCHEMA_DEPTH = 256;

/** Every schema node of a schema (itself included) with its depth (1 at the top), walked without recursion. */
export function* schemaNodes(schema: unknown): Generator<[Record<string, unknown>, number]> {
  const pending: [unknown, number][] = [[schema, 1]];
  while (pending.length) {
    const [s, depth] = pending.pop()!;
    if (!isObj(s)) continue;
    yield [s, depth];
    for (const [key, value] of Object.entries(s)) {
      if (SCHEMA_KEYWORDS.has(key) || SCHEMA_LISTS.has(key)) (Array.isArray(value) ? value : [value]).forEach((v) => pending.push([v, depth + 1]));
      else if (SCHEMA_MAPS.has(key) && isObj(value)) Object.values(value).forEach((v) => pending.push([v, depth + 1]));
    }
  }
}

/** The deepest nesting of schemas below (and including) `schema`. */
export function schemaDepth(schema: unknown): number {
  let deepest = 0;
  for (const [, depth] of schemaNodes(schema)) deepest = Math.max(deepest, depth);
  return deepest;
}

/** Renames upstream-spelled extensions in place, in a schema and every schema below it (at any depth). */
export function renameExtensions(schema: unknown): void {
  for (const [node] of schemaNodes(schema)) {
    for (const [alias, name] of EXTENSION_ALIASES) {
      if (!(alias in node)) continue;
      if (!(name in node)) node[name] = node[alias];
      delete node[alias];
    }
  }
}

/** The schema of an object's member: its property, else the additionalProperties schema. */
export function memberSchema(s: Schema | undefined, key: string): Schema | undefined {
  if (!s) return undefined;
  const prop = s.properties?.[key];
  if (prop) return prop;
  return isObj(s.additionalProperties) ? s.additionalProperties as Schema : undefined;
}

export const isNullable = (s: Schema | undefined): boolean => s?.nullable === true;
export const preservesUnknown = (s: Schema | undefined): boolean => s?.[PRESERVE_UNKNOWN_FIELDS] === true;
export const isEmbedded = (s: Schema | undefined): boolean => s?.[EMBEDDED_RESOURCE] === true;
export const isIntOrString = (s: Schema | undefined): boolean => s?.[INT_OR_STRING] === true;

/** A JSON value's type name as the schema validator words it. */
export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** For list-type map lists: the old item with the same keys as a new item (undefined when none). */
export function keyedItems(keys: readonly string[], old: readonly unknown[]): (item: unknown) => unknown {
  const keyOf = (x: unknown): string => JSON.stringify(keys.map((k) => (isObj(x) ? x[k] : undefined) ?? null));
  const byKey = new Map(old.map((x) => [keyOf(x), x]));
  return (item) => byKey.get(keyOf(item));
}
