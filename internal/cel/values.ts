// Conversions between JSON data and expression values, and the equality and
// ordering the libraries share.
import { Optional } from '@marcbachmann/cel-js';
import { compareTimestamps, Duration, parseTimestamp as parseCelTimestamp, TIMESTAMP_NANOS, UnsignedInt } from '@marcbachmann/cel-js/evaluator';

/** A value that renders itself for output (quantities, URLs, typed objects). */
interface JsonRenderable { toJSON(): unknown }

/** JSON data as a dynamic value: whole numbers become int, the rest stay as they are. */
export function fromJson(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(fromJson);
  if (value !== null && typeof value === 'object' && value.constructor === Object) {
    const map = new Map<string, unknown>();
    for (const [k, v] of Object.entries(value)) map.set(k, fromJson(v));
    return map;
  }
  return value;
}

const HAS_SURROGATE = /[\uD800-\uDFFF]/;

/** Length in code points, the unit the language counts strings in. */
export function stringSize(s: string): number {
  if (!HAS_SURROGATE.test(s)) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Code points of s, or s itself when every code point is one code unit. */
export function codePoints(s: string): string | string[] {
  return HAS_SURROGATE.test(s) ? Array.from(s) : s;
}

function isNumeric(v: unknown): v is bigint | number | UnsignedInt {
  return typeof v === 'bigint' || typeof v === 'number' || v instanceof UnsignedInt;
}

function compareNumbers(a: bigint | number | UnsignedInt, b: bigint | number | UnsignedInt): number {
  const x = a instanceof UnsignedInt ? a.valueOf() : a;
  const y = b instanceof UnsignedInt ? b.valueOf() : b;
  if (typeof x === 'number' && Number.isNaN(x)) return NaN;
  if (typeof y === 'number' && Number.isNaN(y)) return NaN;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Orders strings by code point, as the language does (UTF-16 order differs above U+FFFF). */
function compareStrings(a: string, b: string): number {
  if (!HAS_SURROGATE.test(a) && !HAS_SURROGATE.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** Orders two values of a comparable type; throws on values that have no order. */
export function compareValues(a: unknown, b: unknown): number {
  if (isNumeric(a) && isNumeric(b)) return compareNumbers(a, b);
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) return compareBytes(a, b);
  if (a instanceof Date && b instanceof Date) return Math.sign(compareTimestamps(a, b));
  if (a instanceof Duration && b instanceof Duration) return compareNumbers(a.toNanos(), b.toNanos());
  throw new Error(`no such overload: values of type ${typeName(a)} and ${typeName(b)} are not comparable`);
}

function entriesOf(v: unknown): Map<unknown, unknown> | undefined {
  if (v instanceof Map) return v;
  if (v !== null && typeof v === 'object' && (v.constructor === Object || v.constructor === undefined)) {
    return new Map(Object.entries(v));
  }
  return undefined;
}

/** Equality with the language's semantics: numbers compare across int, uint and double. */
export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isNumeric(a) && isNumeric(b)) return compareNumbers(a, b) === 0;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => celEquals(x, b[i]));
  }
  if (a instanceof Uint8Array && b instanceof Uint8Array) return compareBytes(a, b) === 0;
  if (a instanceof Date && b instanceof Date) return compareTimestamps(a, b) === 0;
  if (a instanceof Duration && b instanceof Duration) return a.toNanos() === b.toNanos();
  if (a instanceof Optional && b instanceof Optional) return celEquals(a.orValue(undefined), b.orValue(undefined));
  const ea = typeof (a as { equals?: unknown }).equals === 'function';
  if (ea) return (a as { equals(o: unknown): boolean }).equals(b);
  const ma = entriesOf(a);
  const mb = entriesOf(b);
  if (!ma || !mb || ma.size !== mb.size) return false;
  for (const [k, v] of ma) if (!mb.has(k) || !celEquals(v, mb.get(k))) return false;
  return true;
}

