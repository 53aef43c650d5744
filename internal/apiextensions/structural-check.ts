// The rules of structural schemas: every node has a type (but under
// x-svc-preserve-unknown-fields and x-svc-int-or-string), value validations
// (allOf, anyOf, oneOf, not) add checks to fields the schema declares but
// never types, defaults or extensions of their own, and `metadata` at the root
// may only restrict name and generateName.
import type { StatusCause } from '../apimachinery/status.js';
import { forbidden, invalid, required } from '../registry/causes.js';
import { isObject } from '../registry/values.js';
import { patternError } from './validation-values.js';
import {
  EMBEDDED_RESOURCE, INT_OR_STRING, LIST_MAP_KEYS, LIST_TYPE, MAP_TYPE, PRESERVE_UNKNOWN_FIELDS, type Schema, VALIDATIONS,
} from './structural.js';

type Level = 'root' | 'item' | 'field';

/** Keywords a structural schema cannot hold at all (the walk of the OpenAPI rules reports them). */
const UNCONVERTIBLE = ['id', '$schema', '$ref', 'patternProperties', 'dependencies', 'additionalItems', 'definitions'];

const props = (s: Schema): [string, Schema][] => Object.entries(isObject(s.properties) ? s.properties as Record<string, Schema> : {});
const extra = (s: Schema): Schema | undefined => (isObject(s.additionalProperties) ? s.additionalProperties as Schema : undefined);
const list = (v: unknown): Schema[] => (Array.isArray(v) ? v.filter(isObject) as Schema[] : []);

/** Whether the schema has a structural form at all (items a single schema, no unsupported keywords). */
export function convertible(s: unknown): boolean {
  if (!isObject(s)) return true;
  if (UNCONVERTIBLE.some((k) => s[k] !== undefined) || Array.isArray(s.items)) return false;
  const children = [s.items, s.additionalProperties, s.not, ...list(s.allOf), ...list(s.anyOf), ...list(s.oneOf), ...Object.values(isObject(s.properties) ? s.properties : {})];
  return children.every(convertible);
}

/** The structural rules, causes sorted by their text as the platform sorts them. */
export function validateStructural(path: string, s: Schema): StatusCause[] {
  const causes = [...invariants(s, 'root', path), ...completeness(s, path)];
  const text = (c: StatusCause) => `${c.field}: ${c.message}`;
  return causes.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}

