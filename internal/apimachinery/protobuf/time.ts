// The JSON forms of the special time types: `Time` (RFC 3339, seconds),
// `MicroTime` (RFC 3339 with six fractional digits) and `Duration` (Go's
// duration syntax such as `1h2m3.5s`), always in UTC on output.
import { ProtobufError } from './errors.js';

export interface Timestamp {
  seconds: number;
  nanos: number;
}

const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d\d):(\d\d))$/;

export function parseTime(s: string): Timestamp {
  const m = RFC3339.exec(s);
  if (!m) throw new ProtobufError(`invalid RFC 3339 time ${JSON.stringify(s)}`);
  const offset = m[8] ? (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 3600 + Number(m[10]) * 60) : 0;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear puts them back.
  const date = new Date(ms);
  date.setUTCFullYear(Number(m[1]));
  return { seconds: date.getTime() / 1000 - offset, nanos: m[7] ? Number(m[7].padEnd(9, '0')) : 0 };
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

export function formatTime(seconds: number, nanos: number, fractionDigits: 0 | 6): string {
  const d = new Date(seconds * 1000);
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const fraction = fractionDigits ? `.${pad(Math.floor(nanos / 1000), 6)}` : '';
  return `${date}T${time}${fraction}Z`;
}

const UNITS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
const DURATION_PART = /(\d*\.?\d*)(ns|us|µs|μs|ms|s|m|h)/y;

/** Nanoseconds of a Go duration string such as `-1h30m` or `1.5s`. */
export function parseDuration(s: string): number {
  const sign = s.startsWith('-') ? -1 : 1;
  const body = s.replace(/^[+-]/, '');
  if (body === '0') return 0;
  let total = 0;
  DURATION_PART.lastIndex = 0;
  while (DURATION_PART.lastIndex < body.length) {
    const m = DURATION_PART.exec(body);
    if (!m || m[1] === '' || m[1] === '.') throw new ProtobufError(`invalid duration ${JSON.stringify(s)}`);
    total += Number(m[1]) * UNITS[m[2]];
  }
  if (body === '') throw new ProtobufError(`invalid duration ${JSON.stringify(s)}`);
  return sign * Math.round(total);
}

/** Go's `Duration.String()`: `1h2m3.5s`, `1.5ms`, `0s`. */
export function formatDuration(nanos: number): string {
  if (nanos === 0) return '0s';
  const sign = nanos < 0 ? '-' : '';
  let n = Math.abs(nanos);
  if (n < 1e9) {
    const [unit, size] = n < 1e3 ? ['ns', 1] : n < 1e6 ? ['µs', 1e3] : ['ms', 1e6];
    return `${sign}${trimFraction(n, size)}${unit}`;
  }
  const h = Math.floor(n / 3600e9);
  n -= h * 3600e9;
  const m = Math.floor(n / 60e9);
  n -= m * 60e9;
  const secs = `${trimFraction(n, 1e9)}s`;
  return sign + (h ? `${h}h${m}m${secs}` : m ? `${m}m${secs}` : secs);
}

/** `n / size` with the fraction's trailing zeros dropped, computed on integers to stay exact. */
function trimFraction(n: number, size: number): string {
  const whole = Math.floor(n / size);
  const rest = n - whole * size;
  if (rest === 0) return String(whole);
  const digits = String(size).length - 1;
  return `${whole}.${String(rest).padStart(digits, '0').replace(/0+$/, '')}`;
}