/** Equality of two JSON documents, treating 1 and 1.0 as the same number. */
export function jsonEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEquals(x, b[i]));
  }
  const ka = Object.keys(a);
  const ob = b as Record<string, unknown>;
  return ka.length === Object.keys(ob).length &&
    ka.every((k) => Object.hasOwn(ob, k) && jsonEquals((a as Record<string, unknown>)[k], ob[k]));
}

/** The language's name for the type of a value, for messages. */
export function typeName(v: unknown): string {
  switch (typeof v) {
    case 'string': return 'string';
    case 'bigint': return 'int';
    case 'number': return 'double';
    case 'boolean': return 'bool';
  }
  if (v === null) return 'null_type';
  if (v instanceof UnsignedInt) return 'uint';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  if (v instanceof Duration) return 'google.protobuf.Duration';
  if (v instanceof Optional) return 'optional';
  const named = (v as { celTypeName?: string } | undefined)?.celTypeName;
  return named ?? 'map';
}

/** A duration as the language prints it: seconds with a fraction, e.g. "1.5s". */
export function formatDuration(d: Duration): string {
  const nanos = d.toNanos();
  const sign = nanos < 0n ? '-' : '';
  const abs = nanos < 0n ? -nanos : nanos;
  const frac = (abs % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${sign}${abs / 1_000_000_000n}${frac ? `.${frac}` : ''}s`;
}

/** A timestamp Date, which may carry the nanoseconds below its millisecond. */
type Timestamp = Date & { [TIMESTAMP_NANOS]?: number };

/** A timestamp in RFC 3339 UTC with as many fraction digits as it needs (none for whole seconds). */
export function formatTimestamp(d: Timestamp): string {
  const iso = d.toISOString();
  const fraction = `${iso.slice(20, 23)}${String(d[TIMESTAMP_NANOS] ?? 0).padStart(6, '0')}`.replace(/0+$/, '');
  return `${iso.slice(0, 19)}${fraction ? `.${fraction}` : ''}Z`;
}

/** Parses an RFC 3339 date-time with up to nanosecond precision; undefined when it is not one. */
export function parseTimestamp(text: string): Date | undefined {
  try {
    return parseCelTimestamp(text);
  } catch {
    return undefined;
  }
}

/**
 * A double as the platform's string() prints it: the shortest digits that read
 * back the same, with an exponent when it is below -4 or at least 6.
 */
export function doubleToString(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mantissa, exponent] = n.toExponential().split('e');
  const exp = Number(exponent);
  if (exp >= -4 && exp < 6) return String(n);
  return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

function formatDouble(n: number): string {
  if (Number.isNaN(n)) return '"NaN"';
  if (!Number.isFinite(n)) return n > 0 ? '"Infinity"' : '"-Infinity"';
  return JSON.stringify(n);
}

/** Serializes an expression value as JSON; ints keep every digit. */
export function stringifyValue(v: unknown): string {
  switch (typeof v) {
    case 'bigint': return v.toString();
    case 'number': return formatDouble(v);
    case 'string': case 'boolean': return JSON.stringify(v);
    case 'undefined': return 'null';
  }
  if (v === null) return 'null';
  if (v instanceof UnsignedInt) return v.valueOf().toString();
  if (v instanceof Uint8Array) return JSON.stringify(Buffer.from(v).toString('base64'));
  if (v instanceof Date) return JSON.stringify(formatTimestamp(v));
  if (v instanceof Duration) return JSON.stringify(formatDuration(v));
  if (v instanceof Optional) return stringifyValue(v.orValue(null));
  if (Array.isArray(v) || v instanceof Set) return `[${[...v].map(stringifyValue).join(',')}]`;
  if (typeof (v as JsonRenderable).toJSON === 'function') {
    const rendered = (v as JsonRenderable).toJSON();
    return typeof rendered === 'string' ? JSON.stringify(rendered) : stringifyValue(rendered);
  }
  if (Object.prototype.toString.call(v).startsWith('[object Type<')) {
    return JSON.stringify((v as { name: string }).name);
  }
  const entries = v instanceof Map ? [...v.entries()] : Object.entries(v as object);
  return `{${entries.map(([k, x]) => `${JSON.stringify(String(k))}:${stringifyValue(x)}`).join(',')}}`;
}
