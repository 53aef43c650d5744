// What a CustomResourceDefinition becomes for the server: each served version's
// schema compiled once, then the kinds the registry serves from it.
import type { ApiObject } from '../apimachinery/meta.js';
import type { StatusCause } from '../apimachinery/status.js';
import type { SchemaReport } from '../registry/schemacheck.js';

/** One version's `openAPIV3Schema` (with its `x-svc-validations`), compiled once per CRD version. */
export interface VersionSchema {
  /** As decoding a write does: drops unknown fields (kept under `x-svc-preserve-unknown-fields`) and nulls,
   * applies defaults; answers type errors and the unknown fields' paths for `fieldValidation`. */
  normalize(obj: ApiObject): SchemaReport;
  /** Applies defaults only, as reading an object from storage does. */
  applyDefaults(obj: ApiObject): void;
  /** Types, formats, bounds, enums, `metadata` as ObjectMeta and the validation rules
   * (transition rules see `old`) of a create (old undefined) or a spec write. */
  validate(obj: ApiObject, old?: ApiObject): StatusCause[];
  /** As validate, for a `/status` write. */
  validateStatus(obj: ApiObject, old: ApiObject): StatusCause[];
}

/** Converts custom objects between the served versions of one CRD (`None`: apiVersion rewritten; `Webhook`: a ConversionReview). */
export interface Converter {
  /** Answers `objects` as `desiredAPIVersion` (`<group>/<version>`), in order; objects already in it are answered as they are. */
  convert(objects: ApiObject[], desiredAPIVersion: string): Promise<ApiObject[]>;
}
