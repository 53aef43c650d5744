// The schema validation of a custom object's values, worded as the platform's
// OpenAPI validator words it (`spec.replicas in body should be greater than or
// equal to 1`): types, nullable, formats, enum, bounds, lengths, patterns,
// item and property counts, uniqueness, required members and the value
// validations allOf, anyOf, oneOf and not.
import { RE2JS } from 're2js';
import type { StatusCause } from '../apimachinery/status.js';
import { invalid, notSupported, required, tooLong, tooMany, typeInvalid } from '../registry/causes.js';
import { deepEqual, isObject } from '../registry/values.js';
import { formatCheck } from './validation-formats.js';
import { isIntOrString, isNullable, jsonType, keyedItems, LIST_MAP_KEYS, LIST_TYPE, type Schema } from './structural.js';

const IN = 'in body';
const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

const PATTERN_CACHE_LIMIT = 1000;
const patterns = new Map<string, RE2JS | string>();

/**
 * A schema pattern compiled once with RE2, as the platform compiles it: the same syntax and errors, and
 * matching in linear time whatever the pattern (a backtracking engine would let one pattern stall a
 * server); the parse error when it does not compile.
 */
function compiledPattern(pattern: string): RE2JS | string {
  let re = patterns.get(pattern);
  if (re === undefined) {
    try {
      re = RE2JS.compile(pattern);
    } catch (err) {
      re = (err as Error).message;
    }
    if (patterns.size >= PATTERN_CACHE_LIMIT) patterns.delete(patterns.keys().next().value!);
    patterns.set(pattern, re);
  }
  return re;
}

/** Why a schema pattern does not compile (`error parsing regexp: ...`), or undefined when it does. */
export function patternError(pattern: string): string | undefined {
  const re = compiledPattern(pattern);
  return typeof re === 'string' ? re : undefined;
}

/** A pattern that does not compile matches everything: CRD validation refused it, a stored one is not held against objects. */
function matchesPattern(value: string, pattern: string): boolean {
  const re = compiledPattern(pattern);
  return typeof re === 'string' || re.matcher(value).find();
}

/** Numbers as the validator prints them. */
const shown = (n: unknown): string => String(n);

/** No old value correlates with the value checked (a create, or an item of a list without keys). */
export const NO_OLD: unique symbol = Symbol('no old value');
type Old = unknown | typeof NO_OLD;

/**
 * Validates `value` at `path` against `s`; answers the causes in the validator's order. With `old` (an update),
 * a part of the value equal to the old value at the same place is not checked again: a schema made stricter
 * does not refuse updates that leave the offending values as they were (ratcheting).
 */
export function validateValue(value: unknown, s: Schema, path: string, old: Old = NO_OLD): StatusCause[] {
  const out: StatusCause[] = [];
  check(value, s, path, out, old);
  return out;
}

/** The old item of a list-type map list with the same keys as a new one; other lists' items have none. */
function oldItems(s: Schema, old: Old): (item: unknown) => Old {
  const keys = s[LIST_TYPE] === 'map' && Array.isArray(s[LIST_MAP_KEYS]) ? s[LIST_MAP_KEYS] as string[] : undefined;
  if (!keys || !Array.isArray(old)) return () => NO_OLD;
  const find = keyedItems(keys, old);
  return (item) => find(item) ?? NO_OLD;
}

const member = (old: Old, key: string): Old => (isObject(old) && key in old ? old[key] : NO_OLD);

function typesOf(s: Schema): string[] {
  if (isIntOrString(s)) return ['integer', 'string'];
  return typeof s.type === 'string' && s.type ? [s.type] : [];
}

function check(value: unknown, s: Schema, path: string, out: StatusCause[], old: Old): void {
  if (old !== NO_OLD && deepEqual(value, old)) return;
  const types = typesOf(s);
  if (value === null || value === undefined) {
    if (types.length && !isNullable(s)) out.push(typeInvalid(path, 'null', `${path} ${IN} must be of type ${types.join(',')}: "null"`));
    enumCheck(value ?? null, s, path, out);
    return;
  }
  const actual = jsonType(value);
  if (types.length && !types.includes(actual) && !(actual === 'integer' && types.includes('number'))) {
    out.push(typeInvalid(path, actual, `${path} ${IN} must be of type ${types.join(',')}: "${actual}"`));
    return;
  }
  composition(value, s, path, out, old);
  if (typeof value === 'string') stringCheck(value, s, path, out);
  else if (typeof value === 'number') numberCheck(value, s, path, out);
  else if (Array.isArray(value)) arrayCheck(value, s, path, out, old);
  enumCheck(value, s, path, out);
  if (isObject(value)) objectCheck(value, s, path, out, old);
}

/** Characters (code points) of a string, counted only where UTF-16 units leave the answer open. */
function longerThan(value: string, max: number): boolean {
  if (value.length <= max) return false;
  if (value.length > 2 * max) return true;
  let n = 0;
  for (const _ of value) if (++n > max) return true;
  return false;
}

