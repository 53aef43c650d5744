// RFC 6902 JSON patch: a malformed patch is the client's 400; an operation that
// cannot apply (a failed `test`, a missing path) is 422 and changes nothing.
import fastJsonPatch from 'fast-json-patch';
import { StatusError, badRequest } from '../apimachinery/status.js';
import { MAX_NESTING_DEPTH } from '../apimachinery/depth.js';
import { isPlainObject } from './schema.js';

/** What copies may add to a document in all, as upstream: the largest request body. */
export const MAX_COPY_BYTES = 3 * 1024 * 1024;

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
  let out = structuredClone(doc);
  const growth = new Growth(out);
  operations.forEach((op, i) => {
    growth.check(out, op);
    out = applyOne(out, op, i);
  });
  return out;
}

/** One operation; its failure is the client's (422, or 400 for a malformed one). */
function applyOne<T>(doc: T, op: fastJsonPatch.Operation, index: number): T {
  try {
    return fastJsonPatch.applyOperation(doc, structuredClone(op), validator, true, true, index).newDocument;
  } catch (err) {
    // The library reports some paths through a missing or scalar document as type errors of its own.
    if (err instanceof TypeError) throw unprocessable(`${op.op} operation does not apply: doc is missing path: "${op.path}"`);
    if (!(err instanceof fastJsonPatch.JsonPatchError)) throw err;
    // The library's message goes on with a dump of the whole document: only its first line is said.
    const message = err.message.split('\n')[0];
    if (MALFORMED.has(err.name)) throw badRequest(`invalid JSON patch: operation ${index}: ${message}`);
    if (err.name === 'TEST_OPERATION_FAILED') throw unprocessable(`testing value ${op.path} failed: test operation failed`);
    throw unprocessable(`${message}: ${err.name === 'OPERATION_FROM_UNRESOLVABLE' && 'from' in op ? op.from : op.path}`);
  }
}

/**
 * The library's checks of an operation against the document, but for `from`
 * of move and copy, looked up in place: the library clones the whole document
 * to look, for every such operation.
 */
function validator(op: fastJsonPatch.Operation, index: number, doc: unknown, existingPath: string): void {
  if (op.op !== 'move' && op.op !== 'copy') return fastJsonPatch.validator(op, index, doc, existingPath);
  fastJsonPatch.validator(op, index);
  if (!resolves(doc, op.from)) {
    throw new fastJsonPatch.JsonPatchError('Cannot perform the operation from a path that does not exist', 'OPERATION_FROM_UNRESOLVABLE', index, op, doc);
  }
}

/** Whether a JSON pointer names a value of the document. */
function resolves(doc: unknown, pointer: string): boolean {
  if (pointer === '') return true;
  if (!pointer.startsWith('/')) return false;
  let v = doc;
  for (const segment of pointer.slice(1).split('/')) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(v) ? !/^(0|[1-9]\d*)$/.test(key) || Number(key) >= v.length : !isPlainObject(v) || !Object.hasOwn(v, key)) return false;
    v = (v as Record<string, unknown>)[key];
  }
  return true;
}

/** Depth and approximate JSON size of a value, walked without recursion; the walk stops once `budget` bytes are passed. */
function measure(value: unknown, budget: number): { depth: number; bytes: number } {
  let depth = 0;
  let bytes = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length && bytes <= budget) {
    const [v, d] = stack.pop()!;
    if (typeof v === 'string') bytes += v.length + 2;
    else if (typeof v !== 'object' || v === null) bytes += String(v).length;
    else {
      depth = Math.max(depth, d);
      bytes += 2;
      if (Array.isArray(v)) {
        bytes += v.length;
        for (const child of v) stack.push([child, d + 1]);
      } else {
        for (const [k, child] of Object.entries(v)) {
          bytes += k.length + 4;
          stack.push([child, d + 1]);
        }
      }
    }
  }
  return { depth, bytes };
}

/** Managed fields mirror the object's nesting one level deeper, and are written anew after the patch: they do not count. */
function withoutManagedFields(doc: unknown): unknown {
  if (!isPlainObject(doc) || !isPlainObject(doc.metadata)) return doc;
  const { managedFields: _, ...metadata } = doc.metadata;
  return { ...doc, metadata };
}

const segments = (pointer: string): number => (pointer.match(/\//g) ?? []).length;

/**
 * Bounds what a patch makes of a document: copies may add at most
 * MAX_COPY_BYTES in all, and no operation may nest the document deeper than
 * any body may be (tracked as an upper bound, so only inserted values are walked).
 */
class Growth {
  private copied = 0;
  private depth: number;

  constructor(doc: unknown) {
    this.depth = measure(withoutManagedFields(doc), Infinity).depth;
  }

  check(doc: unknown, op: fastJsonPatch.Operation): void {
    let inserted = 0;
    if (op.op === 'add' || op.op === 'replace') inserted = measure(op.value, Infinity).depth;
    else if (op.op === 'move') inserted = this.depth - segments(op.from);
    else if (op.op === 'copy') inserted = this.copy(doc, op.from);
    this.depth = Math.max(this.depth, segments(op.path) + inserted);
    if (this.depth > MAX_NESTING_DEPTH) throw unprocessable(`the patched object would nest deeper than ${MAX_NESTING_DEPTH} levels`);
  }

  private copy(doc: unknown, from: string): number {
    let value: unknown;
    try {
      value = fastJsonPatch.getValueByPointer(doc, from);
    } catch {
      return 0; // the operation itself reports the missing path
    }
    const { depth, bytes } = measure(value, MAX_COPY_BYTES - this.copied);
    this.copied += bytes;
    if (this.copied > MAX_COPY_BYTES) {
      throw unprocessable(`Unable to complete the copy, the accumulated size increase of copy is ${this.copied}, exceeding the limit ${MAX_COPY_BYTES}`);
    }
    return depth;
  }
}
