// How a kind's declaration (KindSpec: what the resource table lacks) and its
// row of the resource table become the KindDef the server reads, with the
// update strategy every kind shares: unknown fields dropped, status reset on
// create, status kept on spec writes and everything else kept on status writes,
// generation counted on spec changes, schema checked before the kind's rules.
import type { ApiObject } from '../apimachinery/meta.js';
import type { StatusCause } from '../apimachinery/status.js';
import { checkSchema, type SchemaReport } from './schemacheck.js';
import { resolve, schemaFor, type Schema } from './openapi.js';
import type { ResourceEntry } from './resources.js';
import { keepAllButStatus, keepStoredStatus } from './statusapart.js';
import type { KindDef, NameRule, Requester, TableColumn } from './types.js';
import { deepEqual, type Obj } from './values.js';

export interface KindSpec {
  singular?: string;
  shortNames?: string[];
  categories?: string[];
  nameRule?: NameRule;
  tableColumns?: TableColumn[];
  selectableFields?: KindDef['selectableFields'];
  returnDeletedObject?: boolean;
  deletionFinalizer?: string;
  ephemeral?: boolean;
  /** Overrides the generation rule (default: kinds whose schema has a `spec`). */
  tracksGeneration?: boolean;
  /** The status a new object starts with; default: the status schema's required numbers and booleans at zero. */
  initialStatus?(obj: ApiObject): unknown;
  /** Defaults of every write, as decoding applies them. */
  defaults?(obj: ApiObject): void;
  /** Server-set fields of a new object, after defaults. */
  create?(obj: ApiObject, requester?: Requester): void;
  /** Server-set fields of a spec write, after the status is carried over and defaults applied. */
  update?(obj: ApiObject, old: ApiObject): void;
  /** Server-set fields that follow from what mutating admission may change (a pod's QoS class). */
  admitted?(obj: ApiObject): void;
  delete?(obj: ApiObject): void;
  /** The kind's rules for a create (old undefined) or spec write; run once the schema check found no type error. */
  validate?(obj: ApiObject, old?: ApiObject): StatusCause[];
  /** The kind's rules for a status write. */
  validateStatus?(obj: ApiObject, old: ApiObject): StatusCause[];
  storageVersion?: string;
  storageGroup?: string;
  toStorage?(obj: ApiObject): ApiObject;
  fromStorage?(obj: ApiObject): ApiObject;
  spellGroups?(obj: ApiObject, spell: (group: string) => string): void;
}

/** Top-level members that are not the object's "spec" for generation counting. */
const NOT_SPEC = new Set(['apiVersion', 'kind', 'metadata', 'status']);

const specOf = (obj: ApiObject): Obj => Object.fromEntries(Object.entries(obj).filter(([k]) => !NOT_SPEC.has(k)));

/** The zero status of a schema: what a typed empty status encodes to. */
function zeroStatus(schema: Schema | undefined): Obj {
  const statusRef = schema?.properties?.status;
  const status: Obj = {};
  if (statusRef) checkSchema(status, resolve(statusRef), { path: 'status' });
  return status;
}

export function defineKind(entry: ResourceEntry, spec: KindSpec = {}): KindDef {
  let cached: Schema | undefined | null = null;
  const schema = (): Schema | undefined => {
    if (cached === null) cached = schemaFor({ group: entry.group, version: entry.version, kind: entry.kind });
    return cached;
  };
  const statusSubresource = entry.subresources.some((s) => s.name === 'status');
  const tracksGeneration = spec.tracksGeneration ?? Boolean(schema()?.properties?.spec);
  /** Drops unknown fields and nulls as decoding does; answers what the walk found (validate reports the causes). */
  const normalize = (obj: ApiObject): SchemaReport | undefined => { const s = schema(); return s ? checkSchema(obj, s) : undefined; };
  const schemaCauses = (value: unknown, s: Schema | undefined, path = '', checked = false) =>
    (s && !checked ? checkSchema(value, s, { prune: false, path }).causes : []);
  const hasTypeErrors = (causes: StatusCause[]) => causes.some((c) => c.reason === 'FieldValueTypeInvalid');

  const def: KindDef = {
    group: entry.group, version: entry.version, resource: entry.resource, kind: entry.kind, namespaced: entry.namespaced,
    verbs: entry.verbs, singular: spec.singular ?? entry.kind.toLowerCase(),
    ...(spec.shortNames ? { shortNames: spec.shortNames } : {}),
    ...(spec.categories ? { categories: spec.categories } : {}),
    ...(entry.subresources.length ? { subresources: entry.subresources.map((s) => s.name), subresourceDefs: entry.subresources } : {}),
    statusSubresource, tracksGeneration, schema,
    ...pick(spec, ['nameRule', 'tableColumns', 'selectableFields', 'returnDeletedObject', 'deletionFinalizer', 'ephemeral', 'storageVersion', 'storageGroup', 'toStorage', 'fromStorage', 'spellGroups']),
    ...(spec.admitted ? { afterAdmission: spec.admitted } : {}),

    prepareForCreate(obj, requester) {
      const report = normalize(obj);
      if (statusSubresource) obj.status = spec.initialStatus?.(obj) ?? zeroStatus(schema());
      spec.defaults?.(obj);
      spec.create?.(obj, requester);
      if (tracksGeneration) obj.metadata = { ...obj.metadata, generation: 1 };
      return report;
    },

    prepareForUpdate(obj, old) {
      const report = normalize(obj);
      if (statusSubresource) keepStoredStatus(obj, old);
      spec.defaults?.(obj);
      spec.update?.(obj, old);
      if (tracksGeneration) {
        const generation = old.metadata?.generation ?? 1;
        obj.metadata = { ...obj.metadata, generation: deepEqual(specOf(obj), specOf(old)) ? generation : generation + 1 };
      }
      return report;
    },

    prepareForStatusUpdate(obj, old) {
      const report = normalize(obj);
      keepAllButStatus(obj, old);
      spec.defaults?.(obj);
      return report;
    },

    validate(obj, old, schemaChecked) {
      const causes = schemaCauses(obj, schema(), '', schemaChecked);
      return hasTypeErrors(causes) ? causes : merge(causes, spec.validate?.(obj, old) ?? []);
    },

    validateStatusUpdate(obj, old, schemaChecked) {
      const statusSchema = schema()?.properties?.status;
      const causes = obj.status === undefined ? [] : schemaCauses(obj.status, statusSchema, 'status', schemaChecked);
      return hasTypeErrors(causes) ? causes : merge(causes, spec.validateStatus?.(obj, old) ?? []);
    },
  };
  if (spec.delete) def.prepareForDelete = spec.delete;
  return def;
}

/** Schema causes then the kind's; a field the kind reports as required is not reported twice. */
function merge(schemaCauses: StatusCause[], kindCauses: StatusCause[]): StatusCause[] {
  const requiredByKind = new Set(kindCauses.filter((c) => c.reason === 'FieldValueRequired').map((c) => c.field));
  return [...schemaCauses.filter((c) => c.reason !== 'FieldValueRequired' || !requiredByKind.has(c.field)), ...kindCauses];
}

function pick<T extends object, K extends keyof T>(o: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}
