// The OpenAPI v2 definitions of the built-in kinds (shared/openapi/definitions.json),
// loaded once and indexed by group, version and kind.
import { readSharedJson } from '../config/shared.js';
import { extension, upstreamExtension } from '../names/index.js';
import type { Schema } from '../apimachinery/schema.js';

export type { Schema };

interface Definitions {
  definitions: Record<string, Schema>;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

const REF_PREFIX = '#/definitions/';
const GVK_MARKER = extension('group-version-kind');

/**
 * Definitions with a field named `description`, which the shared data lost along
 * with the schema descriptions: PriorityClass, the schemas of custom resources and
 * their printer columns.
 */
const DESCRIPTION_FIELDS = [
  /\.scheduling\.v[0-9a-z]+\.PriorityClass$/, /\.apiextensions\.v1\.JSONSchemaProps$/, /\.apiextensions\.v1\.CustomResourceColumnDefinition$/,
];

const JSON_SCHEMA_PROPS = /\.apiextensions\.v1\.JSONSchemaProps$/;
const EXTENSION_PREFIX = extension('');

/** CRD schemas written for the platform spell each extension `x-kubernetes-*`: kept (the CRD's defaults rename them). */
function addUpstreamExtensions(properties: Record<string, Schema>): void {
  for (const key of Object.keys(properties)) {
    if (key.startsWith(EXTENSION_PREFIX)) properties[upstreamExtension(key.slice(EXTENSION_PREFIX.length))] ??= properties[key];
  }
}

let loaded: { definitions: Record<string, Schema>; byGvk: Map<string, string> } | undefined;
const gvkKey = (g: GroupVersionKind) => `${g.group}/${g.version}/${g.kind}`;

function load() {
  if (loaded) return loaded;
  const { definitions } = readSharedJson<Definitions>('openapi/definitions.json');
  const byGvk = new Map<string, string>();
  for (const [name, schema] of Object.entries(definitions)) {
    if (schema.properties && DESCRIPTION_FIELDS.some((re) => re.test(name))) schema.properties.description ??= { type: 'string' };
    if (schema.properties && JSON_SCHEMA_PROPS.test(name)) addUpstreamExtensions(schema.properties);
    for (const gvk of (schema[GVK_MARKER] as GroupVersionKind[] | undefined) ?? []) {
      if (!byGvk.has(gvkKey(gvk))) byGvk.set(gvkKey(gvk), name);
    }
  }
  loaded = { definitions, byGvk };
  return loaded;
}

/** Every definition by its full name (`io.svc.api.core.v1.ConfigMap`, ...). */
export const definitions = (): Record<string, Schema> => load().definitions;

/** The definition name of a kind, e.g. `io.svc.api.core.v1.ConfigMap`. */
export const definitionNameFor = (gvk: GroupVersionKind): string | undefined => load().byGvk.get(gvkKey(gvk));

/** The schema of a kind, with `$ref`s left for `resolve`. */
export function schemaFor(gvk: GroupVersionKind): Schema | undefined {
  const name = definitionNameFor(gvk);
  return name ? load().definitions[name] : undefined;
}

/** Follows a `$ref` (repeatedly) to the schema it names; other schemas come back as they are. */
export function resolve(schema: Schema): Schema {
  let s = schema;
  for (let depth = 0; s.$ref && depth < 10; depth++) {
    const target = load().definitions[s.$ref.slice(REF_PREFIX.length)];
    if (!target) throw new Error(`unknown schema reference ${s.$ref}`);
    s = target;
  }
  return s;
}
