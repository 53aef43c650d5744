// The core (`/api/v1`) kinds served so far.
import type { ApiObject } from '../apimachinery/meta.js';
import { isObject } from '../apimachinery/meta.js';
import type { StatusCause } from '../apimachinery/status.js';
import { forbiddenField, invalidValue, tooLong } from '../apimachinery/validation.js';
import { NAMESPACE_FINALIZER, labelKey } from '../names/index.js';

/** Every namespace carries its own name as a label, so selectors can name namespaces. */
const NAMESPACE_NAME_LABEL = labelKey('metadata.name');
import type { KindDef } from './types.js';
import { ageColumn, nameColumn } from './columns.js';

const CRUD = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const MAX_DATA_BYTES = 1024 * 1024;

const spec = (obj: ApiObject) => (isObject(obj.spec) ? obj.spec : {}) as Record<string, unknown>;
const status = (obj: ApiObject) => (isObject(obj.status) ? obj.status : {}) as Record<string, unknown>;
const entries = (v: unknown) => Object.entries(isObject(v) ? v : {});

/** Keys of data maps: a valid config key each, none in two maps, total size bounded. */
function validateDataKeys(obj: ApiObject, maps: string[]): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  let size = 0;
  for (const field of maps) {
    for (const [key, value] of entries(obj[field])) {
      if (key.length > 253 || !CONFIG_KEY.test(key)) {
        causes.push(invalidValue(`${field}[${key}]`, key, "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"));
      }
      if (seen.has(key)) causes.push(invalidValue(`${field}[${key}]`, key, 'duplicate of key present in another data map'));
      seen.add(key);
      size += key.length + String(value).length;
    }
  }
  if (size > MAX_DATA_BYTES) causes.push(tooLong('', MAX_DATA_BYTES));
  return causes;
}

/** Once `immutable` is true, the data maps and the flag itself stay as they are. */
function validateImmutableData(obj: ApiObject, old: ApiObject | undefined, maps: string[]): StatusCause[] {
  if (old?.immutable !== true) return [];
  const causes = maps.filter((m) => JSON.stringify(obj[m] ?? {}) !== JSON.stringify(old[m] ?? {}))
    .map((m) => forbiddenField(m, 'field is immutable when `immutable` is set'));
  if (obj.immutable !== true) causes.push(forbiddenField('immutable', 'field is immutable when `immutable` is set'));
  return causes;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export const namespaces: KindDef = {
  group: '', version: 'v1', resource: 'namespaces', singular: 'namespace', kind: 'Namespace', namespaced: false,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], shortNames: ['ns'],
  subresources: ['status', 'finalize'], nameRule: 'dns1123label', returnDeletedObject: true,
  selectableFields: { 'status.phase': (o) => status(o).phase as string | undefined },
  prepareForCreate(obj) {
    obj.metadata = { ...obj.metadata, labels: { ...obj.metadata?.labels, [NAMESPACE_NAME_LABEL]: obj.metadata?.name ?? '' } };
    obj.spec = { ...spec(obj), finalizers: [NAMESPACE_FINALIZER] };
    obj.status = { phase: 'Active' };
  },
  prepareForUpdate(obj, old) {
    obj.spec = old.spec;
    obj.status = old.status;
  },
  prepareForDelete(obj) {
    obj.status = { ...status(obj), phase: 'Terminating' };
  },
  tableColumns: [nameColumn, { name: 'Status', type: 'string', description: 'The phase of the namespace', cell: (o) => status(o).phase ?? '' }, ageColumn],
};

export const configmaps: KindDef = {
  group: '', version: 'v1', resource: 'configmaps', singular: 'configmap', kind: 'ConfigMap', namespaced: true,
  verbs: CRUD, shortNames: ['cm'],
  validate: (obj, old) => [...validateDataKeys(obj, ['data', 'binaryData']), ...validateImmutableData(obj, old, ['data', 'binaryData'])],
  tableColumns: [nameColumn, { name: 'Data', type: 'integer', description: 'Number of data entries', cell: (o) => entries(o.data).length + entries(o.binaryData).length }, ageColumn],
};

export const secrets: KindDef = {
  group: '', version: 'v1', resource: 'secrets', singular: 'secret', kind: 'Secret', namespaced: true, verbs: CRUD,
  selectableFields: { type: (o) => o.type as string | undefined },
  prepareForCreate(obj) {
    mergeStringData(obj);
    obj.type ??= 'Opaque';
  },
  prepareForUpdate(obj) {
    mergeStringData(obj);
    obj.type ??= 'Opaque';
  },
  validate(obj, old) {
    const causes = [...validateDataKeys(obj, ['data']), ...validateImmutableData(obj, old, ['data'])];
    for (const [key, value] of entries(obj.data)) {
      if (typeof value !== 'string' || !BASE64.test(value)) causes.push(invalidValue(`data[${key}]`, '<secret contents redacted>', 'must be base64-encoded'));
    }
    if (old && old.type !== obj.type) causes.push(invalidValue('type', obj.type, 'field is immutable'));
    return causes;
  },
  tableColumns: [nameColumn,
    { name: 'Type', type: 'string', description: 'The type of the secret', cell: (o) => o.type ?? '' },
    { name: 'Data', type: 'integer', description: 'Number of data entries', cell: (o) => entries(o.data).length }, ageColumn],
};

/** `stringData` is write-only: its entries overwrite `data`, base64-encoded. */
function mergeStringData(obj: ApiObject): void {
  if (!isObject(obj.stringData)) return;
  const data = (isObject(obj.data) ? obj.data : {}) as Record<string, string>;
  for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v)).toString('base64');
  obj.data = data;
  delete obj.stringData;
}
