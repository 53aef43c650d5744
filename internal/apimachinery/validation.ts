// Field-level validation helpers; each returns the causes of a 422 Invalid.
import type { StatusCause } from './status.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export const required = (field: string): StatusCause => ({ reason: 'FieldValueRequired', message: 'Required value', field });
export const invalidValue = (field: string, value: unknown, detail: string): StatusCause =>
  ({ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${detail}`, field });
export const forbiddenField = (field: string, detail: string): StatusCause => ({ reason: 'FieldValueForbidden', message: `Forbidden: ${detail}`, field });
export const tooLong = (field: string, max: number): StatusCause =>
  ({ reason: 'FieldValueTooLong', message: `Too long: may not be more than ${max} bytes`, field });

export function dns1123Label(field: string, value: string): StatusCause[] {
  if (value.length > 63) return [invalidValue(field, value, 'must be no more than 63 characters')];
  return DNS1123_LABEL.test(value) ? [] : [invalidValue(field, value,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")];
}

export function dns1123Subdomain(field: string, value: string): StatusCause[] {
  if (value.length > 253) return [invalidValue(field, value, 'must be no more than 253 characters')];
  return DNS1123_SUBDOMAIN.test(value) ? [] : [invalidValue(field, value,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")];
}

/** A label or annotation key: an optional DNS subdomain prefix and a qualified name. */
export function qualifiedName(field: string, key: string): StatusCause[] {
  const slash = key.lastIndexOf('/');
  const [prefix, name] = slash < 0 ? ['', key] : [key.slice(0, slash), key.slice(slash + 1)];
  const causes = slash >= 0 ? dns1123Subdomain(field, prefix) : [];
  if (!name || name.length > 63 || !QUALIFIED_NAME.test(name)) {
    causes.push(invalidValue(field, key, "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, and be no more than 63 characters"));
  }
  return causes;
}

export function labels(field: string, map: Record<string, string> | undefined): StatusCause[] {
  return Object.entries(map ?? {}).flatMap(([k, v]) => [
    ...qualifiedName(field, k),
    ...(typeof v === 'string' && v.length <= 63 && LABEL_VALUE.test(v) ? [] : [invalidValue(`${field}`, v,
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character")]),
  ]);
}

/** The total of keys and values in UTF-8 bytes, kubectl's last-applied annotation included. */
const MAX_ANNOTATIONS_BYTES = 256 * 1024;
export function annotations(field: string, map: Record<string, string> | undefined): StatusCause[] {
  const entries = Object.entries(map ?? {});
  const causes = entries.flatMap(([k]) => qualifiedName(field, k));
  const size = entries.reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(String(v)), 0);
  if (size > MAX_ANNOTATIONS_BYTES) causes.push(tooLong(field, MAX_ANNOTATIONS_BYTES));
  return causes;
}

interface MetadataOfUpdate {
  name?: string;
  namespace?: string;
  uid?: string;
  deletionTimestamp?: string;
  finalizers?: string[];
}

/** The metadata rules of every update: identity fields stay, and an object being deleted takes no new finalizer
 * (removing one stays allowed). The server resets creationTimestamp itself, so a client's spelling of it never counts. */
export function metadataUpdate(meta: MetadataOfUpdate, old: MetadataOfUpdate): StatusCause[] {
  const causes: StatusCause[] = [];
  if (old.deletionTimestamp) {
    const added = [...new Set(meta.finalizers ?? [])].filter((f) => !(old.finalizers ?? []).includes(f)).sort();
    if (added.length) {
      causes.push(forbiddenField('metadata.finalizers',
        `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`));
    }
  }
  for (const f of ['name', 'namespace', 'uid'] as const) {
    if ((meta[f] ?? '') !== (old[f] ?? '')) causes.push(invalidValue(`metadata.${f}`, meta[f] ?? '', 'field is immutable'));
  }
  return causes;
}
