// Sets of completion indexes as ordered, disjoint, non-adjacent intervals, and
// their text form in a Job's status (`1,3-5,7`; two neighbours as `1,2`).

/** Inclusive [first, last] intervals, ascending, with a gap between any two. */
export type Intervals = [number, number][];

/** The intervals of `text`, leniently as a controller reads what it wrote: bad fragments are skipped,
 * indexes at or above `completions` dropped. */
export function parseIndexes(text: string | undefined, completions: number): Intervals {
  const out: Intervals = [];
  if (!text) return out;
  for (const fragment of text.split(',')) {
    const [a, b] = fragment.split('-');
    const first = Number(a);
    if (!/^\d+$/.test(a ?? '')) continue;
    if (first >= completions) break;
    let last = first;
    if (b !== undefined) {
      if (!/^\d+$/.test(b)) continue;
      last = Math.min(Number(b), completions - 1);
    }
    const prev = out[out.length - 1];
    if (prev && prev[1] === first - 1) prev[1] = last;
    else out.push([first, last]);
  }
  return out;
}

/** Both sets as one. */
export function mergeIndexes(a: Intervals, b: Intervals): Intervals {
  const all = [...a, ...b].sort((x, y) => x[0] - y[0]);
  const out: Intervals = [];
  for (const [first, last] of all) {
    const prev = out[out.length - 1];
    if (prev && first <= prev[1] + 1) prev[1] = Math.max(prev[1], last);
    else out.push([first, last]);
  }
  return out;
}

export const withIndexes = (set: Intervals, indexes: Iterable<number>): Intervals =>
  mergeIndexes(set, [...indexes].map((i): [number, number] => [i, i]));

export function formatIndexes(set: Intervals): string {
  return set.map(([first, last]) => (last === first ? `${first}` : `${first}${last === first + 1 ? ',' : '-'}${last}`)).join(',');
}

export const hasIndex = (set: Intervals | undefined, ix: number): boolean => (set ?? []).some(([first, last]) => first <= ix && ix <= last);

export const countIndexes = (set: Intervals | undefined): number => (set ?? []).reduce((n, [first, last]) => n + last - first + 1, 0);

/** The `count` lowest indexes below `completions` outside `taken`. */
export function firstFreeIndexes(taken: Intervals, count: number, completions: number): number[] {
  const out: number[] = [];
  let candidate = 0;
  for (const [first, last] of taken) {
    for (; candidate < completions && out.length < count && candidate < first; candidate++) out.push(candidate);
    candidate = Math.max(candidate, last + 1);
  }
  for (; candidate < completions && out.length < count; candidate++) out.push(candidate);
  return out;
}
