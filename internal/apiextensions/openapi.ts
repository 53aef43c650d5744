// The OpenAPI a CRD version publishes, as the platform's CRD OpenAPI builder makes it:
// the version's structural schema with `metadata` a reference to ObjectMeta and
// `apiVersion`/`kind` described as TypeMeta's, the same for every embedded resource,
// `x-svc-int-or-string` unfolded into its anyOf, and the kind's group-version-kind;
// beside it the list kind. The Swagger 2.0 form drops what kubectl's v2 reader cannot
// take (junctors, nullable types, the insides of fields that keep unknown fields).
// References are written `#/definitions/...`, as in the shared definitions.
import type { ApiObject } from '../apimachinery/meta.js';
import type { Schema } from '../apimachinery/schema.js';
import { DOMAIN, extension } from '../names/index.js';
import { asObj, isObject, objects, str, type Obj } from '../registry/values.js';
import { normalizeSchema } from './structural.js';

const REF = '#/definitions/';
const META = `${DOMAIN.split('.').reverse().join('.')}.apimachinery.pkg.apis.meta.v1.`;
export const OBJECT_META_REF = `${REF}${META}ObjectMeta`;
export const LIST_META_REF = `${REF}${META}ListMeta`;

const GVK = extension('group-version-kind');
const PRESERVE_UNKNOWN = extension('preserve-unknown-fields');
const EMBEDDED = extension('embedded-resource');
const INT_OR_STRING = extension('int-or-string');

/** The keywords a structural schema keeps; everything else (`example`, `externalDocs`, ...) is not published. */
const STRUCTURAL_KEYS = new Set([
  'type', 'format', 'title', 'description', 'default', 'nullable', 'enum', 'maximum', 'exclusiveMaximum', 'minimum',
  'exclusiveMinimum', 'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems', 'multipleOf',
  'maxProperties', 'minProperties', 'required', 'allOf', 'oneOf', 'anyOf', 'not', 'properties', 'items', 'additionalProperties',
  PRESERVE_UNKNOWN, EMBEDDED, INT_OR_STRING, extension('list-type'), extension('list-map-keys'), extension('map-type'),
  extension('validations'),
]);
const JUNCTORS = ['allOf', 'oneOf', 'anyOf', 'not'];

const TYPE_META = {
  apiVersion: 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.',
  kind: 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase.',
};
const OBJECT_METADATA = "Standard object's metadata.";
const LIST_METADATA = "Standard list metadata.";

/** What names a CRD version's kind in OpenAPI. */
export interface CustomKindNames {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
}

/** The definition name of a custom kind: the group reversed, then version and kind (`com.example.v1.Widget`). */
export const definitionName = (group: string, version: string, kind: string): string =>
  [...group.split('.').reverse(), version, kind].join('.');

/** The names of a CRD's version from its spec. */
export function customKindNames(crd: ApiObject, version: string): CustomKindNames {
  const spec = asObj(crd.spec) ?? {};
  const names = asObj(spec.names) ?? {};
  const kind = str(names.kind) ?? '';
  return { group: str(spec.group) ?? '', version, kind, listKind: str(names.listKind) ?? `${kind}List`, plural: str(names.plural) ?? '' };
}

/** The `openAPIV3Schema` of a served version, undefined when it has none. */
export function versionSchema(crd: ApiObject, version: string): Schema | undefined {
  const v = objects(asObj(crd.spec)?.versions).find((x) => x.name === version);
  return asObj(asObj(v?.schema)?.openAPIV3Schema) as Schema | undefined;
}

/** The kind's schema as OpenAPI v3 publishes it (and server-side apply reads it); extensions in the `x-svc-*` spelling. */
export function publishedSchema(names: CustomKindNames, openAPIV3Schema: Schema | undefined): Schema {
  const gvk = { [GVK]: [{ group: names.group, version: names.version, kind: names.kind }] };
  if (!openAPIV3Schema) return { type: 'object', ...gvk };
  const root = structural(normalizeSchema(openAPIV3Schema));
  root.properties = { ...root.properties, ...typeMetaProperties(), metadata: { description: OBJECT_METADATA, $ref: OBJECT_META_REF } };
  return { ...root, ...gvk };
}

