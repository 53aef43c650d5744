// Runs every benchmark, one after another so they do not compete for the CPU:
// etcd first, then the API (the report sets each of its figures beside etcd's and
// beside the targets), then the parts, each as one aligned table. A benchmark module
// that is missing or fails is skipped with the reason; a failure makes the exit code 1.
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { rowsTable } from './table.js';
import { report } from './report.js';
import type { ApiFigures, EtcdFigures } from './figures.js';

type Row = Record<string, unknown>;

interface Bench { module: string; fn: string }

/** The API and its peer, set side by side in one report. */
const PEER: Bench = { module: 'etcd', fn: 'benchEtcd' };
const API: Bench = { module: 'api', fn: 'benchApi' };
/** Benchmarks of parts, each printed as its own table. */
const PARTS: Array<Bench & { area: string }> = [
  { module: 'storage', fn: 'benchStorage', area: 'Storage in-process: LevelDB, group commit, NATS hop' },
  { module: 'backends', fn: 'benchBackends', area: 'Storage backends through the API (HTTPS, ConfigMaps of ~1 KB), a fresh cluster each: LevelDB, then etcd3 on 3 local '
    + 'etcd members; CPU ms per request summed over our processes (nats-server included), on etcd3 plus the members\'; the CPU ratio counts both' },
  { module: 'protobuf', fn: 'benchProtobuf', area: 'Protobuf and JSON codecs' },
  { module: 'cel', fn: 'benchCel', area: 'CEL' },
  { module: 'crd', fn: 'benchCrd', area: 'Custom resources: creates with two validation rules beside ConfigMap creates' },
  { module: 'webhooks', fn: 'benchWebhooks', area: 'Admission webhooks: creates through one mutating and one validating webhook beside plain creates' },
];
let failures = 0;

/** Loads and runs one benchmark; undefined (after saying why) when it is missing or fails. */
async function run<T>(b: Bench): Promise<T | undefined> {
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
    const result = await (mod[b.fn] as () => Promise<T>)();
    console.log(`ran ${b.module} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return result;
  } catch (err) {
    console.log(`skipped ${b.module}: it failed: ${(err as Error).stack ?? err}`);
    failures++;
    return undefined;
  }
}

const loadAtStart = loadavg()[0];
if (process.env.BENCH === 'watch') {
  // The watch fan-out alone, on a cluster of its own: a quick loop for work on it.
  await import('./watch.js').then((m) => m.benchWatchAlone());
  process.exit(0);
}
if (process.env.BENCH === 'create') {
  // Creates alone, on a cluster of their own: a quick loop for work on the write path.
  await import('./creates.js').then((m) => m.benchCreatesAlone());
  process.exit(0);
}
if (process.env.BENCH === 'list') {
  // Lists of 10k ConfigMaps alone, on a cluster of their own: a quick loop for work on the list path.
  await import('./api.bench.js').then((m) => m.benchListAlone());
  process.exit(0);
}
if (process.env.BENCH === 'memory') {
  // Memory growth per 100k ConfigMaps alone, on a cluster of its own: a quick loop for work on memory.
  await import('./memory.js').then((m) => m.benchMemoryAlone());
  process.exit(0);
}
if (process.env.BENCH === 'backends') {
  // LevelDB beside etcd alone, a cluster on each: a quick loop for work on a storage backend.
  const b = PARTS.find((p) => p.module === 'backends')!;
  const rows = await run<Row[]>(b);
  if (rows) console.log(`\n${rowsTable(b.area, rows)}`);
  process.exit(failures > 0 ? 1 : 0);
}
const etcd = await run<EtcdFigures>(PEER);
const api = await run<ApiFigures>(API);
const parts: Array<[string, Row[]]> = [];
for (const b of PARTS) {
  const rows = await run<Row[]>(b);
  if (rows) parts.push([b.area, rows]);
}
for (const [area, rows] of parts) console.log(`\n${rowsTable(area, rows)}`);
if (api) {
  console.log(`\n${report(api, etcd)}`);
  if (api.problems.length) failures++;
}
console.log(`\n${cpus().length} cores; 1-minute load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end. `
  + 'Figures are noisy when other work shares the machine; CPU ms per request is the steadier measure.');
process.exit(failures > 0 ? 1 : 0);
