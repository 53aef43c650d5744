// The types admission policy expressions see: the admission request (fixed),
// and the matched kinds' schemas (from the built-in definitions) that the status
// controller type checks expressions against.
import { INT_OR_STRING, PRESERVE_UNKNOWN_FIELDS, type Schema } from '../../cel/index.js';
import { resolve, schemaFor, type GroupVersionKind } from '../../registry/openapi.js';

const STRING: Schema = { type: 'string' };
const STRINGS: Schema = { type: 'array', items: STRING };
const GVK: Schema = { type: 'object', properties: { group: STRING, version: STRING, kind: STRING } };
const GVR: Schema = { type: 'object', properties: { group: STRING, version: STRING, resource: STRING } };
const ANY: Schema = { [PRESERVE_UNKNOWN_FIELDS]: true };

/** `request` as admission policies see it (upstream's AdmissionRequest, less the objects). */
export const ADMISSION_REQUEST_SCHEMA: Schema = {
  type: 'object',
  properties: {
    uid: STRING, kind: GVK, resource: GVR, subResource: STRING,
    requestKind: GVK, requestResource: GVR, requestSubResource: STRING,
    name: STRING, namespace: STRING, operation: STRING,
    userInfo: {
      type: 'object',
      properties: { username: STRING, uid: STRING, groups: STRINGS, extra: { type: 'object', additionalProperties: STRINGS } },
    },
    dryRun: { type: 'boolean' }, options: ANY,
  },
};

/** A dynamic variable: any JSON. */
export const DYNAMIC: Schema = ANY;

/** Schemas nest at most this deep before they turn dynamic (some definitions are recursive). */
const MAX_DEPTH = 12;

function expand(schema: Schema, depth: number): Schema {
  const s = resolve(schema);
  if (depth > MAX_DEPTH) return ANY;
  if (s.format === 'int-or-string') return { [INT_OR_STRING]: true };
  const out: Schema = { ...s };
  delete out.$ref;
  if (s.properties) out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, expand(v, depth + 1)]));
  if (s.items) out.items = expand(s.items, depth + 1);
  if (typeof s.additionalProperties === 'object') out.additionalProperties = expand(s.additionalProperties, depth + 1);
  // A definition without a type (e.g. RawExtension, JSON) holds anything.
  if (!out.type && !out.properties) return ANY;
  return out;
}

const expanded = new Map<string, Schema | undefined>();

/** The full schema of a built-in kind, references expanded; undefined for kinds without one. */
export function kindSchema(gvk: GroupVersionKind): Schema | undefined {
  const key = `${gvk.group}/${gvk.version}/${gvk.kind}`;
  if (!expanded.has(key)) {
    const schema = schemaFor(gvk);
    expanded.set(key, schema ? expand(schema, 0) : undefined);
  }
  return expanded.get(key);
}