/** The list kind's schema: items of the kind, ListMeta, TypeMeta. */
export function publishedListSchema(names: CustomKindNames): Schema {
  return {
    description: `${names.listKind} is a list of ${names.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      ...typeMetaProperties(),
      items: { description: `List of ${names.plural}.`, type: 'array', items: { $ref: REF + definitionName(names.group, names.version, names.kind) } },
      metadata: { description: LIST_METADATA, $ref: LIST_META_REF },
    },
    [GVK]: [{ group: names.group, version: names.version, kind: names.listKind }],
  };
}

/** The kind and list definitions of one CRD version, by definition name, in v3 or Swagger 2.0 form. */
export function customDefinitions(names: CustomKindNames, schema: Schema, v2: boolean): Record<string, Schema> {
  return {
    [definitionName(names.group, names.version, names.kind)]: v2 ? toOpenAPIV2(schema) : schema,
    [definitionName(names.group, names.version, names.listKind)]: publishedListSchema(names),
  };
}

const typeMetaProperties = (): Record<string, Schema> => ({
  apiVersion: { description: TYPE_META.apiVersion, type: 'string' },
  kind: { description: TYPE_META.kind, type: 'string' },
});

/** A copy of a schema node keeping the structural keywords, int-or-string unfolded, embedded resources completed. */
function structural(node: Schema): Schema {
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) {
    if (!STRUCTURAL_KEYS.has(k)) continue;
    if (k === 'properties' && isObject(v)) out.properties = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, structural(asObj(s) ?? {})]));
    else if ((k === 'items' || k === 'additionalProperties' || k === 'not') && isObject(v)) out[k] = structural(v);
    else if ((k === 'allOf' || k === 'oneOf' || k === 'anyOf') && Array.isArray(v)) out[k] = v.map((s) => structural(asObj(s) ?? {}));
    else out[k] = structuredClone(v);
  }
  if (out[INT_OR_STRING] === true) unfoldIntOrString(out);
  if (out[EMBEDDED] === true) {
    out.properties = { ...out.properties, ...typeMetaProperties(), metadata: { description: OBJECT_METADATA, $ref: OBJECT_META_REF } };
    out.required = [...new Set([...(out.required ?? []), 'kind', 'apiVersion'])];
  }
  return out;
}

const INT_OR_STRING_ANY_OF = (): Schema[] => [{ type: 'integer' }, { type: 'string' }];
const isIntOrStringAnyOf = (v: unknown): boolean => Array.isArray(v) && v.length === 2
  && (v as Obj[]).every((s, i) => s.type === ['integer', 'string'][i] && Object.keys(s).length === 1);

/** `x-svc-int-or-string` as the anyOf of integer and string, unless the schema already says so. */
function unfoldIntOrString(s: Schema): void {
  if (isIntOrStringAnyOf(s.anyOf)) return;
  const allOf = Array.isArray(s.allOf) ? s.allOf as Schema[] : [];
  if (allOf.length && isIntOrStringAnyOf(allOf[0].anyOf)) return;
  if (s.anyOf === undefined) s.anyOf = INT_OR_STRING_ANY_OF();
  else s.allOf = [{ anyOf: INT_OR_STRING_ANY_OF() }, ...allOf];
}

/** The Swagger 2.0 form of a published schema; a kind that keeps unknown fields at its root is only an object. */
export function toOpenAPIV2(schema: Schema): Schema {
  if (schema[PRESERVE_UNKNOWN] === true) return { type: 'object', [GVK]: schema[GVK] };
  return v2Node(schema);
}

function v2Node(node: Schema): Schema {
  const s: Schema = { ...node };
  for (const j of JUNCTORS) delete s[j];
  if (s.nullable === true) {
    delete s.type; delete s.nullable; delete s.items; delete s.properties;
  }
  if (s[PRESERVE_UNKNOWN] === true) { delete s.items; delete s.properties; }
  if (s.type === 'array' && !s.items) delete s.type;
  if (s[PRESERVE_UNKNOWN] === true && s.type === 'object') delete s.type;
  if (s.properties) {
    const nullable = Object.entries(s.properties).filter(([, p]) => p.nullable === true).map(([name]) => name);
    if (s.required && nullable.length) s.required = s.required.filter((r) => !nullable.includes(r));
    s.properties = Object.fromEntries(Object.entries(s.properties).map(([name, p]) => [name, v2Node(p)]));
  }
  if (isObject(s.additionalProperties)) {
    if ((s.additionalProperties as Schema).nullable === true) delete s.required;
    s.additionalProperties = v2Node(s.additionalProperties as Schema);
  }
  if (s.items) s.items = v2Node(s.items);
  if (s.required?.length === 0) delete s.required;
  return s;
}
