// `metadata.managedFields` decoded into one field set per manager and encoded
// back. A manager is identified by its name, operation, sub-resource and, for
// updates, the apiVersion it wrote through.
import { FieldSet } from './set.js';

export type Operation = 'Apply' | 'Update';

export interface ManagerEntry {
  manager: string;
  operation: Operation;
  apiVersion: string;
  subresource?: string;
  time?: string;
  set: FieldSet;
}

export type Managed = Map<string, ManagerEntry>;

/** The identity of an entry; appliers keep theirs across apiVersions. */
export function managerId(e: Pick<ManagerEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify({
    ...(e.manager ? { manager: e.manager } : {}),
    operation: e.operation,
    ...(e.operation === 'Update' && e.apiVersion ? { apiVersion: e.apiVersion } : {}),
    ...(e.subresource ? { subresource: e.subresource } : {}),
  });
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Decodes managedFields; throws on an entry the server would not have written. */
export function decodeManaged(entries: unknown): Managed {
  const out: Managed = new Map();
  if (entries === undefined || entries === null) return out;
  if (!Array.isArray(entries)) throw new Error('managedFields must be a list');
  entries.forEach((raw, i) => {
    if (!isObj(raw)) throw new Error(`managed fields entry ${i} must be an object`);
    const operation = raw.operation;
    if (operation !== 'Apply' && operation !== 'Update') throw new Error('operation must be `Apply` or `Update`');
    if (typeof raw.apiVersion !== 'string' || raw.apiVersion === '') throw new Error('apiVersion must not be empty');
    if (raw.fieldsType === undefined || raw.fieldsType === '') throw new Error(`missing fieldsType in managed fields entry ${i}`);
    if (raw.fieldsType !== 'FieldsV1') throw new Error(`invalid fieldsType ${JSON.stringify(raw.fieldsType)} in managed fields entry ${i}`);
    const entry: ManagerEntry = {
      manager: typeof raw.manager === 'string' ? raw.manager : '',
      operation, apiVersion: raw.apiVersion,
      ...(typeof raw.subresource === 'string' && raw.subresource ? { subresource: raw.subresource } : {}),
      ...(typeof raw.time === 'string' ? { time: raw.time } : {}),
      set: FieldSet.fromFieldsV1(raw.fieldsV1 ?? {}),
    };
    out.set(managerId(entry), entry);
  });
  return out;
}

/** Decodes, or undefined when the entries are malformed. */
export function tryDecodeManaged(entries: unknown): Managed | undefined {
  try {
    return decodeManaged(entries);
  } catch {
    return undefined;
  }
}

const seconds = (t?: string) => (t ? Math.floor(Date.parse(t) / 1000) || 0 : 0);
const cmp = (a = '', b = '') => (a < b ? -1 : a > b ? 1 : 0);

/** Entries in the server's order: appliers first, then by time, manager, apiVersion, sub-resource. */
export function encodeManaged(managed: Managed): Record<string, unknown>[] | undefined {
  const entries = [...managed.values()].filter((e) => !e.set.empty());
  if (entries.length === 0) return undefined;
  entries.sort((p, q) => cmp(p.operation, q.operation) || seconds(p.time) - seconds(q.time) || cmp(p.manager, q.manager)
    || cmp(p.apiVersion, q.apiVersion) || cmp(p.subresource, q.subresource));
  return entries.map((e) => ({
    ...(e.manager ? { manager: e.manager } : {}),
    operation: e.operation,
    apiVersion: e.apiVersion,
    ...(e.time ? { time: e.time } : {}),
    fieldsType: 'FieldsV1',
    fieldsV1: e.set.toFieldsV1(),
    ...(e.subresource ? { subresource: e.subresource } : {}),
  }));
}

/** `[{}]`: a write asking to drop every entry. An empty list does not (clients unaware of the field send one). */
export function isResetRequest(entries: unknown): boolean {
  return Array.isArray(entries) && entries.length === 1 && isObj(entries[0]) && Object.keys(entries[0]).length === 0;
}

/** How conflict messages name a manager: `"name"`, with its sub-resource and, for updates, apiVersion. */
export function printManager(e: ManagerEntry): string {
  let s = JSON.stringify(e.manager);
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  return e.operation === 'Update' ? `${s} using ${e.apiVersion}` : s;
}