function invariants(s: Schema | undefined, level: Level, path: string): StatusCause[] {
  if (!s) return [];
  const out: StatusCause[] = [];
  const items = isObject(s.items) ? s.items as Schema : undefined;
  if (s.type === 'array' && !items) out.push(required(`${path}.items`, 'must be specified'));
  out.push(...invariants(items, 'item', `${path}.items`));
  for (const [k, v] of props(s)) out.push(...invariants(v, 'field', `${path}.properties[${k}]`));
  if (s.additionalProperties !== undefined) {
    if (level === 'root') out.push(forbidden(`${path}.additionalProperties`, 'must not be used at the root'));
    out.push(...invariants(extra(s), 'field', `${path}.additionalProperties`));
  }
  if (s[INT_OR_STRING] === true && s[PRESERVE_UNKNOWN_FIELDS] === true) out.push(invalid(`${path}.${PRESERVE_UNKNOWN_FIELDS}`, true, `must be false if ${INT_OR_STRING} is true`));
  if (s[INT_OR_STRING] === true && s[EMBEDDED_RESOURCE] === true) out.push(invalid(`${path}.${EMBEDDED_RESOURCE}`, true, `must be false if ${INT_OR_STRING} is true`));
  out.push(...valueValidation(s, isIntOrStringAnyOf(s.anyOf), isIntOrStringAllOf(s), path));
  const type = typeof s.type === 'string' ? s.type : '';
  if (s[EMBEDDED_RESOURCE] === true && type !== 'object') {
    out.push(type ? invalid(`${path}.type`, type, `must be object if ${EMBEDDED_RESOURCE} is true`) : required(`${path}.type`, `must be object if ${EMBEDDED_RESOURCE} is true`));
  } else if (!type && s[INT_OR_STRING] !== true && s[PRESERVE_UNKNOWN_FIELDS] !== true) {
    out.push(required(`${path}.type`, { root: 'must not be empty at the root', item: 'must not be empty for specified array items', field: 'must not be empty for specified object fields' }[level]));
  }
  if (s[EMBEDDED_RESOURCE] === true && s.additionalProperties !== undefined) out.push(forbidden(`${path}.additionalProperties`, `must not be used if ${EMBEDDED_RESOURCE} is set`));
  if (level === 'root' && type && type !== 'object') out.push(invalid(`${path}.type`, type, 'must be object at the root'));
  const checkMetadata = level === 'root' || s[EMBEDDED_RESOURCE] === true;
  const named = Object.fromEntries(props(s));
  for (const f of ['kind', 'apiVersion']) {
    if (named[f] && checkMetadata && named[f].type !== 'string') out.push(invalid(`${path}.properties[${f}].type`, named[f].type ?? '', 'must be string'));
  }
  if (named.metadata) out.push(...metadataInvariants(named.metadata, checkMetadata, level, `${path}.properties[metadata]`));
  if (s[EMBEDDED_RESOURCE] === true && s[PRESERVE_UNKNOWN_FIELDS] !== true && props(s).length === 0) {
    out.push(required(`${path}.properties`, `must not be empty if ${EMBEDDED_RESOURCE} is true without ${PRESERVE_UNKNOWN_FIELDS}`));
  }
  return out;
}

