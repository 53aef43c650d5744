// The JSON forms of the special time types: `Time` (RFC 3339, seconds),
// `MicroTime` (RFC 3339 with six fractional digits) and `Duration` (Go's
// duration syntax such as `1h2m3.5s`), always in UTC on output. Dates are
// converted with integer civil-calendar arithmetic: every object in a list
// carries a few timestamps, so this is on the hot path.
import { ProtobufError } from './errors.js';

export interface Timestamp {
  seconds: number;
  nanos: number;
}

const DAY = 86400;

/** Days since 1970-01-01 of a proleptic Gregorian date (month 1-12). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

/** The inverse of daysFromCivil: [year, month, day]. */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, dayOfYear - Math.floor((153 * mp + 2) / 5) + 1];
}

/** The number in s[from, to), all digits; -1 otherwise. */
function digits(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`. */
export function parseTime(s: string): Timestamp {
  const invalid = (): never => { throw new ProtobufError(`invalid RFC 3339 time ${JSON.stringify(s)}`); };
  if (s.length < 20 || s[4] !== '-' || s[7] !== '-' || (s[10] !== 'T' && s[10] !== 't') || s[13] !== ':' || s[16] !== ':') invalid();
  const [year, month, day, hour, minute, second] = [digits(s, 0, 4), digits(s, 5, 7), digits(s, 8, 10), digits(s, 11, 13), digits(s, 14, 16), digits(s, 17, 19)];
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) invalid();
  let i = 19;
  let nanos = 0;
  if (s[i] === '.') {
    const start = ++i;
    while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
    if (i === start || i - start > 9) invalid();
    nanos = digits(s, start, i) * 10 ** (9 - (i - start));
  }
  let offset = 0;
  if (s.length === i + 1 && (s[i] === 'Z' || s[i] === 'z')) offset = 0;
  else if (s.length === i + 6 && (s[i] === '+' || s[i] === '-') && s[i + 3] === ':') {
    const hours = digits(s, i + 1, i + 3);
    const minutes = digits(s, i + 4, i + 6);
    if (hours < 0 || minutes < 0) invalid();
    offset = (s[i] === '-' ? -1 : 1) * (hours * 3600 + minutes * 60);
  } else invalid();
  return { seconds: daysFromCivil(year, month, day) * DAY + hour * 3600 + minute * 60 + second - offset, nanos };
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

export function formatTime(seconds: number, nanos: number, fractionDigits: 0 | 6): string {
  const days = Math.floor(seconds / DAY);
  const [year, month, day] = civilFromDays(days);
  const rest = seconds - days * DAY;
  const time = `${pad2(Math.floor(rest / 3600))}:${pad2(Math.floor((rest % 3600) / 60))}:${pad2(rest % 60)}`;
  const fraction = fractionDigits ? `.${String(Math.floor(nanos / 1000)).padStart(6, '0')}` : '';
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}T${time}${fraction}Z`;
}
const UNITS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
// A number has one way to split around its point, so a long run of digits without a unit fails in linear time.
const DURATION_PART = /(\d*(?:\.\d*)?)(ns|us|µs|μs|ms|s|m|h)/y;

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
  const width = String(size).length - 1;
  return `${whole}.${String(rest).padStart(width, '0').replace(/0+$/, '')}`;
}

/** A time as the platform writes it back: UTC, with no fraction (`Time`) or six digits (`MicroTime`);
 * undefined for a string that is no RFC 3339 time. */
export function canonicalTime(s: string, fractionDigits: 0 | 6): string | undefined {
  try {
    const t = parseTime(s);
    return formatTime(t.seconds, t.nanos, fractionDigits);
  } catch {
    return undefined;
  }
}
