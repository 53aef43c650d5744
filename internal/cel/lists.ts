// List library: order, sum, extremes and positions of list elements.
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { runtimeError } from './errors.js';
import { celEquals, compareValues } from './values.js';

const MAX_INT = 2n ** 63n - 1n;
const MIN_INT = -(2n ** 63n);

export function isSorted(list: readonly unknown[]): boolean {
  for (let i = 1; i < list.length; i++) if (compareValues(list[i - 1], list[i]) > 0) return false;
  return true;
}

function add(a: unknown, b: unknown): unknown {
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    const r = a + b;
    if (r > MAX_INT || r < MIN_INT) throw runtimeError('integer overflow');
    return r;
  }
  if (typeof a === 'number' && typeof b === 'number') return a + b;
  if (a instanceof UnsignedInt && b instanceof UnsignedInt) {
    try { return new UnsignedInt(a.valueOf() + b.valueOf()); } catch { throw runtimeError('unsigned integer overflow'); }
  }
  if (a instanceof Duration && b instanceof Duration) return a.addDuration(b);
  throw runtimeError('no such overload: sum of mixed element types');
}

/** Sum of the elements, starting from the zero of the element type. */
export function sum(list: readonly unknown[], zero: unknown): unknown {
  return list.reduce((acc, x) => add(acc, x), zero);
}

function extreme(name: string, list: readonly unknown[], prefer: number): unknown {
  if (list.length === 0) throw runtimeError(`${name} called on empty list`);
  let best = list[0];
  for (let i = 1; i < list.length; i++) if (Math.sign(compareValues(best, list[i])) === prefer) best = list[i];
  return best;
}

export const min = (list: readonly unknown[]): unknown => extreme('min', list, 1);
export const max = (list: readonly unknown[]): unknown => extreme('max', list, -1);

export function indexOf(list: readonly unknown[], item: unknown): bigint {
  return BigInt(list.findIndex((x) => celEquals(x, item)));
}

export function lastIndexOf(list: readonly unknown[], item: unknown): bigint {
  return BigInt(list.findLastIndex((x) => celEquals(x, item)));
}
