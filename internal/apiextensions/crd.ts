// The fields of a CustomResourceDefinition's spec that serving, naming and
// cleanup all read: read here, one way.
import type { ApiObject } from '../apimachinery/meta.js';
import { objects, specOf, str } from '../registry/values.js';

/** The group of the CRD's kinds ('' when unset). */
export const groupOf = (crd: ApiObject): string => str(specOf(crd).group) ?? '';

/** The version objects are stored in. */
export const storageVersionOf = (crd: ApiObject): string | undefined =>
  str(objects(specOf(crd).versions).find((v) => v.storage === true)?.name);
