// The per-version parts of a CustomResourceDefinition besides its schema:
// printer columns, selectable fields, the status and scale subresources and
// the deprecation warning.
import type { StatusCause } from '../apimachinery/status.js';
import { duplicate, invalid, required, tooMany } from '../registry/causes.js';
import { asObj, isObject, type Obj } from '../registry/values.js';
import { parseFieldPath } from './rules-fieldpath.js';
import { normalizeSchema, type Schema } from './structural.js';

const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const MAX_SELECTABLE_FIELDS = 8;
const SELECTABLE_TYPES = ['string', 'boolean', 'integer'];
const MAX_DEPRECATION_WARNING = 256;

export function validateColumn(col: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!col.name) out.push(required(`${path}.name`));
  if (!col.type) out.push(required(`${path}.type`, `must be one of ${COLUMN_TYPES.join(',')}`));
  else if (!COLUMN_TYPES.includes(col.type as string)) out.push(invalid(`${path}.type`, col.type, `must be one of ${COLUMN_TYPES.join(',')}`));
  if (col.format && !COLUMN_FORMATS.includes(col.format as string)) out.push(invalid(`${path}.format`, col.format, `must be one of ${COLUMN_FORMATS.join(',')}`));
  if (!col.jsonPath) out.push(required(`${path}.JSONPath`));
  else out.push(...simpleJsonPath(String(col.jsonPath), `${path}.JSONPath`));
  return out;
}

function simpleJsonPath(s: string, path: string): StatusCause[] {
  if (!s) return [invalid(path, s, 'must not be empty')];
  if (!s.startsWith('.')) return [invalid(path, s, 'must be a simple json path starting with .')];
  return [];
}

export function validateSelectableFields(fields: Obj[], rawSchema: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const schema = normalizeSchema(rawSchema);
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const at = `${path}[${i}].jsonPath`;
    if (!f.jsonPath) {
      out.push(required(at));
      return;
    }
    const r = parseFieldPath(String(f.jsonPath), schema, false);
    if ('error' in r) {
      out.push(invalid(at, f.jsonPath, `is an invalid path: ${r.error}`));
      return;
    }
    if (r.root === 'metadata') out.push(invalid(at, f.jsonPath, 'must not point to fields in metadata'));
    if (!SELECTABLE_TYPES.includes(r.schema.type as string)) {
      out.push(invalid(at, f.jsonPath, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'));
    }
    if (unique.has(r.path)) out.push(duplicate(at, f.jsonPath));
    else unique.add(r.path);
  });
  if (unique.size > MAX_SELECTABLE_FIELDS) out.push(tooMany(path, unique.size, MAX_SELECTABLE_FIELDS));
  return out;
}

/** The scale paths: under .spec / .status, and of the right type where the schema declares the field. */
export function validateSubresources(subresources: Obj | undefined, rawSchema: unknown, path: string): StatusCause[] {
  const scale = asObj(subresources?.scale);
  if (!scale) return [];
  const schema = isObject(rawSchema) ? normalizeSchema(rawSchema) : undefined;
  const out: StatusCause[] = [];
  const check = (key: string, prefixes: string[], where: string, type: string, optional = false): void => {
    const value = scale[key];
    const at = `${path}.scale.${key}`;
    if (value === undefined || value === null || value === '') {
      if (!optional) out.push(required(at));
      return;
    }
    const text = String(value);
    const simple = simpleJsonPath(text, at);
    if (simple.length) out.push(...simple);
    else if (!prefixes.some((p) => text.startsWith(p))) out.push(invalid(at, text, `should be a json path under ${where}`));
    else out.push(...declaredType(schema, text, type, at));
  };
  check('specReplicasPath', ['.spec.'], '.spec', 'integer');
  check('statusReplicasPath', ['.status.'], '.status', 'integer');
  check('labelSelectorPath', ['.spec.', '.status.'], 'either .spec or .status', 'string', true);
  return out;
}

/** A path into the schema that names a declared field of another type. */
function declaredType(schema: Schema | undefined, jsonPath: string, type: string, at: string): StatusCause[] {
  let s: Schema | undefined = schema;
  for (const key of jsonPath.split('.').filter(Boolean)) {
    s = s?.properties?.[key];
    if (!s) return [];
  }
  return typeof s?.type === 'string' && s.type !== type ? [invalid(at, jsonPath, `must point to a field of type ${type}, not ${s.type}`)] : [];
}

/** Printable as Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

export function validateDeprecationWarning(version: Obj, path: string): StatusCause[] {
  const warning = version.deprecationWarning;
  if (warning === undefined || warning === null) return [];
  const at = `${path}.deprecationWarning`;
  if (version.deprecated !== true) return [invalid(at, warning, 'can only be set for deprecated versions')];
  const text = String(warning);
  const out: StatusCause[] = [];
  // Lengths and indexes in UTF-8 bytes, as the platform counts them.
  if (Buffer.byteLength(text) > MAX_DEPRECATION_WARNING) out.push(invalid(at, text, `must be <= ${MAX_DEPRECATION_WARNING} characters long`));
  if (!text) out.push(invalid(at, text, 'must not be an empty string'));
  let offset = 0;
  for (const ch of text) {
    if (!PRINTABLE.test(ch)) {
      out.push(invalid(at, text, `must only contain printable UTF-8 characters; non-printable character found at index ${offset}`));
      break;
    }
    offset += Buffer.byteLength(ch);
  }
  return out;
}
