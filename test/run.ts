// Runs every test file under dist/test (or the ones named on the command line) with mocha,
// several at once, each in a worker process of its own (test/run-worker.ts; every cluster a
// test starts picks free ports and temp dirs, so files do not meet). Each file's output is
// printed whole once it ends; then the failures, the slowest files and the closing line
// `N passed, N failed` (exit 1 when a test failed, a worker died or nothing passed).
// TEST_JOBS sets how many files run at once (default: as many as there are CPUs).
import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkerResult } from './run-worker.js';

const root = fileURLToPath(new URL('.', import.meta.url));
const walk = (dir: string): string[] => readdirSync(dir).flatMap((f) => {
  const p = join(dir, f);
  return statSync(p).isDirectory() ? walk(p) : [p];
});

const suites = ['unit', 'integration', 'e2e'];
/** Files that run with no other file beside them: their assertions are about timing that a loaded machine upsets
 * (crash-ledger: every process must heal within bounds while the controller-manager's short Lease must be renewed;
 * crd-lifecycle: Established within a second; protocol-versions: a read answered within 500 ms of a write). */
const ALONE = ['integration/crash-ledger', 'integration/crd-lifecycle', 'integration/protocol-versions'];
/** Unit files are quick: a worker runs several, so starting workers costs little. */
const UNIT_FILES_PER_WORKER = 8;

const wanted = process.argv.slice(2);
const files = suites.flatMap((s) => walk(join(root, s))).filter((f) => f.endsWith('.test.js'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)));
const jobs = Math.max(1, Number(process.env.TEST_JOBS) || availableParallelism());
/** Files run a second time with storage on etcd (TEST_STORAGE_BACKEND=etcd3), unless the variable is set already. */
const ON_BOTH_BACKENDS = ['integration/protocol-'];
const etcdAgain = process.env.TEST_STORAGE_BACKEND ? [] : files.filter((f) => ON_BOTH_BACKENDS.some((b) => f.includes(`/${b}`)));

interface Group { files: string[]; alone: boolean; env?: Record<string, string> }
const ETCD_ENV = { TEST_STORAGE_BACKEND: 'etcd3' };

/** Groups of files, each run by one worker: files to run alone first, then the integration and e2e files (the
 * larger first, as they take longer: the small ones and the unit files fill the end), then the unit files. */
function plan(): Group[] {
  const isAlone = (f: string): boolean => ALONE.some((a) => f.endsWith(`/${a}.test.js`));
  const alone = files.filter(isAlone);
  const bySize = (a: Group, b: Group): number => statSync(b.files[0]).size - statSync(a.files[0]).size;
  const clusters = [
    ...files.filter((f) => !f.includes('/unit/') && !isAlone(f)).map((f) => ({ files: [f], alone: false })),
    ...etcdAgain.filter((f) => !isAlone(f)).map((f) => ({ files: [f], alone: false, env: ETCD_ENV })),
  ].sort(bySize);
  const units = files.filter((f) => f.includes('/unit/') && !alone.includes(f)).sort();
  const n = Math.ceil(units.length / UNIT_FILES_PER_WORKER);
  const unitGroups = Array.from({ length: n }, (_, i) => units.filter((_f, j) => j % n === i));
  return [
    ...alone.map((f) => ({ files: [f], alone: true })), ...etcdAgain.filter(isAlone).map((f) => ({ files: [f], alone: true, env: ETCD_ENV })),
    ...clusters, ...unitGroups.map((g) => ({ files: g, alone: false })),
  ];
}

/** Runs one worker over its files; its output is kept and printed whole when it ends. */
function runWorker(group: string[], env: NodeJS.ProcessEnv, label = ''): Promise<WorkerResult> {
  const started = performance.now();
  const child = fork(join(root, 'run-worker.js'), group, { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env });
  const output: Buffer[] = [];
  child.stdout!.on('data', (d: Buffer) => output.push(d));
  child.stderr!.on('data', (d: Buffer) => output.push(d));
  let result: WorkerResult | undefined;
  child.on('message', (m) => { result = m as WorkerResult; });
  return new Promise((resolve) => child.on('close', (code, signal) => {
    const names = group.map((f) => f.slice(root.length)).join(', ') + label;
    const cpu = result ? `, ${(result.cpuMs / 1000).toFixed(1)} s CPU` : '';
    process.stdout.write(`\n── ${names} (${((performance.now() - started) / 1000).toFixed(1)} s${cpu})\n${Buffer.concat(output).toString('utf8')}`);
    if (result && label) {
      result.failures = result.failures.map((f) => `${f}${label}`);
      result.fileMs = result.fileMs.map(([f, ms]) => [`${f}${label}`, ms]);
    }
    // A worker that died before it reported counts as one failure.
    resolve(result ?? { passed: 0, failed: 1, failures: [`${names}: worker exited (${signal ?? `code ${code}`}) before reporting`], fileMs: [], cpuMs: 0 });
  }));
}

/** Runs the groups, `jobs` at a time; one to run alone waits for the others to end and has the machine to itself. */
function runAll(groups: Group[], env: NodeJS.ProcessEnv): Promise<WorkerResult[]> {
  const results: WorkerResult[] = [];
  let running = 0;
  let alone = false;
  return new Promise((done) => {
    const next = () => {
      if (groups.length === 0 && running === 0) return done(results);
      while (groups.length > 0 && running < jobs && !alone && (!groups[0].alone || running === 0)) {
        const group = groups.shift()!;
        running++;
        alone = group.alone;
        const label = group.env ? ` [${Object.entries(group.env).map(([k, v]) => `${k}=${v}`).join(' ')}]` : '';
        void runWorker(group.files, { ...env, ...group.env }, label).then((r) => {
          results.push(r);
          running--;
          alone = false;
          next();
        });
      }
    };
    next();
  });
}

// Node caches the bytecode of what it compiles here, so the many service processes load faster after the first.
const compileCache = mkdtempSync(join(tmpdir(), 'svc-test-cc-'));
const results = await runAll(plan(), { ...process.env, NODE_COMPILE_CACHE: compileCache });
rmSync(compileCache, { recursive: true, force: true });

const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
const failures = results.flatMap((r) => r.failures);
if (failures.length > 0) process.stdout.write(`\nfailed:\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
const slowest = results.flatMap((r) => r.fileMs).sort((a, b) => b[1] - a[1]).slice(0, 15);
const cpu = results.reduce((n, r) => n + r.cpuMs, 0) / 1000;
process.stdout.write(`\nslowest files (wall time; ${cpu.toFixed(0)} s CPU in all):\n${slowest.map(([f, ms]) => `${(ms / 1000).toFixed(1).padStart(7)} s  ${f.slice(root.length)}`).join('\n')}\n`);
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
