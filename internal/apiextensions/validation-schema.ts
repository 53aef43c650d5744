// The checks of one `openAPIV3Schema` of a CustomResourceDefinition: the
// OpenAPI keywords a CRD may use, the x-svc-* extensions' rules, structural
// schema rules, defaults that validate and are pruned, and the validation
// rules' compilation and estimated cost.
import type { StatusCause } from '../apimachinery/status.js';
import { forbidden, invalid, notSupported, required } from '../registry/causes.js';
import { isObject } from '../registry/values.js';
import { compileRules, ruleShapeCauses } from './rules.js';
import { convertible, validateStructural } from './structural-check.js';
import {
  EMBEDDED_RESOURCE, LIST_MAP_KEYS, LIST_TYPE, MAP_TYPE, normalizeSchema, PRESERVE_UNKNOWN_FIELDS, type Schema, VALIDATIONS,
} from './structural.js';
import { validateDefaults } from './validation-defaults.js';

const TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);
/** The root keywords a schema may have when the status subresource is enabled (Go field names in the message). */
const ROOT_WITH_STATUS: Record<string, string> = {
  description: 'Description', type: 'Type', format: 'Format', title: 'Title', maximum: 'Maximum', exclusiveMaximum: 'ExclusiveMaximum',
  minimum: 'Minimum', exclusiveMinimum: 'ExclusiveMinimum', maxLength: 'MaxLength', minLength: 'MinLength', pattern: 'Pattern',
  maxItems: 'MaxItems', minItems: 'MinItems', uniqueItems: 'UniqueItems', multipleOf: 'MultipleOf', required: 'Required', items: 'Items',
  properties: 'Properties', externalDocs: 'ExternalDocs', example: 'Example', [PRESERVE_UNKNOWN_FIELDS]: 'XPreserveUnknownFields', [VALIDATIONS]: 'XValidations',
};

interface Rules {
  allowDefaults: boolean;
  defaultsReason?: string;
  insideMeta: boolean;
}

const list = (v: unknown): Schema[] => (Array.isArray(v) ? v.filter(isObject) as Schema[] : []);
const isZero = (v: unknown): boolean => v === undefined || v === null || v === false || v === '' || v === 0
  || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);

/** Causes for `<path>.openAPIV3Schema` (path: `spec.validation` or `spec.versions[i].schema`); `unchanged`: an update keeps
 * this schema, whose rules then keep compiling whatever limits or features changed since they were stored. */
export function validateSchemaOfVersion(raw: unknown, statusEnabled: boolean, path: string, unchanged = false): StatusCause[] {
  if (!isObject(raw)) return [];
  const schema = normalizeSchema(raw);
  const at = `${path}.openAPIV3Schema`;
  const out: StatusCause[] = [];
  if (statusEnabled) out.push(...rootWithStatus(schema, at));
  if (schema.nullable === true) out.push(forbidden(`${at}.nullable`, 'nullable cannot be true at the root'));
  let structuralOk = false;
  if (convertible(schema)) {
    const structural = validateStructural(at, schema);
    out.push(...structural);
    if (!structural.length) {
      const defaults = validateDefaults(schema, at);
      out.push(...defaults);
      structuralOk = defaults.length === 0;
    }
  }
  const schemaErrors = [...openAPI(schema, at, { allowDefaults: true, insideMeta: false }, true), ...prefixed(ruleShapeCauses(schema), at)];
  out.push(...schemaErrors);
  if (structuralOk && schemaErrors.length === 0) out.push(...prefixed(compileRules(schema, { stored: unchanged }).causes, at));
  if (!convertible(schema) && out.length === 0) out.push(invalid(at, '', "OpenAPIV3Schema 'items' must be a schema, but is an array"));
  return out;
}

/** Causes whose fields are relative to a schema root, placed under `at`. */
function prefixed(causes: readonly StatusCause[], at: string): StatusCause[] {
  return causes.map((c) => ({ ...c, field: !c.field ? at : c.field.startsWith('[') ? `${at}${c.field}` : `${at}.${c.field}` }));
}

