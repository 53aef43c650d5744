// A served version's openAPIV3Schema compiled once into what the write and read
// paths run: pruning, nulls and defaults on decode, defaults on reads from
// storage, and validation (values, list markers, embedded resources, rules).
import type { ApiObject } from '../apimachinery/meta.js';
import type { StatusCause } from '../apimachinery/status.js';
import type { SchemaReport } from '../registry/schemacheck.js';
import { forbidden, invalid } from '../registry/causes.js';
import { compileRules, type RuleNode } from './rules.js';
import { evaluateRules } from './rules-eval.js';
import { isEmbedded, LIST_TYPE, MAX_SCHEMA_DEPTH, normalizeSchema, type Schema, schemaDepth, schemaNodes } from './structural.js';
import { applyDefaultsTo, pruneAndDefault } from './structural-prune.js';
import { validateMarkers } from './validation-lists.js';
import { NO_OLD, validateValue } from './validation-values.js';
import { checkSchema } from '../registry/schemacheck.js';
import { objectMetaSchema } from './structural-prune.js';
import type { VersionSchema } from './types.js';

/** Cause types after which the rules are not run: the object is not what they were written for. */
const BLOCKING = new Set(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);
const RULES_SKIPPED = 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

/** Compiles one `spec.versions[*].schema.openAPIV3Schema` (x-kubernetes-* extensions read as x-svc-*). */
export function compileVersionSchema(openAPIV3Schema: Schema): VersionSchema {
  if (schemaDepth(openAPIV3Schema) > MAX_SCHEMA_DEPTH) return refusingWrites(`the schema nests more than ${MAX_SCHEMA_DEPTH} levels deep`);
  const schema = normalizeSchema(openAPIV3Schema);
  // Served schemas passed CRD validation: their rules compile as stored ones (whatever features they use);
  // one that no longer compiles refuses the values of its node (rules-eval.ts).
  const { root } = compileRules(schema, { stored: true });
  const statusSchema = schema.properties?.status;
  const markers = hasMarkers(schema);

  const check = (obj: ApiObject, old: ApiObject | undefined, value: unknown, oldValue: unknown, s: Schema | undefined, path: string): StatusCause[] => {
    const causes = path ? [] : metadataCauses(obj);
    if (s) causes.push(...validateValue(value, s, path, oldValue), ...(markers ? markerCauses(value, oldValue, s, path) : []));
    return causes.concat(ruleCauses(root, causes, obj, old));
  };

  return {
    normalize(obj: ApiObject): SchemaReport {
      const report: SchemaReport = { causes: [], unknownFields: [] };
      pruneAndDefault(obj, schema, report);
      checkedMetadata.set(obj, report.causes);
      return report;
    },
    applyDefaults: (obj: ApiObject) => applyDefaultsTo(obj, schema),
    validate: (obj: ApiObject, old?: ApiObject) => check(obj, old, obj, old ?? NO_OLD, schema, ''),
    validateStatus: (obj: ApiObject, old: ApiObject) =>
      check(obj, old, obj.status, 'status' in old ? old.status : NO_OLD, obj.status === undefined ? undefined : statusSchema, 'status'),
  };
}

/** A schema stored before it would have been refused: objects are read as they are, and no write is accepted. */
function refusingWrites(why: string): VersionSchema {
  const refusal = (): StatusCause[] => [forbidden('', `this version's schema cannot be served: ${why}; correct the CustomResourceDefinition`)];
  return {
    applyDefaults: () => undefined, validate: refusal, validateStatus: refusal, normalize: () => ({ causes: [], unknownFields: [] }),
  };
}

/** What normalizing found of each object's metadata: a write's metadata is not walked twice. */
const checkedMetadata = new WeakMap<ApiObject, StatusCause[]>();

/** Metadata members of the wrong type (what ObjectMeta's schema says), as for built-in kinds. */
function metadataCauses(obj: ApiObject): StatusCause[] {
  const known = checkedMetadata.get(obj);
  if (known) return [...known];
  return obj.metadata === undefined ? [] : checkSchema(obj.metadata, objectMetaSchema(), { prune: false, required: false, path: 'metadata' }).causes;
}

/** Whether any node has a marker validateMarkers checks: without one, no write needs that walk over its value. */
function hasMarkers(schema: Schema): boolean {
  for (const [node] of schemaNodes(schema)) if (node[LIST_TYPE] === 'set' || node[LIST_TYPE] === 'map' || isEmbedded(node)) return true;
  return false;
}

/** Duplicates in set and map lists; on an update only if the old value had none (ratcheting). */
function markerCauses(value: unknown, old: unknown, s: Schema, path: string): StatusCause[] {
  const causes = validateMarkers(value, s, path);
  if (!causes.length || old === NO_OLD) return causes;
  return validateMarkers(old, s, path).length ? [] : causes;
}

function ruleCauses(root: RuleNode | undefined, schemaCauses: StatusCause[], obj: ApiObject, old: ApiObject | undefined): StatusCause[] {
  if (!root) return [];
  if (schemaCauses.some((c) => BLOCKING.has(c.reason ?? ''))) return [invalid('<nil>', null, RULES_SKIPPED)];
  return evaluateRules(root, obj, old);
}
