// RFC 6902 JSON patch: a malformed patch is the client's 400; an operation that
// cannot apply (a failed `test`, a missing path) is 422 and changes nothing.
import fastJsonPatch from 'fast-json-patch';
import { StatusError, badRequest } from '../apimachinery/status.js';

/** The most operations one patch may carry, as upstream. */
const MAX_OPERATIONS = 10_000;

/** Errors about the shape of the patch itself rather than the document. */
const MALFORMED = new Set([
  'SEQUENCE_NOT_AN_ARRAY', 'OPERATION_NOT_AN_OBJECT', 'OPERATION_OP_INVALID', 'OPERATION_PATH_INVALID',
  'OPERATION_FROM_REQUIRED', 'OPERATION_VALUE_REQUIRED', 'OPERATION_VALUE_CANNOT_CONTAIN_UNDEFINED',
]);

const unprocessable = (detail: string) => new StatusError(422, 'Invalid',
  'the server rejected our request due to an error in our request', { causes: [{ message: detail }] });

/** Checks the operations' shape: 400 for anything that is no RFC 6902 patch. */
function validateShape(ops: unknown): fastJsonPatch.Operation[] {
  if (!Array.isArray(ops)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  if (ops.length > MAX_OPERATIONS) {
    throw new StatusError(413, 'RequestEntityTooLarge', `The allowed maximum operations in a JSON patch is ${MAX_OPERATIONS}, got ${ops.length}`);
  }
  const err = fastJsonPatch.validate(ops as fastJsonPatch.Operation[]);
  if (err && MALFORMED.has(err.name)) throw badRequest(`invalid JSON patch: operation ${err.index ?? 0}: ${err.message}`);
  return ops as fastJsonPatch.Operation[];
}

/** Applies the operations to a copy of `doc`. */
export function applyJsonPatch<T>(doc: T, ops: unknown): T {
  const operations = validateShape(ops);
  try {
    return fastJsonPatch.applyPatch(structuredClone(doc), structuredClone(operations), true, true).newDocument;
  } catch (err) {
    if (!(err instanceof fastJsonPatch.JsonPatchError)) throw err;
    if (MALFORMED.has(err.name)) throw badRequest(`invalid JSON patch: operation ${err.index ?? 0}: ${err.message}`);
    const op = operations[err.index ?? 0];
    const detail = err.name === 'TEST_OPERATION_FAILED' ? `testing value ${op?.path} failed: test operation failed` : `${err.message}: ${op?.path}`;
    throw unprocessable(detail);
  }
}
