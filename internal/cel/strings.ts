// Extended string library. Indexes count code points, not UTF-16 units, and the
// case functions touch ASCII letters only.
import { runtimeError } from './errors.js';
import { codePoints } from './values.js';

const toIndex = (n: bigint): number => Number(n);
const outOfRange = (n: bigint | number) => runtimeError(`index out of range: ${n}`);

export function charAt(s: string, index: bigint): string {
  const cps = codePoints(s);
  const i = toIndex(index);
  if (i < 0 || i > cps.length) throw outOfRange(index);
  return i === cps.length ? '' : cps[i];
}

function findFrom(cps: string | string[], sub: string | string[], from: number, step: 1 | -1): number {
  for (let i = from; i >= 0 && i <= cps.length - sub.length; i += step) {
    let j = 0;
    while (j < sub.length && cps[i + j] === sub[j]) j++;
    if (j === sub.length) return i;
  }
  return -1;
}

export function indexOf(s: string, sub: string, offset = 0n): bigint {
  if (sub === '') return offset;
  const cps = codePoints(s);
  const off = toIndex(offset);
  if (off < 0) throw outOfRange(offset);
  // An offset past the end finds nothing, as the platform's string library answers.
  if (off >= cps.length) return -1n;
  return BigInt(findFrom(cps, codePoints(sub), off, 1));
}

export function lastIndexOf(s: string, sub: string, offset?: bigint): bigint {
  const cps = codePoints(s);
  const subCps = codePoints(sub);
  if (offset === undefined) return sub === '' ? BigInt(cps.length) : BigInt(findFrom(cps, subCps, cps.length - subCps.length, -1));
  if (sub === '') return offset;
  const off = toIndex(offset);
  if (off < 0 || off >= cps.length) throw outOfRange(offset);
  return BigInt(findFrom(cps, subCps, Math.min(off, cps.length - subCps.length), -1));
}

export const lowerAscii = (s: string): string => s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
export const upperAscii = (s: string): string => s.replace(/[a-z]+/g, (m) => m.toUpperCase());

/** Replaces up to n occurrences (all when n is negative); an empty old inserts between code points. */
export function replace(s: string, old: string, replacement: string, n = -1n): string {
  if (n === 0n) return s;
  if (old !== '') {
    if (n < 0n) return s.split(old).join(replacement);
    const parts = s.split(old);
    const count = Math.min(Number(n), parts.length - 1);
    return parts.slice(0, count + 1).join(replacement) + (count < parts.length - 1 ? old + parts.slice(count + 1).join(old) : '');
  }
  const cps = Array.from(s);
  const limit = n < 0n ? cps.length + 1 : Number(n);
  let out = '';
  for (let i = 0; i <= cps.length; i++) out += (i < limit ? replacement : '') + (cps[i] ?? '');
  return out;
}

/** Splits around sep; with n, at most n parts (none when n is 0, all when negative). */
export function split(s: string, sep: string, n = -1n): string[] {
  if (n === 0n) return [];
  const parts = sep === '' ? Array.from(s) : s.split(sep);
  if (n < 0n || parts.length <= Number(n)) return parts;
  const head = parts.slice(0, Number(n) - 1);
  const tail = sep === '' ? parts.slice(Number(n) - 1).join('') : parts.slice(Number(n) - 1).join(sep);
  return [...head, tail];
}

export function substring(s: string, start: bigint, end?: bigint): string {
  const cps = codePoints(s);
  const size = BigInt(cps.length);
  if (end !== undefined && start > end) throw runtimeError(`invalid substring range. start: ${start}, end: ${end}`);
  if (start < 0n || start > size) throw outOfRange(start);
  if (end !== undefined && (end < 0n || end > size)) throw outOfRange(end);
  const part = cps.slice(Number(start), end === undefined ? undefined : Number(end));
  return typeof part === 'string' ? part : part.join('');
}

// Unicode White_Space, as the platform trims it (no zero-width characters).
const SPACE = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const IS_SPACE = new RegExp(`^${SPACE}$`);

/** Trims by scanning from both ends: a pattern anchored at the end backtracks over every run of spaces. */
export function trim(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && IS_SPACE.test(s[start])) start++;
  while (end > start && IS_SPACE.test(s[end - 1])) end--;
  return s.slice(start, end);
}

export function join(list: readonly unknown[], sep = ''): string {
  for (const item of list) if (typeof item !== 'string') throw runtimeError('join: list must contain only strings');
  return list.join(sep);
}
