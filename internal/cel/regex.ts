// Regular expressions in RE2 syntax, run by an RE2 engine (re2js): the same
// syntax, errors and matches as on any other implementation of the platform,
// and time linear in the input whatever the pattern, so no rule can stall a
// server on a crafted value.
import { RE2JS } from 're2js';
import { runtimeError } from './errors.js';

const cache = new Map<string, RE2JS>();
const CACHE_LIMIT = 1000;

/** Compiles an RE2 pattern; throws a runtime error naming the fault when it is invalid. */
export function compileRegex(pattern: string): RE2JS {
  const hit = cache.get(pattern);
  if (hit) return hit;
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (err) {
    throw runtimeError((err as Error).message);
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(pattern, re);
  return re;
}

export function matches(s: string, pattern: string): boolean {
  return compileRegex(pattern).matcher(s).find();
}

/** The first match, or the empty string. */
export function find(s: string, pattern: string): string {
  const m = compileRegex(pattern).matcher(s);
  return m.find() ? m.group() ?? '' : '';
}

/** Successive non-overlapping matches, at most limit of them when limit is not negative. */
export function findAll(s: string, pattern: string, limit = -1n): string[] {
  const m = compileRegex(pattern).matcher(s);
  const out: string[] = [];
  let pos = 0;
  let prevEnd = -1;
  while ((limit < 0n || out.length < Number(limit)) && pos <= s.length && m.find(pos)) {
    const start = m.start();
    const end = m.end();
    // An empty match right after the previous match does not count.
    if (!(start === end && start === prevEnd)) out.push(m.group() ?? '');
    pos = end > start ? end : end + ((s.codePointAt(end) ?? 0) > 0xffff ? 2 : 1);
    prevEnd = end;
  }
  return out;
}
