// A served version's openAPIV3Schema compiled into the checks the write and read paths run.
import type { ApiObject } from '../apimachinery/meta.js';
import { checkSchema } from '../registry/schemacheck.js';
import type { Schema } from '../registry/openapi.js';
import type { VersionSchema } from './types.js';

/** Compiles one `spec.versions[*].schema.openAPIV3Schema`. */
export function compileVersionSchema(openAPIV3Schema: Schema): VersionSchema {
  return {
    normalize: (obj: ApiObject) => checkSchema(obj, openAPIV3Schema),
    applyDefaults: () => undefined,
    validate: (obj: ApiObject) => checkSchema(obj, openAPIV3Schema, { prune: false }).causes,
    validateStatus: (obj: ApiObject) => (obj.status === undefined ? [] : checkSchema(obj.status, openAPIV3Schema.properties?.status ?? {}, { prune: false, path: 'status' }).causes),
  };
}
