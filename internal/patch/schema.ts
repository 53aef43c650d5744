// The merge-relevant view of a kind's schema: which values are maps (structs
// included), lists and scalars, how each merges (atomic, set, map with keys,
// granular) and, for strategic merge, the patch strategy and merge key of each
// field. Built lazily from the OpenAPI definitions and cached per schema node.
import { extension } from '../names/index.js';
import { resolve, schemaFor, type GroupVersionKind, type Schema } from '../registry/openapi.js';

const LIST_TYPE = extension('list-type');
const LIST_MAP_KEYS = extension('list-map-keys');
const MAP_TYPE = extension('map-type');
const PATCH_STRATEGY = extension('patch-strategy');
const PATCH_MERGE_KEY = extension('patch-merge-key');
const INT_OR_STRING = extension('int-or-string');

export type Relation = 'atomic' | 'granular' | 'set' | 'map';

export interface TypeNode {
  /** `untyped` takes its shape from the value: maps granular, lists atomic. */
  kind: 'scalar' | 'map' | 'list' | 'untyped';
  /** Lists: atomic, set or map; maps and structs: atomic or granular. */
  relation: Relation;
  /** The key fields of a list of type map. */
  keys: string[];
  /** Values the server defaults key fields to when an item omits them. */
  keyDefaults: Record<string, unknown>;
  /** Strategic merge: the strategies (`merge`, `replace`, `retainKeys`) and merge key of the field. */
  strategy: string[];
  mergeKey?: string;
  /** A declared struct field. */
  field(name: string): TypeNode | undefined;
  /** The type of list items and of map entries that are not declared fields. */
  element(): TypeNode;
}

const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean']);

/** Defaults of list-map key fields the upstream schemas declare outside OpenAPI v2. */
const KEY_DEFAULTS: Record<string, Record<string, unknown>> = {
  '.core.v1.ContainerPort': { protocol: 'TCP' },
  '.core.v1.ServicePort': { protocol: 'TCP' },
};

function node(kind: TypeNode['kind'], relation: Relation, extra: Partial<TypeNode> = {}): TypeNode {
  return {
    kind, relation, keys: [], keyDefaults: {}, strategy: [],
    field: () => undefined, element: () => UNTYPED, ...extra,
  };
}

export const UNTYPED: TypeNode = node('untyped', 'granular');
const SCALAR: TypeNode = node('scalar', 'atomic');
const UNTYPED_LIST: TypeNode = node('list', 'atomic');
const UNTYPED_MAP: TypeNode = node('map', 'granular');

const cache = new WeakMap<Schema, TypeNode>();

/** The type of a value described by `schema` (a property schema, possibly a `$ref` with markers). */
export function typeOf(schema: Schema): TypeNode {
  let t = cache.get(schema);
  if (!t) {
    t = build(schema);
    cache.set(schema, t);
  }
  return t;
}

/** The type of a built-in kind; undefined for kinds without a built-in schema (custom resources). */
export function rootType(gvk: GroupVersionKind): TypeNode | undefined {
  const schema = schemaFor(gvk);
  return schema ? typeOf(schema) : undefined;
}

/** Markers on the property win over those on the definition it refers to. */
function effectiveSchema(prop: Schema): Schema {
  const own = Object.fromEntries(Object.entries(prop).filter(([k]) => k.startsWith('x-')));
  return { ...resolve(prop), ...own };
}

function build(prop: Schema): TypeNode {
  const s = effectiveSchema(prop);
  const strategy = String(s[PATCH_STRATEGY] ?? '').split(',').map((x) => x.trim()).filter(Boolean);
  const mergeKey = typeof s[PATCH_MERGE_KEY] === 'string' ? (s[PATCH_MERGE_KEY] as string) : undefined;
  const common = { strategy, mergeKey };
  const type = s.type ?? (s.properties ? 'object' : s.items ? 'array' : undefined);
  if (s[INT_OR_STRING] === true || (type && SCALAR_TYPES.has(type))) return { ...SCALAR, ...common };
  if (type === 'array' && s.items) return listNode(s, s.items, common);
  if (type === 'object') return mapNode(s, common);
  return { ...UNTYPED, ...common };
}

function listNode(s: Schema, items: Schema, common: Partial<TypeNode>): TypeNode {
  const element = () => typeOf(items);
  const declared = s[LIST_TYPE];
  const mergeStrategy = common.strategy!.includes('merge');
  let relation: Relation = 'atomic';
  if (declared === 'map' || declared === 'set' || declared === 'atomic') relation = declared;
  else if (mergeStrategy) relation = common.mergeKey ? 'map' : 'set';
  const keys = relation === 'map' ? ((s[LIST_MAP_KEYS] as string[] | undefined) ?? (common.mergeKey ? [common.mergeKey] : [])) : [];
  const ref = typeof items.$ref === 'string' ? items.$ref : '';
  const keyDefaults = Object.entries(KEY_DEFAULTS).find(([suffix]) => ref.endsWith(suffix))?.[1] ?? {};
  return node('list', relation, { ...common, keys, keyDefaults, element });
}

function mapNode(s: Schema, common: Partial<TypeNode>): TypeNode {
  const props = s.properties ?? {};
  const additional = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
  const relation: Relation = s[MAP_TYPE] === 'atomic' ? 'atomic' : 'granular';
  if (Object.keys(props).length === 0 && !additional) {
    return relation === 'atomic' ? node('map', 'atomic', common) : { ...UNTYPED, ...common };
  }
  // Fields the schema does not declare (preserved unknown fields, or data the schema lags behind) are walked untyped.
  const element = additional ? () => typeOf(additional) : () => UNTYPED;
  return node('map', relation, {
    ...common,
    field: (name) => (Object.hasOwn(props, name) ? typeOf(props[name]) : undefined),
    element,
  });
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The type a value is walked with: untyped nodes take the value's shape, and a
 * value whose shape contradicts its schema is treated as a scalar (a leaf).
 */
export function shapeOf(t: TypeNode, v: unknown): TypeNode {
  if (t.kind === 'untyped') return Array.isArray(v) ? UNTYPED_LIST : isPlainObject(v) ? UNTYPED_MAP : SCALAR;
  if (v === undefined || v === null) return t;
  if (t.kind === 'map' && !isPlainObject(v)) return SCALAR;
  if (t.kind === 'list' && !Array.isArray(v)) return SCALAR;
  if (t.kind === 'scalar' && typeof v === 'object') return shapeOf(UNTYPED, v);
  return t;
}
