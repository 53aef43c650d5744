// Cron schedules (five fields or a descriptor) and IANA time zones of CronJobs.
import { invalid, type Causes } from '../causes.js';

interface FieldRange {
  min: number;
  max: number;
  names?: string[];
}

const FIELDS: FieldRange[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] },
  { min: 0, max: 6, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];
const DESCRIPTORS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];
const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const TIME_ZONE_PART = /^[A-Za-z.\-_0-9+]{1,14}$/;

function value(text: string, r: FieldRange): number {
  const named = r.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return named + r.min;
  if (!/^\d+$/.test(text)) throw new Error(`failed to parse int from ${text}: strconv.Atoi: parsing "${text}": invalid syntax`);
  return Number(text);
}

/** One comma-separated part of a field: `*`, `?`, `a`, `a-b`, each optionally `/step`. */
function checkRange(expr: string, r: FieldRange): void {
  const [range, step, extra] = expr.split('/');
  if (extra !== undefined) throw new Error(`too many slashes: ${expr}`);
  let [low, high] = [r.min, r.max];
  if (range !== '*' && range !== '?') {
    const [a, b, more] = range.split('-');
    if (more !== undefined) throw new Error(`too many hyphens: ${expr}`);
    low = value(a, r);
    high = b === undefined ? (step === undefined ? low : r.max) : value(b, r);
  }
  if (step !== undefined && (!/^\d+$/.test(step) || Number(step) === 0)) throw new Error(`step of range should be a positive number: ${expr}`);
  if (low < r.min) throw new Error(`beginning of range (${low}) below minimum (${r.min}): ${expr}`);
  if (high > r.max) throw new Error(`end of range (${high}) above maximum (${r.max}): ${expr}`);
  if (low > high) throw new Error(`beginning of range (${low}) beyond end of range (${high}): ${expr}`);
}

function parseStandard(schedule: string): void {
  if (schedule.startsWith('@')) {
    if (DESCRIPTORS.includes(schedule)) return;
    if (schedule.startsWith('@every ') && DURATION.test(schedule.slice(7))) return;
    throw new Error(`unrecognized descriptor: ${schedule}`);
  }
  const fields = schedule.trim().split(/\s+/).filter((f) => !/^(CRON_)?TZ=/.test(f));
  if (fields.length !== 5) throw new Error(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  fields.forEach((f, i) => f.split(',').forEach((part) => checkRange(part, FIELDS[i])));
}

export function validateCronSchedule(field: string, schedule: string, timeZone: unknown): Causes {
  const causes: Causes = [];
  try {
    parseStandard(schedule);
  } catch (err) {
    causes.push(invalid(field, schedule, (err as Error).message));
  }
  if (schedule.includes('TZ')) {
    causes.push(invalid(field, schedule, timeZone !== undefined ? 'cannot use both timeZone field and TZ or CRON_TZ in schedule' : 'cannot use TZ or CRON_TZ in schedule, use timeZone field instead'));
  }
  return causes;
}

export function validateTimeZone(field: string, timeZone: string): Causes {
  if (timeZone === '') return [invalid(field, timeZone, 'timeZone must be nil or non-empty string')];
  if (timeZone.split('/').some((p) => p === '.' || p === '..' || p.startsWith('-') || !TIME_ZONE_PART.test(p))) {
    return [invalid(field, timeZone, `unknown time zone ${timeZone}`)];
  }
  if (timeZone.toLowerCase() === 'local') return [invalid(field, timeZone, 'timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones')];
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return [];
  } catch {
    return [invalid(field, timeZone, `unknown time zone ${timeZone}`)];
  }
}
