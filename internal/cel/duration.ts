// Durations written as in the platform's APIs: "1h30m", "-1.5s", "300ms".
import { Duration } from '@marcbachmann/cel-js/evaluator';

const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n, us: 1_000n, 'µs': 1_000n, 'μs': 1_000n, ms: 1_000_000n, s: 1_000_000_000n,
  m: 60_000_000_000n, h: 3_600_000_000_000n,
};
const TERM = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;
/** The range of a duration: a signed 64-bit count of nanoseconds, about ±292 years. */
const MAX_NANOS = 2n ** 63n - 1n;

/** Parses a duration; undefined when the text is not one. */
export function parseDuration(text: string): Duration | undefined {
  let rest = text;
  const negative = rest.startsWith('-');
  if (negative || rest.startsWith('+')) rest = rest.slice(1);
  if (rest === '0') return new Duration(0, 0);
  if (rest === '') return undefined;
  let nanos = 0n;
  while (rest !== '') {
    const m = TERM.exec(rest);
    if (!m || (m[1] === '' && !m[2])) return undefined;
    const unit = UNIT_NANOS[m[3]];
    const frac = (m[2] ?? '').slice(0, 18);
    nanos += BigInt(m[1] || '0') * unit + (frac ? (BigInt(frac) * unit) / 10n ** BigInt(frac.length) : 0n);
    rest = rest.slice(m[0].length);
  }
  if (nanos > MAX_NANOS) return undefined;
  return Duration.fromNanos(negative ? -nanos : nanos);
}

