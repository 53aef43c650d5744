// The field types of a DeleteOptions body, checked as decoding into the typed
// struct would: a value of the wrong type is the client's 400, never a later crash.
import { isObject } from '../internal/apimachinery/meta.js';
import { badRequest } from '../internal/apimachinery/status.js';

const isString = (v: unknown) => typeof v === 'string';
const TYPES: Record<string, [string, (v: unknown) => boolean]> = {
  kind: ['string', isString],
  apiVersion: ['string', isString],
  gracePeriodSeconds: ['int64', (v) => Number.isSafeInteger(v)],
  propagationPolicy: ['string', isString],
  orphanDependents: ['bool', (v) => typeof v === 'boolean'],
  dryRun: ['[]string', (v) => Array.isArray(v) && v.every(isString)],
  preconditions: ['Preconditions', (v) => isObject(v) && ['uid', 'resourceVersion'].every((k) => v[k] === undefined || v[k] === null || isString(v[k]))],
};

/** Refuses a field of the wrong type; null stands for absent and is dropped. */
export function checkDeleteOptionTypes(options: Record<string, unknown>): void {
  for (const [field, [type, valid]] of Object.entries(TYPES)) {
    const value = options[field];
    if (value === null) delete options[field];
    else if (value !== undefined && !valid(value)) {
      throw badRequest(`the request body could not be decoded: DeleteOptions.${field}: ${JSON.stringify(value)?.slice(0, 100)} is not of type ${type}`);
    }
  }
}