/** At the root, metadata may restrict name and generateName and nothing else. */
function metadataInvariants(s: Schema, checkMetadata: boolean, level: Level, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (checkMetadata && s.type !== 'object') out.push(invalid(`${path}.type`, s.type ?? '', 'must be object'));
  if (level === 'root') {
    const names = props(s).map(([k]) => k);
    const onlyNames = names.every((k) => k === 'name' || k === 'generateName');
    const rest = Object.keys(s).filter((k) => !['type', 'default', 'properties'].includes(k) || (k === 'properties' && !onlyNames));
    if (rest.length) out.push(forbidden(path, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
  }
  return out;
}

const isIntOrStringAnyOf = (anyOf: unknown): boolean => {
  const l = list(anyOf);
  return l.length === 2 && Object.keys(l[0]).join() === 'type' && l[0].type === 'integer' && Object.keys(l[1]).join() === 'type' && l[1].type === 'string';
};
const isIntOrStringAllOf = (s: Schema): boolean => isIntOrStringAnyOf(list(s.allOf)[0]?.anyOf);

/** allOf, anyOf, oneOf and not: checks on values, not types; a pattern must compile. */
function valueValidation(s: Schema, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!skipAnyOf) list(s.anyOf).forEach((v, i) => out.push(...nested(v, false, false, `${path}.anyOf[${i}]`)));
  list(s.allOf).forEach((v, i) => out.push(...nested(v, skipFirstAllOfAnyOf && i === 0, false, `${path}.allOf[${i}]`)));
  list(s.oneOf).forEach((v, i) => out.push(...nested(v, false, false, `${path}.oneOf[${i}]`)));
  if (isObject(s.not)) out.push(...nested(s.not as Schema, false, false, `${path}.not`));
  const error = typeof s.pattern === 'string' ? patternError(s.pattern) : undefined;
  if (error) out.push(invalid(`${path}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${error}`));
  return out;
}

const FORBIDDEN_NESTED: [string, string][] = [
  ['type', 'must be empty to be structural'], ['default', 'must be undefined to be structural'], ['title', 'must be empty to be structural'],
  ['description', 'must be empty to be structural'],
];

function nested(v: Schema, skipAnyOf: boolean, skipAllOfAnyOf: boolean, path: string): StatusCause[] {
  const out = valueValidation(v, skipAnyOf, skipAllOfAnyOf, path);
  if (isObject(v.items)) out.push(...nested(v.items as Schema, false, false, `${path}.items`));
  for (const [k, p] of props(v)) out.push(...nested(p, false, false, `${path}.properties[${k}]`));
  for (const [k, detail] of FORBIDDEN_NESTED) if (v[k] !== undefined && v[k] !== '') out.push(forbidden(`${path}.${k}`, detail));
  if (v.additionalProperties !== undefined) out.push(forbidden(`${path}.additionalProperties`, 'must be undefined to be structural'));
  if (v.nullable === true) out.push(forbidden(`${path}.nullable`, 'must be false to be structural'));
  for (const x of [PRESERVE_UNKNOWN_FIELDS, EMBEDDED_RESOURCE, INT_OR_STRING]) if (v[x] === true) out.push(forbidden(`${path}.${x}`, 'must be false to be structural'));
  if (Array.isArray(v[LIST_MAP_KEYS]) && (v[LIST_MAP_KEYS] as unknown[]).length) out.push(forbidden(`${path}.${LIST_MAP_KEYS}`, 'must be empty to be structural'));
  if (v[LIST_TYPE] !== undefined) out.push(forbidden(`${path}.${LIST_TYPE}`, 'must be undefined to be structural'));
  if (v[MAP_TYPE] !== undefined) out.push(forbidden(`${path}.${MAP_TYPE}`, 'must be undefined to be structural'));
  if (Array.isArray(v[VALIDATIONS]) && (v[VALIDATIONS] as unknown[]).length) out.push(forbidden(`${path}.${VALIDATIONS}`, 'must be empty to be structural'));
  if (props(v).some(([k]) => k === 'metadata')) out.push(forbidden(`${path}.properties[metadata]`, 'must not be specified in a nested context'));
  return out;
}

/** Every field a value validation names is a field of the schema itself. */
function completeness(s: Schema, path: string): StatusCause[] {
  return completenessOf(s, s, path, path);
}

function completenessOf(v: Schema, s: Schema | undefined, sPath: string, vPath: string): StatusCause[] {
  const out: StatusCause[] = [];
  const subs: [Schema, string][] = [
    ...(isObject(v.not) ? [[v.not as Schema, `${vPath}.not`] as [Schema, string]] : []),
    ...list(v.allOf).map((x, i) => [x, `${vPath}.allOf[${i}]`] as [Schema, string]),
    ...list(v.anyOf).map((x, i) => [x, `${vPath}.anyOf[${i}]`] as [Schema, string]),
    ...list(v.oneOf).map((x, i) => [x, `${vPath}.oneOf[${i}]`] as [Schema, string]),
  ];
  for (const [sub, subPath] of subs) out.push(...nestedCompleteness(sub, s, sPath, subPath));
  return out;
}

function nestedCompleteness(v: Schema, s: Schema | undefined, sPath: string, vPath: string): StatusCause[] {
  if (!s) return [required(sPath, `because it is defined in ${vPath}`)];
  const out = completenessOf(v, s, sPath, vPath);
  if (isObject(v.items)) {
    const items = isObject(s.items) ? s.items as Schema : undefined;
    out.push(...(items ? nestedCompleteness(v.items as Schema, items, `${sPath}.items`, `${vPath}.items`) : [required(`${sPath}.items`, `because it is defined in ${vPath}.items`)]));
  }
  const own = Object.fromEntries(props(s));
  for (const [k, p] of props(v)) {
    if (!own[k]) out.push(required(`${sPath}.properties[${k}]`, `because it is defined in ${vPath}.properties[${k}]`));
    else out.push(...nestedCompleteness(p, own[k], `${sPath}.properties[${k}]`, `${vPath}.properties[${k}]`));
  }
  return out;
}
