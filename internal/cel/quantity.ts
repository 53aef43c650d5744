// Quantities as the platform writes resource amounts: "500m", "1.5Gi", "2e3".
// Values are kept exactly, in units of 10^-9, the finest precision a quantity
// has (smaller fractions round up, so asking for a little never yields nothing).
import { runtimeError } from './errors.js';
import { QUANTITY_TYPE } from './typenames.js';

type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const NANO = 1_000_000_000n;
const MAX_INT64 = 2n ** 63n - 1n;
const FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
// The suffix starts with a letter or sign, so each digit has one place: linear in the text's length.
const SHAPE = /^([+-]?)(\d*)(?:\.(\d*))?((?:[eEinumkKMGTP]+[-+]?|[-+])\d*|)$/;

/** Divides rounding away from zero, as amounts below the precision round up. */
function divideUp(n: bigint, d: bigint): bigint {
  const q = n / d;
  return n % d === 0n ? q : q + (n < 0n ? -1n : 1n);
}

function interpretSuffix(suffix: string): { base: 10n | 2n; exponent: number; format: Format } {
  if (suffix in DECIMAL_SUFFIXES) return { base: 10n, exponent: DECIMAL_SUFFIXES[suffix], format: 'DecimalSI' };
  if (suffix in BINARY_SUFFIXES) return { base: 2n, exponent: BINARY_SUFFIXES[suffix], format: 'BinarySI' };
  if (/^[eE][-+]?\d+$/.test(suffix)) return { base: 10n, exponent: Number(suffix.slice(1)), format: 'DecimalExponent' };
  throw runtimeError("unable to parse quantity's suffix");
}

export class Quantity {
  readonly celTypeName = QUANTITY_TYPE;

  constructor(readonly nanos: bigint, readonly format: Format) {}

  static parse(text: string): Quantity {
    const m = SHAPE.exec(text);
    if (!m || (m[2] === '' && (m[3] ?? '') === '')) throw runtimeError(FORMAT_WRONG);
    const [, sign, whole, frac = '', suffix] = m;
    const { base, exponent, format } = interpretSuffix(suffix);
    let scaled = BigInt(`${whole}${frac}` || '0') * NANO;
    let divisor = 10n ** BigInt(frac.length);
    if (base === 2n) scaled *= 2n ** BigInt(exponent);
    else if (exponent >= 0) scaled *= 10n ** BigInt(exponent);
    else divisor *= 10n ** BigInt(-exponent);
    let nanos = divideUp(scaled, divisor);
    if (format === 'BinarySI' && nanos > MAX_INT64 * NANO) nanos = MAX_INT64 * NANO;
    return new Quantity(sign === '-' ? -nanos : nanos, nanos === 0n && format === 'BinarySI' ? 'DecimalSI' : format);
  }

  static fromInt(n: bigint): Quantity {
    return new Quantity(n * NANO, 'DecimalExponent');
  }

  sign(): bigint {
    return this.nanos > 0n ? 1n : this.nanos < 0n ? -1n : 0n;
  }

  isInteger(): boolean {
    return this.nanos % NANO === 0n && this.nanos / NANO <= MAX_INT64 && this.nanos / NANO >= -MAX_INT64 - 1n;
  }

  asInteger(): bigint {
    if (!this.isInteger()) throw runtimeError('cannot convert value to integer');
    return this.nanos / NANO;
  }

  asApproximateFloat(): number {
    return Number(this.nanos) / 1e9;
  }

  compareTo(other: Quantity): bigint {
    return this.nanos < other.nanos ? -1n : this.nanos > other.nanos ? 1n : 0n;
  }

  add(other: Quantity): Quantity {
    return new Quantity(this.nanos + other.nanos, this.nanos === 0n ? other.format : this.format);
  }

  sub(other: Quantity): Quantity {
    return new Quantity(this.nanos - other.nanos, this.nanos === 0n ? other.format : this.format);
  }

  equals(other: unknown): boolean {
    return other instanceof Quantity && other.nanos === this.nanos;
  }

  /** The canonical text: the largest suffix that keeps the number whole. */
  toString(): string {
    const neg = this.nanos < 0n;
    const abs = neg ? -this.nanos : this.nanos;
    return (neg ? '-' : '') + (this.format === 'BinarySI' && abs % NANO === 0n ? binaryText(abs / NANO) : decimalText(abs, this.format));
  }

  toJSON(): string {
    return this.toString();
  }
}

function binaryText(value: bigint): string {
  const suffixes = Object.entries(BINARY_SUFFIXES).reverse();
  for (const [suffix, exp] of suffixes) {
    const unit = 2n ** BigInt(exp);
    if (value >= unit && value % unit === 0n) return `${value / unit}${suffix}`;
  }
  return decimalText(value * NANO, 'DecimalSI');
}

function decimalText(nanos: bigint, format: Format): string {
  if (nanos === 0n) return '0';
  let exp = -9;
  let mantissa = nanos;
  while (mantissa % 1000n === 0n && exp < 18) {
    mantissa /= 1000n;
    exp += 3;
  }
  if (format === 'DecimalExponent') return exp === 0 ? `${mantissa}` : `${mantissa}e${exp}`;
  const suffix = Object.keys(DECIMAL_SUFFIXES).find((k) => DECIMAL_SUFFIXES[k] === exp)!;
  return `${mantissa}${suffix}`;
}

export function isQuantity(text: string): boolean {
  try { Quantity.parse(text); return true; } catch { return false; }
}
