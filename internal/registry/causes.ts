// The causes of a 422 Invalid, one constructor per kind of field error, and
// the field rules many kinds share.
import type { StatusCause } from '../apimachinery/status.js';
import * as base from '../apimachinery/validation.js';
import { isObject } from '../apimachinery/meta.js';
import { deepEqual } from './values.js';

export type Causes = StatusCause[];

/** A value as field errors print it: strings quoted, everything else as JSON. */
const shown = (value: unknown): string => JSON.stringify(value) ?? 'null';

export const required = (field: string, detail = ''): StatusCause =>
  ({ reason: 'FieldValueRequired', message: detail ? `Required value: ${detail}` : 'Required value', field });

export const invalid = (field: string, value: unknown, detail: string): StatusCause =>
  ({ reason: 'FieldValueInvalid', message: `Invalid value: ${shown(value)}: ${detail}`, field });

/** An invalid value too large or too vague to print. */
export const invalidField = (field: string, detail: string): StatusCause =>
  ({ reason: 'FieldValueInvalid', message: `Invalid value: ${detail}`, field });

export const typeInvalid = (field: string, value: unknown, detail: string): StatusCause =>
  ({ reason: 'FieldValueTypeInvalid', message: `Invalid value: ${shown(value)}: ${detail}`, field });

export const notSupported = (field: string, value: unknown, allowed: readonly string[]): StatusCause =>
  ({ reason: 'FieldValueNotSupported', message: `Unsupported value: ${shown(value)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`, field });

export const duplicate = (field: string, value: unknown): StatusCause =>
  ({ reason: 'FieldValueDuplicate', message: `Duplicate value: ${shown(value)}`, field });

export const forbidden = (field: string, detail: string): StatusCause => base.forbiddenField(field, detail);

export const tooMany = (field: string, actual: number, max: number): StatusCause =>
  ({ reason: 'FieldValueTooMany', message: `Too many: ${actual}: must have at most ${max} items`, field });

export const tooLong = (field: string, max: number): StatusCause => base.tooLong(field, max);

export const immutable = (field: string, value: unknown): StatusCause => invalid(field, value, 'field is immutable');

/** `field is immutable` when the value differs from the stored one. */
export function unchanged(field: string, value: unknown, old: unknown): Causes {
  return deepEqual(value, old) ? [] : [immutable(field, value)];
}

export function nonNegative(field: string, value: unknown): Causes {
  return typeof value === 'number' && value < 0 ? [invalid(field, value, 'must be greater than or equal to 0')] : [];
}

export function positive(field: string, value: unknown): Causes {
  return typeof value === 'number' && value <= 0 ? [invalid(field, value, 'must be greater than zero')] : [];
}

/** A value from a fixed set; `undefined` passes unless `needed`. */
export function oneOf(field: string, value: unknown, allowed: readonly string[], needed = false): Causes {
  if (value === undefined || value === '') return needed ? [required(field, `supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`)] : [];
  return allowed.includes(value as string) ? [] : [notSupported(field, value, allowed)];
}

export const dns1123Label = base.dns1123Label;
export const dns1123Subdomain = base.dns1123Subdomain;
export const qualifiedName = base.qualifiedName;

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

export function dns1035Label(field: string, value: string): Causes {
  if (value.length > 63) return [invalid(field, value, 'must be no more than 63 characters')];
  return DNS1035_LABEL.test(value) ? [] : [invalid(field, value,
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")];
}

/** Path segment names (RBAC): anything but `.`, `..`, `/` and `%`. */
export function pathSegmentName(field: string, value: string): Causes {
  if (value === '.' || value === '..') return [invalid(field, value, `may not be '${value}'`)];
  const bad = ['/', '%'].find((c) => value.includes(c));
  return bad ? [invalid(field, value, `may not contain '${bad}'`)] : [];
}

/** Label keys and values of a map field. */
export function labelMap(field: string, map: unknown): Causes {
  return isObject(map) ? base.labels(field, map as Record<string, string>) : [];
}

const IANA_SVC_NAME = /^[-a-z0-9]+$/;

/** A named port: an IANA service name. */
export function portName(field: string, value: string): Causes {
  const problems: string[] = [];
  if (value.length > 15) problems.push('must be no more than 15 characters');
  if (!IANA_SVC_NAME.test(value)) problems.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (value.includes('--')) problems.push('must not contain consecutive hyphens');
  if (!/[a-z]/.test(value)) problems.push('must contain at least one letter (a-z)');
  if (value.startsWith('-') || value.endsWith('-')) problems.push('must not begin or end with a hyphen');
  return problems.map((p) => invalid(field, value, p));
}

export function portNumber(field: string, value: unknown): Causes {
  return typeof value === 'number' && value >= 1 && value <= 65535 ? [] : [invalid(field, value, 'must be between 1 and 65535, inclusive')];
}

/** An int-or-string port: a number in range or an IANA service name. */
export function portNumberOrName(field: string, value: unknown): Causes {
  return typeof value === 'string' ? portName(field, value) : portNumber(field, value);
}

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
export const protocol = (field: string, value: unknown): Causes => oneOf(field, value, PROTOCOLS, true);

/** A percentage (`25%`) or a non-negative integer. */
export function intOrPercent(field: string, value: unknown): Causes {
  if (value === undefined) return [];
  if (typeof value === 'number') return nonNegative(field, value);
  const m = /^(\d+)%$/.exec(String(value));
  return m ? [] : [invalid(field, value, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")];
}

/** The absolute value of an int-or-percent against a total, rounding up. */
export function scaledValue(value: unknown, total: number): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(String(value));
  return m ? Math.ceil((Number(m[1]) * total) / 100) : 0;
}
