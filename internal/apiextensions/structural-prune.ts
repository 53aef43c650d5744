// What decoding a custom object does before validation: fields the schema does
// not know are dropped (kept under x-svc-preserve-unknown-fields), nulls the
// schema does not allow are dropped unless a default replaces them, defaults
// fill what is missing, and the metadata of the object and of every embedded
// resource is coerced to ObjectMeta.
import type { StatusCause } from '../apimachinery/status.js';
import { checkSchema } from '../registry/schemacheck.js';
import { definitions, type Schema } from '../registry/openapi.js';
import { isObject } from '../registry/values.js';
import { isEmbedded, isNullable, memberSchema, preservesUnknown } from './structural.js';

/** Members every resource (and embedded resource) has whatever its schema says. */
const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);
const OBJECT_META_SUFFIX = '.apimachinery.pkg.apis.meta.v1.ObjectMeta';

let objectMeta: Schema | undefined;
/** The built-in ObjectMeta definition, which custom objects' metadata follows. */
export function objectMetaSchema(): Schema {
  if (!objectMeta) {
    const defs = definitions();
    const name = Object.keys(defs).find((n) => n.endsWith(OBJECT_META_SUFFIX));
    objectMeta = name ? defs[name] : { type: 'object' };
  }
  return objectMeta;
}

export interface PruneReport {
  /** Dropped fields as `.spec.foo`, `.spec.list[0].foo`, `.metadata.foo`. */
  unknownFields: string[];
  /** Metadata members of the wrong type. */
  causes: StatusCause[];
}

interface Walk {
  report?: PruneReport;
  /** Drop what the schema does not know (false: defaults only). */
  prune: boolean;
  /** Fill defaults and drop disallowed nulls (false: pruning only). */
  defaults: boolean;
}

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);
const copy = <T>(v: T): T => (v === undefined ? v : structuredClone(v));

/** Prunes, drops disallowed nulls, defaults and coerces metadata; `obj` is the resource root. */
export function pruneAndDefault(obj: Record<string, unknown>, schema: Schema, report?: PruneReport): void {
  walk(obj, schema, '', { report, prune: true, defaults: true }, true);
}

/** Drops what the schema does not know from any value, and nothing else (the check of a schema's defaults). */
export function pruneValue(value: unknown, schema: Schema, embedded: boolean): void {
  walk(value, schema, '', { prune: true, defaults: false }, embedded);
}

/** Applies defaults only (and coerces nothing), as a read from storage does. */
export function applyDefaultsTo(obj: Record<string, unknown>, schema: Schema): void {
  walk(obj, schema, '', { prune: false, defaults: true }, true);
}

function walk(x: unknown, s: Schema | undefined, path: string, w: Walk, embedded: boolean): void {
  if (Array.isArray(x)) {
    const items = s?.items;
    x.forEach((item, i) => {
      if (w.defaults && item === null && items && !isNullable(items) && items.default !== undefined) x[i] = copy(items.default);
      walk(x[i], items, `${path}[${i}]`, w, isEmbedded(items));
    });
  } else if (isObject(x)) {
    walkObject(x, s, path, w, embedded);
  }
}

function walkObject(x: Record<string, unknown>, s: Schema | undefined, path: string, w: Walk, embedded: boolean): void {
  const keep = !w.prune || preservesUnknown(s);
  for (const key of Object.keys(x)) {
    if (embedded && META_FIELDS.has(key)) continue;
    const member = memberSchema(s, key);
    if (!member) {
      if (!keep) dropUnknown(x, key, path, w);
      continue;
    }
    // A null the schema does not allow goes, unless a default replaces it below.
    if (w.defaults && x[key] === null && !isNullable(member) && member.default === undefined) delete x[key];
  }
  if (w.defaults) fillDefaults(x, s);
  for (const [key, value] of Object.entries(x)) {
    if (embedded && META_FIELDS.has(key)) continue;
    const member = memberSchema(s, key);
    if (member) walk(value, member, join(path, key), w, isEmbedded(member));
  }
  if (embedded && w.prune && w.defaults && x.metadata !== undefined) coerceMetadata(x, join(path, 'metadata'), w);
}

/** Members with a default that are missing, or null where the schema does not allow null, take the default. */
function fillDefaults(x: Record<string, unknown>, s: Schema | undefined): void {
  for (const [key, prop] of Object.entries(s?.properties ?? {})) {
    if (prop.default === undefined) continue;
    if (x[key] === undefined || (x[key] === null && !isNullable(prop))) x[key] = copy(prop.default);
  }
}

function dropUnknown(x: Record<string, unknown>, key: string, path: string, w: Walk): void {
  w.report?.unknownFields.push(`.${join(path, key)}`);
  delete x[key];
}

/** Metadata as ObjectMeta: unknown members dropped and reported, times in their canonical form. */
function coerceMetadata(x: Record<string, unknown>, path: string, w: Walk): void {
  if (x.metadata === null) {
    delete x.metadata;
    return;
  }
  const report = checkSchema(x.metadata, objectMetaSchema(), { path, required: false });
  w.report?.unknownFields.push(...report.unknownFields);
  w.report?.causes.push(...report.causes);
}
