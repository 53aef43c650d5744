// The schema walker: checks a decoded object against its kind's OpenAPI schema
// (following `$ref`s) the way typed decoding would. It reports wrongly typed
// values and missing required fields as 422 causes, lists the fields the schema
// does not know, and (when pruning) drops them, drops null members, fills
// required numbers and booleans with their zero value and writes numeric
// quantities as strings and times in their canonical form, as a decode and
// re-encode of the typed object does.
import type { StatusCause } from '../apimachinery/status.js';
import { extension } from '../names/index.js';
import { required, typeInvalid, invalid } from './causes.js';
import { resolve, type Schema } from './openapi.js';
import { isObject, type Obj } from './values.js';
import { parseQuantity } from './quantity.js';
import { canonicalTime } from '../apimachinery/protobuf/time.js';

export interface SchemaCheckOptions {
  /** Drop unknown fields and null members, fill required scalars (default true). */
  prune?: boolean;
  /** Report missing required fields (default true). */
  required?: boolean;
  /** Field path of the value checked, e.g. `status` when checking a status alone. */
  path?: string;
}

export interface SchemaReport {
  /** Type errors and missing required fields, as causes of a 422 Invalid. */
  causes: StatusCause[];
  /** Fields the schema does not know, as `.spec.foo` or `.spec.containers[0].foo`, in the order met. */
  unknownFields: string[];
}

const INT_OR_STRING = extension('int-or-string');
const PRESERVE_UNKNOWN = extension('preserve-unknown-fields');
const EMBEDDED = extension('embedded-resource');
const QUANTITY_SUFFIX = '.pkg.api.resource.Quantity';
/** Time fields by their precision: decoding and encoding a `Time` drops the fraction, a `MicroTime` keeps microseconds. */
const TIME_PRECISION: [string, 0 | 6][] = [['.apis.meta.v1.Time', 0], ['.apis.meta.v1.MicroTime', 6]];
/** The expression quantities are reported against, as upstream words it. */
const QUANTITY_FORMAT = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
/** The same strings, matched in linear time: the suffix starts with a letter or sign, so no digit is in doubt. */
const QUANTITY = /^[+-]?[0-9.]+(?:(?:[eEinumkKMGTP]+[-+]?|[-+])[0-9]*)?$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i;
const INT32 = 2 ** 31;

interface Walk {
  prune: boolean;
  required: boolean;
  report: SchemaReport;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
const typeName = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

/** Checks `value` against `schema`; with pruning (the default) the value is changed in place. */
export function checkSchema(value: unknown, schema: Schema, opts: SchemaCheckOptions = {}): SchemaReport {
  const w: Walk = { prune: opts.prune ?? true, required: opts.required ?? true, report: { causes: [], unknownFields: [] } };
  walk(value, schema, opts.path ?? '', w);
  return w.report;
}

function mismatch(w: Walk, path: string, value: unknown, expected: string): void {
  w.report.causes.push(typeInvalid(path, typeName(value), `${path} in body must be of type ${expected}: "${typeName(value)}"`));
}

/** Checks one value; answers the value to keep (a numeric quantity becomes its string). */
function walk(value: unknown, schema: Schema, path: string, w: Walk): unknown {
  if (schema.$ref?.endsWith(QUANTITY_SUFFIX)) return quantity(value, path, w);
  if (w.prune && typeof value === 'string' && schema.$ref) {
    const precision = TIME_PRECISION.find(([suffix]) => schema.$ref!.endsWith(suffix))?.[1];
    const canonical = precision === undefined ? undefined : canonicalTime(value, precision);
    if (canonical !== undefined) return canonical;
  }
  const s = resolve(schema);
  if (s.format === 'int-or-string' || s[INT_OR_STRING] === true) {
    if (!Number.isInteger(value) && typeof value !== 'string') mismatch(w, path, value, 'integer-or-string');
    return value;
  }
  switch (s.type) {
    case 'string': return scalarString(value, s, path, w);
    case 'integer':
      if (!Number.isInteger(value)) mismatch(w, path, value, 'integer');
      else if (s.format === 'int32' && ((value as number) >= INT32 || (value as number) < -INT32)) mismatch(w, path, value, 'int32');
      return value;
    case 'number':
      if (typeof value !== 'number') mismatch(w, path, value, 'number');
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') mismatch(w, path, value, 'boolean');
      return value;
    case 'array':
      if (!Array.isArray(value)) mismatch(w, path, value, 'array');
      else if (s.items) value.forEach((item, i) => { value[i] = walk(item, s.items!, `${path}[${i}]`, w); });
      return value;
    case 'object':
      if (!isObject(value)) mismatch(w, path, value, 'object');
      else walkObject(value, s, path, w);
      return value;
    default:
      return value;
  }
}

function scalarString(value: unknown, s: Schema, path: string, w: Walk): unknown {
  if (typeof value !== 'string') mismatch(w, path, value, 'string');
  else if (s.format === 'byte' && !BASE64.test(value)) w.report.causes.push(typeInvalid(path, value, `${path} in body must be of type byte: "${value}"`));
  else if (s.format === 'date-time' && !DATE_TIME.test(value)) w.report.causes.push(typeInvalid(path, value, `${path} in body must be of type date-time: "${value}"`));
  return value;
}

/** Quantities decode from strings and from JSON numbers; numbers are written back as strings. */
function quantity(value: unknown, path: string, w: Walk): unknown {
  if (typeof value === 'number') return w.prune ? numberQuantity(value) : value;
  if (typeof value !== 'string') mismatch(w, path, value, 'string');
  else if (!QUANTITY.test(value)) {
    w.report.causes.push(invalid(path, value, `quantities must match the regular expression '${QUANTITY_FORMAT}'`));
  } else if (parseQuantity(value) === undefined) {
    w.report.causes.push(invalid(path, value, "unable to parse quantity's suffix"));
  }
  return value;
}

const numberQuantity = (n: number): string =>
  (Number.isInteger(n) ? String(n) : Number.isInteger(n * 1000) ? `${Math.round(n * 1000)}m` : String(n));

function walkObject(value: Obj, s: Schema, path: string, w: Walk): void {
  const props = s.properties;
  const extra = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
  const freeForm = !props && !extra;
  const keepUnknown = freeForm || s[PRESERVE_UNKNOWN] === true || s.additionalProperties === true;
  for (const key of Object.keys(value)) {
    const member = props?.[key];
    if (value[key] === undefined) continue;
    if (member) {
      if (value[key] === null) { if (w.prune) delete value[key]; continue; }
      value[key] = walk(value[key], member, join(path, key), w);
    } else if (extra) {
      value[key] = walk(value[key], extra, `${path}[${key}]`, w);
    } else if (!keepUnknown) {
      w.report.unknownFields.push(`.${join(path, key)}`);
      if (w.prune) delete value[key];
    }
  }
  if (s[EMBEDDED] === true) requireMembers(value, ['apiVersion', 'kind'], path, w);
  if (w.required && s.required) requireMembers(value, s.required, path, w, props);
}

/** Required numbers and booleans take their zero value (typed decoding cannot tell them missing); others are causes. */
function requireMembers(value: Obj, names: string[], path: string, w: Walk, props?: Record<string, Schema>): void {
  for (const name of names) {
    if (value[name] !== undefined) continue;
    const type = props?.[name] ? resolve(props[name]).type : undefined;
    if (w.prune && (type === 'integer' || type === 'number')) value[name] = 0;
    else if (w.prune && type === 'boolean') value[name] = false;
    else if (type !== 'integer' && type !== 'number' && type !== 'boolean') w.report.causes.push(required(join(path, name)));
  }
}
