// Runs every benchmark, one after another so they do not compete for the CPU,
// and prints the figures as one aligned table per area. A benchmark module that
// is missing or fails is skipped with the reason; a failure makes the exit code 1.
import { fileURLToPath } from 'node:url';

type Row = Record<string, unknown>;

interface Bench { module: string; fn: string; area: string }

const BENCHES: Bench[] = [
  { module: 'storage', fn: 'benchStorage', area: 'layers' },
  { module: 'api', fn: 'benchApi', area: 'layers' },
  { module: 'protobuf', fn: 'benchProtobuf', area: 'Protobuf and JSON codecs' },
  { module: 'cel', fn: 'benchCel', area: 'CEL' },
];
let failures = 0;

const LAYERS_TITLE = 'Writes, reads and event delivery, layer by layer (HTTPS → services → storage → LevelDB / NATS)';
/** Groups the layer rows by operation, and within one from the outermost layer in. */
const OPERATIONS: Array<[string, RegExp]> = [['write', /create|put/i], ['read', /get|list/i], ['event', /watch|publish|nats/i]];
const LAYERS: Array<[string, RegExp]> = [['https', /^https/i], ['storage', /^store/i], ['leveldb', /leveldb/i], ['nats', /^nats/i]];

const HEADERS: Record<string, string> = { name: 'benchmark', opsPerSec: 'ops/s', p50Ms: 'p50 ms', p99Ms: 'p99 ms' };

function cell(key: string, value: unknown): string {
  if (typeof value !== 'number') return value === undefined ? '' : String(value);
  if (!Number.isFinite(value)) return '-';
  return key.endsWith('Ms') ? value.toFixed(2) : Math.round(value).toLocaleString('en-US');
}

/** An aligned text table; columns are the keys of the rows in order of first appearance. */
function table(title: string, rows: Row[]): string {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = [keys.map((k) => HEADERS[k] ?? k), ...rows.map((r) => keys.map((k) => cell(k, r[k])))];
  const widths = keys.map((_, c) => Math.max(...cells.map((line) => line[c].length)));
  const numeric = keys.map((k) => rows.every((r) => r[k] === undefined || typeof r[k] === 'number'));
  const render = (line: string[]) => line.map((v, c) => (numeric[c] ? v.padStart(widths[c]) : v.padEnd(widths[c]))).join('  ').trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [title, render(cells[0]), rule, ...cells.slice(1).map(render)].join('\n');
}

function byOperation(rows: Row[]): Row[] {
  const rank = (table: Array<[string, RegExp]>, r: Row) => {
    const i = table.findIndex(([, re]) => re.test(String(r.name)));
    return i < 0 ? table.length : i;
  };
  const sorted = [...rows].sort((a, b) => rank(OPERATIONS, a) - rank(OPERATIONS, b) || rank(LAYERS, a) - rank(LAYERS, b));
  return sorted.map((r) => ({ operation: OPERATIONS[rank(OPERATIONS, r)]?.[0] ?? 'other', layer: LAYERS[rank(LAYERS, r)]?.[0] ?? '', ...r }));
}

/** Loads and runs one benchmark; undefined (after saying why) when it is missing or fails. */
async function run(b: Bench): Promise<Row[] | undefined> {
  const url = new URL(`./${b.module}.bench.js`, import.meta.url).href;
  let mod: Record<string, unknown>;
  try {
    mod = await import(url);
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && String((err as Error).message).includes(fileURLToPath(url));
    console.log(missing ? `skipped ${b.module}: test/bench/${b.module}.bench.ts is not there` : `skipped ${b.module}: cannot load: ${(err as Error).message}`);
    if (!missing) failures++;
    return undefined;
  }
  if (typeof mod[b.fn] !== 'function') {
    console.log(`skipped ${b.module}: it exports no ${b.fn}()`);
    return undefined;
  }
  const started = performance.now();
  try {
    const rows = await (mod[b.fn] as () => Promise<Row[]>)();
    console.log(`ran ${b.module} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return rows;
  } catch (err) {
    console.log(`skipped ${b.module}: it failed: ${(err as Error).stack ?? err}`);
    failures++;
    return undefined;
  }
}

const areas = new Map<string, Row[]>();
for (const b of BENCHES) {
  const rows = await run(b);
  if (rows) areas.set(b.area, [...(areas.get(b.area) ?? []), ...rows]);
}
for (const [area, rows] of areas) {
  console.log(`\n${area === 'layers' ? table(LAYERS_TITLE, byOperation(rows)) : table(area, rows)}`);
}
process.exit(failures > 0 ? 1 : 0);