function stringCheck(value: string, s: Schema, path: string, out: StatusCause[]): void {
  if (typeof s.maxLength === 'number' && longerThan(value, s.maxLength)) out.push(tooLong(path, s.maxLength));
  if (typeof s.minLength === 'number' && !longerThan(value, s.minLength - 1)) out.push(invalid(path, value, `${path} ${IN} should be at least ${s.minLength} chars long`));
  if (typeof s.pattern === 'string') {
    if (!matchesPattern(value, s.pattern)) out.push(invalid(path, value, `${path} ${IN} should match '${s.pattern}'`));
  }
  const format = typeof s.format === 'string' ? s.format : undefined;
  const ok = formatCheck(format);
  if (ok && !ok(value)) out.push(typeInvalid(path, value, `${path} ${IN} must be of type ${format}: ${JSON.stringify(value)}`));
}

function numberCheck(value: number, s: Schema, path: string, out: StatusCause[]): void {
  const { multipleOf, maximum, minimum } = s as { multipleOf?: number; maximum?: number; minimum?: number };
  if (typeof multipleOf === 'number' && multipleOf > 0) {
    const q = value / multipleOf;
    if (Math.abs(q - Math.round(q)) > 1e-9 * Math.max(1, Math.abs(q))) out.push(invalid(path, value, `${path} ${IN} should be a multiple of ${shown(multipleOf)}`));
  }
  if (typeof maximum === 'number') {
    if (s.exclusiveMaximum === true ? value >= maximum : value > maximum) {
      out.push(invalid(path, value, `${path} ${IN} should be less than ${s.exclusiveMaximum === true ? '' : 'or equal to '}${shown(maximum)}`));
    }
  }
  if (typeof minimum === 'number') {
    if (s.exclusiveMinimum === true ? value <= minimum : value < minimum) {
      out.push(invalid(path, value, `${path} ${IN} should be greater than ${s.exclusiveMinimum === true ? '' : 'or equal to '}${shown(minimum)}`));
    }
  }
}

function arrayCheck(value: unknown[], s: Schema, path: string, out: StatusCause[], old: Old): void {
  const olds = oldItems(s, old);
  if (s.items && isObject(s.items)) value.forEach((item, i) => check(item, s.items!, `${path}[${i}]`, out, olds(item)));
  if (typeof s.minItems === 'number' && value.length < s.minItems) out.push(invalid(path, value.length, `${path} ${IN} should have at least ${s.minItems} items`));
  if (typeof s.maxItems === 'number' && value.length > s.maxItems) out.push(tooMany(path, value.length, s.maxItems));
  if (s.uniqueItems === true && hasDuplicates(value)) out.push(invalid(path, '', `${path} ${IN} shouldn't contain duplicates`));
}

function hasDuplicates(value: unknown[]): boolean {
  const seen = new Set<string>();
  for (const item of value) {
    const key = canonical(item);
    if (seen.has(key)) return true;
    seen.add(key);
  }
  return false;
}

/** JSON with object keys sorted: equal values give equal text. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

function enumCheck(value: unknown, s: Schema, path: string, out: StatusCause[]): void {
  const values = s.enum;
  if (!Array.isArray(values) || values.length === 0) return;
  if (values.some((e) => deepEqual(e, value))) return;
  out.push(notSupported(path, value, values.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))));
}

function objectCheck(value: Record<string, unknown>, s: Schema, path: string, out: StatusCause[], old: Old): void {
  const count = Object.keys(value).length;
  if (typeof s.minProperties === 'number' && count < s.minProperties) out.push(invalid(path, count, `${path} ${IN} should have at least ${s.minProperties} properties`));
  if (typeof s.maxProperties === 'number' && count > s.maxProperties) out.push(tooMany(path, count, s.maxProperties));
  const props = s.properties ?? {};
  const extra = isObject(s.additionalProperties) ? s.additionalProperties as Schema : undefined;
  for (const [key, v] of Object.entries(value)) {
    const prop = props[key] ?? extra;
    if (prop) check(v, prop, join(path, key), out, member(old, key));
  }
  for (const name of Array.isArray(s.required) ? s.required : []) {
    if (value[name] === undefined) out.push(required(join(path, name)));
  }
}

/** allOf, anyOf, oneOf and not: value validations over the same value. */
function composition(value: unknown, s: Schema, path: string, out: StatusCause[], old: Old): void {
  if (s.allOf === undefined && s.anyOf === undefined && s.oneOf === undefined && s.not === undefined) return;
  const label = JSON.stringify(path);
  for (const sub of schemas(s.allOf)) check(value, sub, path, out, old);
  const anyOf = schemas(s.anyOf);
  if (anyOf.length) {
    const results = anyOf.map((sub) => validateValue(value, sub, path));
    if (!results.some((r) => r.length === 0)) {
      out.push(invalid(path, '', `${label} must validate at least one schema (anyOf)`), ...fewest(results));
    }
  }
  const oneOf = schemas(s.oneOf);
  if (oneOf.length) {
    const results = oneOf.map((sub) => validateValue(value, sub, path));
    const valid = results.filter((r) => r.length === 0).length;
    if (valid !== 1) {
      out.push(invalid(path, '', `${label} must validate one and only one schema (oneOf). ${valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`}`));
      if (valid === 0) out.push(...fewest(results));
    }
  }
  if (isObject(s.not) && validateValue(value, s.not as Schema, path).length === 0) {
    out.push(invalid(path, '', `${label} must not validate the schema (not)`));
  }
}

const schemas = (v: unknown): Schema[] => (Array.isArray(v) ? v.filter(isObject) as Schema[] : []);
const fewest = (results: StatusCause[][]): StatusCause[] => results.reduce((a, b) => (b.length < a.length ? b : a));
