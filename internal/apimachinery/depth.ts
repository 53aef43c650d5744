// Nesting limits of request bodies, checked before any recursive code sees
// them: scans of the raw JSON and CBOR bytes, and a walk of decoded values
// (YAML aliases can make a value deeper than its text).
import { badRequest } from './status.js';

/**
 * The deepest nesting of objects and lists a body may have. Upstream allows
 * 10,000; here the engine's own recursion decides: V8's JSON.stringify and
 * structuredClone overflow the default stack a few thousand levels down, and
 * the YAML composer below a thousand, so every walk of an object must fit.
 */
export const MAX_NESTING_DEPTH = 500;

export const tooDeep = (what = 'the request body') =>
  badRequest(`${what} could not be decoded: exceeded max depth of ${MAX_NESTING_DEPTH} nested objects and lists`);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x7b, 0x5b]);
const CLOSERS = new Set([0x7d, 0x5d]);

/** Whether JSON text (well formed or not) opens more than `max` objects and lists at once; strings are skipped. */
export function jsonTooDeep(text: string, max = MAX_NESTING_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++;
    } else if (OPENERS.has(c)) {
      if (++depth > max) return true;
    } else if (CLOSERS.has(c)) {
      depth--;
    }
  }
  return false;
}

/** Refuses JSON text nested deeper than the limit. */
export function checkJsonDepth(text: string, what?: string): void {
  if (jsonTooDeep(text)) throw tooDeep(what);
}

/**
 * Whether a decoded value nests deeper than `max`. Values may share parts
 * (YAML aliases), so each object is walked once at the deepest level it was
 * reached; a value that contains itself counts as too deep.
 */
export function valueTooDeep(value: unknown, max = MAX_NESTING_DEPTH): boolean {
  const deepest = new Map<object, number>();
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    if ((deepest.get(v) ?? 0) >= depth) continue;
    deepest.set(v, depth);
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Refuses a decoded value nested deeper than the limit; answers the value. */
export function checkValueDepth<T>(value: T, what?: string): T {
  if (valueTooDeep(value)) throw tooDeep(what);
  return value;
}

/** The CBOR argument at `i` for additional information `info`: [value, next index], value -1 when indefinite, NaN when malformed. */
function cborArgument(buf: Uint8Array, i: number, info: number): [number, number] {
  if (info < 24) return [info, i];
  if (info === 31) return [-1, i];
  const size = info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : info === 27 ? 8 : 0;
  if (size === 0 || i + size > buf.length) return [NaN, i];
  let value = 0;
  for (let k = 0; k < size; k++) value = value * 256 + buf[i + k];
  return [value, i + size];
}

/** Whether CBOR bytes nest arrays, maps and tags deeper than `max`; malformed bytes are left to the decoder. */
export function cborTooDeep(buf: Uint8Array, max = MAX_NESTING_DEPTH): boolean {
  // Items still expected by each open container, Infinity for an indefinite one.
  const open: number[] = [];
  const itemDone = () => {
    while (open.length && --open[open.length - 1] === 0) open.pop();
  };
  let i = 0;
  while (i < buf.length) {
    const head = buf[i++];
    if (head === 0xff) {
      open.pop();
      itemDone();
      continue;
    }
    const major = head >> 5;
    const [arg, next] = cborArgument(buf, i, head & 31);
    if (Number.isNaN(arg)) return false;
    i = next;
    const isString = major === 2 || major === 3;
    if (isString && arg >= 0) i += arg;
    // Arrays hold `arg` items, maps twice that, a tag one; an indefinite string holds chunks up to a break.
    const count = major === 4 ? arg : major === 5 ? arg * 2 : major === 6 ? 1 : isString && arg < 0 ? -1 : 0;
    const isContainer = (major >= 4 && major <= 6) || count < 0;
    if (isContainer && open.length + 1 > max) return true;
    if (count === 0) itemDone();
    else open.push(count < 0 ? Infinity : count);
  }
  return false;
}