function rootWithStatus(schema: Schema, at: string): StatusCause[] {
  for (const [key, value] of Object.entries(schema)) {
    if (isZero(value)) continue;
    if (key === 'type') {
      if (value !== 'object') return [invalid(`${at}.type`, value, 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled')];
      continue;
    }
    if (!ROOT_WITH_STATUS[key]) {
      return [invalid(at, schema, `only [${[...new Set(Object.values(ROOT_WITH_STATUS))].join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`)];
    }
  }
  return [];
}

/** The keywords and extensions of one node and of every node below it. */
function openAPI(s: Schema, path: string, rules: Rules, isRoot: boolean): StatusCause[] {
  const out = keywords(s, path, rules);
  if (s.uniqueItems === true) out.push(forbidden(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  const props = isObject(s.properties) ? s.properties as Record<string, Schema> : {};
  if (s.additionalProperties !== undefined) {
    if (Object.keys(props).length && (s.additionalProperties !== true)) {
      out.push(forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
    }
    const sub = rules.insideMeta ? { ...rules, allowDefaults: false, defaultsReason: 'inside additionalProperties applying to object metadata' } : rules;
    if (isObject(s.additionalProperties)) out.push(...openAPI(s.additionalProperties as Schema, `${path}.additionalProperties`, sub, false));
  }
  for (const [name, prop] of Object.entries(props)) {
    let sub = rules;
    if ((isRoot || s[EMBEDDED_RESOURCE] === true) && META_FIELDS.has(name)) {
      sub = { ...sub, insideMeta: true };
      if (isRoot) sub = { ...sub, allowDefaults: false, defaultsReason: `in top-level ${name}` };
    }
    if (isObject(prop)) out.push(...openAPI(prop, `${path}.properties[${name}]`, sub, false));
  }
  if (isObject(s.not)) out.push(...openAPI(s.not as Schema, `${path}.not`, rules, false));
  for (const key of ['allOf', 'oneOf', 'anyOf']) list(s[key]).forEach((sub, i) => out.push(...openAPI(sub, `${path}.${key}[${i}]`, rules, false)));
  if (isObject(s.definitions)) for (const [k, d] of Object.entries(s.definitions)) if (isObject(d)) out.push(...openAPI(d, `${path}.definitions[${k}]`, rules, false));
  if (isObject(s.items)) out.push(...openAPI(s.items as Schema, `${path}.items`, rules, false));
  else list(s.items).forEach((sub, i) => out.push(...openAPI(sub, `${path}.items[${i}]`, rules, false)));
  out.push(...extensions(s, path));
  return out;
}

/** What the platform's CRD schemas may not hold at any node. */
function keywords(s: Schema, path: string, rules: Rules): StatusCause[] {
  const out: StatusCause[] = [];
  if (typeof s.type === 'string' && s.type && !TYPES.includes(s.type)) out.push(notSupported(`${path}.type`, s.type, TYPES));
  if (s.default !== undefined && !rules.allowDefaults) {
    out.push(forbidden(`${path}.default`, `must not be set${rules.defaultsReason ? ` ${rules.defaultsReason}` : ''}`));
  }
  if (s.id !== undefined && s.id !== '') out.push(forbidden(`${path}.id`, 'id is not supported'));
  if (s.additionalItems !== undefined) out.push(forbidden(`${path}.additionalItems`, 'additionalItems is not supported'));
  if (isObject(s.patternProperties) && Object.keys(s.patternProperties).length) out.push(forbidden(`${path}.patternProperties`, 'patternProperties is not supported'));
  if (isObject(s.definitions) && Object.keys(s.definitions).length) out.push(forbidden(`${path}.definitions`, 'definitions is not supported'));
  if (s.dependencies !== undefined) out.push(forbidden(`${path}.dependencies`, 'dependencies is not supported'));
  if (s.$ref !== undefined) out.push(forbidden(`${path}.$ref`, '$ref is not supported'));
  if (s.type === 'null') out.push(forbidden(`${path}.type`, 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(s.items) && s.items.length) out.push(forbidden(`${path}.items`, 'items must be a schema object and not an array'));
  if (rules.insideMeta && s[EMBEDDED_RESOURCE] === true) out.push(forbidden(`${path}.${EMBEDDED_RESOURCE}`, 'must not be used inside of resource meta'));
  return out;
}

/** x-svc-preserve-unknown-fields, -map-type, -list-type and -list-map-keys. */
function extensions(s: Schema, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const type = typeof s.type === 'string' ? s.type : '';
  const items = isObject(s.items) ? s.items as Schema : undefined;
  if (s[PRESERVE_UNKNOWN_FIELDS] === false) out.push(invalid(`${path}.${PRESERVE_UNKNOWN_FIELDS}`, false, 'must be true or undefined'));
  const mapType = s[MAP_TYPE];
  if (mapType !== undefined && type !== 'object') {
    out.push(type ? invalid(`${path}.type`, type, `must be object if ${MAP_TYPE} is specified`) : required(`${path}.type`, `must be object if ${MAP_TYPE} is specified`));
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') out.push(notSupported(`${path}.${MAP_TYPE}`, mapType, ['atomic', 'granular']));
  const listType = s[LIST_TYPE];
  if (listType !== undefined && type !== 'array') {
    out.push(type ? invalid(`${path}.type`, type, `must be array if ${LIST_TYPE} is specified`) : required(`${path}.type`, `must be array if ${LIST_TYPE} is specified`));
  } else if (listType === 'set' && items) {
    if (items.type === 'array' && items[LIST_TYPE] !== undefined && items[LIST_TYPE] !== 'atomic') {
      out.push(invalid(`${path}.items.${LIST_TYPE}`, items[LIST_TYPE], `must be atomic as item of a list with ${LIST_TYPE}=set`));
    } else if (items.type === 'object' && items[MAP_TYPE] !== 'atomic') {
      out.push(invalid(`${path}.items.${MAP_TYPE}`, items[LIST_TYPE] ?? null, `must be atomic as item of a list with ${LIST_TYPE}=set`));
    }
  }
  if (listType !== undefined && listType !== 'atomic' && listType !== 'set' && listType !== 'map') out.push(notSupported(`${path}.${LIST_TYPE}`, listType, ['atomic', 'set', 'map']));
  const keys = Array.isArray(s[LIST_MAP_KEYS]) ? s[LIST_MAP_KEYS] as string[] : [];
  if (keys.length) {
    if (listType === undefined) out.push(required(`${path}.${LIST_TYPE}`, `must be map if ${LIST_MAP_KEYS} is non-empty`));
    else if (listType !== 'map') out.push(invalid(`${path}.${LIST_TYPE}`, listType, `must be map if ${LIST_MAP_KEYS} is non-empty`));
  }
  if (listType === 'map') out.push(...mapList(s, items, keys, path));
  if ((listType === 'set' || listType === 'map') && items) out.push(...mapListKeysMapSet(items, keys, String(listType), path));
  return out;
}

function mapList(s: Schema, items: Schema | undefined, keys: string[], path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!keys.length) out.push(required(`${path}.${LIST_MAP_KEYS}`, `must not be empty if ${LIST_TYPE} is map`));
  if (s.items === undefined) out.push(required(`${path}.items`, `must have a schema if ${LIST_TYPE} is map`));
  if (Array.isArray(s.items)) out.push(invalid(`${path}.items`, s.items, `must only have a single schema if ${LIST_TYPE} is map`));
  if (items && items.type !== 'object') out.push(invalid(`${path}.items.type`, items.type ?? '', `must be object if parent array's ${LIST_TYPE} is map`));
  if (items?.type === 'object') {
    const seen = new Set<string>();
    const props = isObject(items.properties) ? items.properties as Record<string, Schema> : {};
    for (const k of keys) {
      const prop = props[k];
      if (prop) {
        if (prop.type === 'array' || prop.type === 'object') {
          out.push(invalid(`${path}.items.properties[${k}].type`, items.type, `must be a scalar type if parent array's ${LIST_TYPE} is map`));
        }
      } else {
        out.push(invalid(`${path}.${LIST_MAP_KEYS}`, keys, 'entries must all be names of item properties'));
      }
      if (seen.has(k)) out.push(invalid(`${path}.${LIST_MAP_KEYS}`, keys, 'must not contain duplicate entries'));
      seen.add(k);
    }
  }
  return out;
}

/** Items of set and map lists are never null; map keys are required or defaulted, and never null. */
function mapListKeysMapSet(items: Schema, keys: string[], listType: string, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (items.nullable === true) out.push(forbidden(`${path}.items.nullable`, `cannot be nullable when ${LIST_TYPE} is ${listType}`));
  if (listType !== 'map') return out;
  const requiredKeys = new Set(Array.isArray(items.required) ? items.required : []);
  const props = isObject(items.properties) ? items.properties as Record<string, Schema> : {};
  for (const k of keys) {
    const prop = props[k];
    if (!prop) continue;
    if (!requiredKeys.has(k) && prop.default === undefined) {
      out.push(required(`${path}.items.properties[${k}].default`, `this property is in ${LIST_MAP_KEYS}, so it must have a default or be a required property`));
    }
    if (prop.nullable === true) out.push(forbidden(`${path}.items.properties[${k}].nullable`, `this property is in ${LIST_MAP_KEYS}, so it cannot be nullable`));
  }
  return out;
}
