// Resource quantities as quota adds and compares them: exact (a whole number of
// nano-units), keeping the format a quantity was written in (`Ki`-style binary,
// decimal SI, or exponent) so sums print as the platform prints them
// (`1500m`, `2Gi`, `3`). Lists of named quantities (`ResourceList`) and their
// arithmetic: add, subtract, mask, compare.

export type Format = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

export interface Quantity {
  /** The value in nano-units (1 = 1e-9). */
  readonly nanos: bigint;
  readonly format: Format;
}

export type ResourceList = Record<string, Quantity>;

const NANO = 10n ** 9n;
const DECIMAL_EXPONENTS: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_POWERS: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const QUANTITY = /^([+-]?)(\d*)(?:\.(\d*))?(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;

export const ZERO: Quantity = { nanos: 0n, format: 'DecimalSI' };

/** An integer count (decimal). */
export const count = (n: number): Quantity => ({ nanos: BigInt(n) * NANO, format: 'DecimalSI' });

/** `value * 10^exp` rounded up to a whole nano-unit, as the platform rounds quantities finer than 1n. */
function scaled(value: bigint, exp: number): bigint {
  if (exp >= 0) return value * 10n ** BigInt(exp);
  const div = 10n ** BigInt(-exp);
  const q = value / div;
  return value % div === 0n ? q : value > 0n ? q + 1n : q;
}

/** A quantity from its text (or a JSON number); undefined when it is not one. */
export function parseQuantity(text: unknown): Quantity | undefined {
  if (typeof text === 'number' && Number.isFinite(text)) text = String(text);
  if (typeof text !== 'string') return undefined;
  const m = QUANTITY.exec(text);
  if (!m || (!m[2] && !m[3])) return undefined;
  const [, sign, whole, fraction = '', exponent, suffix] = m;
  let digits = BigInt(`${whole || '0'}${fraction}`);
  if (sign === '-') digits = -digits;
  if (suffix && suffix in BINARY_POWERS) {
    return { nanos: scaled(digits * 1024n ** BigInt(BINARY_POWERS[suffix]), 9 - fraction.length), format: 'BinarySI' };
  }
  const exp = exponent ? Number(exponent.slice(1)) : DECIMAL_EXPONENTS[suffix ?? ''];
  return { nanos: scaled(digits, exp + 9 - fraction.length), format: exponent ? 'DecimalExponent' : 'DecimalSI' };
}

const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const DECIMAL_SUFFIXES: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };

/** The canonical text: the largest suffix that leaves a whole number (binary only for whole values of 1Ki or more). */
export function formatQuantity(q: Quantity): string {
  if (q.nanos === 0n) return '0';
  const sign = q.nanos < 0n ? '-' : '';
  const abs = q.nanos < 0n ? -q.nanos : q.nanos;
  if (q.format === 'BinarySI' && abs % NANO === 0n && abs >= 1024n * NANO) {
    const whole = abs / NANO;
    let power = BINARY_SUFFIXES.length - 1;
    while (whole % 1024n ** BigInt(power) !== 0n) power--;
    return `${sign}${whole / 1024n ** BigInt(power)}${BINARY_SUFFIXES[power]}`;
  }
  let exp = 18;
  while (exp > -9 && abs % 10n ** BigInt(exp + 9) !== 0n) exp -= 3;
  const mantissa = abs / 10n ** BigInt(exp + 9);
  const suffix = q.format === 'DecimalExponent' ? (exp === 0 ? '' : `e${exp}`) : DECIMAL_SUFFIXES[exp];
  return `${sign}${mantissa}${suffix}`;
}

export const addQuantities = (a: Quantity, b: Quantity): Quantity =>
  ({ nanos: a.nanos + b.nanos, format: a.nanos === 0n ? b.format : a.format });

/** A list from its JSON form; values that are not quantities are left out. */
export function parseList(json: unknown): ResourceList {
  const out: ResourceList = {};
  if (!json || typeof json !== 'object') return out;
  for (const [name, text] of Object.entries(json as Record<string, unknown>)) {
    const q = parseQuantity(text);
    if (q) out[name] = q;
  }
  return out;
}

export function listToJSON(list: ResourceList): Record<string, string> {
  return Object.fromEntries(Object.keys(list).sort().map((k) => [k, formatQuantity(list[k])]));
}

export function add(a: ResourceList, b: ResourceList): ResourceList {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = out[k] ? addQuantities(out[k], v) : v;
  return out;
}

/** a - b for the names of a; with nonNegative, a difference below zero counts as zero. */
export function subtract(a: ResourceList, b: ResourceList, nonNegative = false): ResourceList {
  const out: ResourceList = {};
  for (const [k, v] of Object.entries(a)) {
    const nanos = v.nanos - (b[k]?.nanos ?? 0n);
    out[k] = { nanos: nonNegative && nanos < 0n ? 0n : nanos, format: v.format };
  }
  return out;
}

/** The entries of list whose names are in names. */
export function mask(list: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = {};
  for (const n of names) if (list[n]) out[n] = list[n];
  return out;
}

/** Whether every entry of a is at most b's entry of that name (names b lacks are not limited); the names over it. */
export function lessThanOrEqual(a: ResourceList, b: ResourceList): string[] {
  return Object.keys(a).filter((k) => b[k] !== undefined && a[k].nanos > b[k].nanos).sort();
}

export const removeZeros = (list: ResourceList): ResourceList =>
  Object.fromEntries(Object.entries(list).filter(([, v]) => v.nanos !== 0n));

export const negatives = (list: ResourceList): string[] => Object.keys(list).filter((k) => list[k].nanos < 0n).sort();

export function equalLists(a: ResourceList, b: ResourceList): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => b[k] !== undefined && b[k].nanos === a[k].nanos);
}

/** `name=value` pairs by name, comma-separated, as quota refusals print lists. */
export const prettyPrint = (list: ResourceList): string =>
  Object.keys(list).sort().map((k) => `${k}=${formatQuantity(list[k])}`).join(',');
