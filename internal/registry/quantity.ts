// Resource quantities (`500m`, `1Gi`, `2e3`) as numbers, for comparisons.

const SUFFIXES: Record<string, number> = {
  n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};
// Each digit has one place in the expression, so a long non-quantity fails in linear time.
const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?)$/;

/** The value of a quantity, or undefined when it is not one. */
export function parseQuantity(q: unknown): number | undefined {
  if (typeof q === 'number') return q;
  if (typeof q !== 'string') return undefined;
  const m = QUANTITY.exec(q);
  if (!m) return undefined;
  const base = Number(m[1]);
  return m[2] ? base * 10 ** Number(m[2].slice(1)) : base * SUFFIXES[m[3] ?? ''];
}
