// Command-line flags: `--name=value`, `--name value` and bare boolean `--name`,
// declared once per program so the launcher can hand each flag to its owner.
import { parseDuration as goDuration } from '../apimachinery/protobuf/time.js';

const NANOS_PER_MS = 1e6;

/** `array` flags may be repeated: every occurrence is one value (which may hold commas). */
export type FlagType = 'string' | 'int' | 'bool' | 'duration' | 'list' | 'array';

export interface FlagSpec {
  type: FlagType;
  default?: string;
  help: string;
}
export type FlagSet = Record<string, FlagSpec>;

export class FlagError extends Error {}

/** Joins the occurrences of a repeated flag in one value; no argument can hold it. */
export const REPEAT_SEPARATOR = '\u0000';

/** Records one occurrence of a flag: repeatable ones add a value, others replace it. */
export function recordFlag(given: Map<string, string>, name: string, value: string, repeatable: boolean): void {
  const before = given.get(name);
  given.set(name, repeatable && before !== undefined ? `${before}${REPEAT_SEPARATOR}${value}` : value);
}

/** The `--name=value` arguments that hand recorded flags on, one per occurrence. */
export const flagArgs = (given: Map<string, string>): string[] =>
  [...given].flatMap(([name, value]) => value.split(REPEAT_SEPARATOR).map((v) => `--${name}=${v}`));

/** Milliseconds of a Go duration (`5m`, `1h30m`, `250ms`, `0`), as Go's flag package reads it. */
export function parseDuration(text: string): number {
  try {
    return goDuration(text) / NANOS_PER_MS;
  } catch {
    throw new FlagError(`invalid duration "${text}"`);
  }
}

export interface ParsedFlags {
  string(name: string): string;
  int(name: string): number;
  bool(name: string): boolean;
  duration(name: string): number;
  list(name: string): string[];
  /** Every occurrence of a repeatable flag. */
  array(name: string): string[];
  /** The flags given on the command line, as `--name=value` strings. */
  given: Map<string, string>;
}

/** Splits argv into name/value pairs, without checking names. */
export function splitArgs(argv: string[], isBool: (name: string) => boolean): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new FlagError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    if (eq > 0) { out.push([arg.slice(2, eq), arg.slice(eq + 1)]); continue; }
    const name = arg.slice(2);
    if (isBool(name) || i + 1 >= argv.length || argv[i + 1].startsWith('--')) out.push([name, 'true']);
    else out.push([name, argv[++i]]);
  }
  return out;
}

/** Parses argv against a flag set; unknown flags and bad values throw FlagError. */
export function parseFlags(argv: string[], spec: FlagSet): ParsedFlags {
  const given = new Map<string, string>();
  for (const [name, value] of splitArgs(argv, (n) => spec[n]?.type === 'bool')) {
    if (!spec[name]) throw new FlagError(`unknown flag --${name}`);
    recordFlag(given, name, value, spec[name].type === 'array');
  }
  const raw = (name: string): string => {
    if (!spec[name]) throw new FlagError(`flag --${name} is not declared`);
    return given.get(name) ?? spec[name].default ?? '';
  };
  const checked = <T>(name: string, parse: (v: string) => T, ok: (v: T) => boolean): T => {
    const value = parse(raw(name));
    if (!ok(value)) throw new FlagError(`invalid value "${raw(name)}" for --${name}`);
    return value;
  };
  for (const [name, s] of Object.entries(spec)) {
    if (s.type === 'int') checked(name, Number, Number.isInteger);
    if (s.type === 'bool') checked(name, (v) => v, (v) => v === 'true' || v === 'false' || v === '');
    if (s.type === 'duration' && raw(name) !== '') parseDuration(raw(name));
  }
  return {
    given,
    string: raw,
    int: (n) => Number(raw(n)),
    bool: (n) => raw(n) === 'true',
    duration: (n) => parseDuration(raw(n)),
    list: (n) => raw(n).split(',').map((s) => s.trim()).filter(Boolean),
    array: (n) => (given.has(n) ? given.get(n)!.split(REPEAT_SEPARATOR) : raw(n) === '' ? [] : [raw(n)]),
  };
}

/** A usage text listing every flag of a set. */
export function usage(program: string, spec: FlagSet): string {
  const lines = Object.entries(spec).map(([name, s]) =>
    `  --${name}${s.type === 'bool' ? '' : `=<${s.type}>`}\n      ${s.help}${s.default ? ` (default ${s.default})` : ''}`);
  return `Usage: ${program} [flags]\n\nFlags:\n${lines.join('\n')}\n`;
}

/** Parses process.argv for a program, printing usage and exiting 2 on a bad flag. */
export function parseArgsOrExit(program: string, spec: FlagSet): ParsedFlags {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) { process.stdout.write(usage(program, spec)); process.exit(0); }
  try {
    return parseFlags(argv, spec);
  } catch (err) {
    process.stderr.write(`${program}: ${(err as Error).message}\n\n${usage(program, spec)}`);
    process.exit(2);
  }
}
