// Runs the test files named on the command line with mocha in this process (a worker of
// test/run.ts) and sends the parent its counts, the failed tests and each file's wall time.
import Mocha from 'mocha';
import { readFileSync } from 'node:fs';

export interface WorkerResult {
  passed: number;
  failed: number;
  /** Full title and first line of the error of each failed test or hook. */
  failures: string[];
  /** Wall time per file, hooks included. */
  fileMs: Array<[string, number]>;
  /** CPU time of this process and of the processes it started (every service of its clusters), once they ended. */
  cpuMs: number;
}

/** utime, stime, cutime and cstime of /proc/self/stat, in ms (only this process where /proc is not). */
function cpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) * 10;
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
}

const mocha = new Mocha({ timeout: 60_000, reporter: 'spec', slow: 2000 });
for (const f of process.argv.slice(2)) mocha.addFile(f);
await mocha.loadFilesAsync();
const result: WorkerResult = { passed: 0, failed: 0, failures: [], fileMs: [], cpuMs: 0 };
const runner = mocha.run();
runner.on('pass', () => result.passed++);
runner.on('fail', (test, err) => {
  result.failed++;
  result.failures.push(`${test.fullTitle()}: ${String(err?.message ?? err).split('\n')[0]}`);
});
const fileMs = new Map<string, number>();
let fileStart = performance.now();
runner.on('suite', (suite) => { if (suite.file && suite.parent?.root) fileStart = performance.now(); });
runner.on('suite end', (suite) => {
  if (suite.file && suite.parent?.root) fileMs.set(suite.file, (fileMs.get(suite.file) ?? 0) + performance.now() - fileStart);
});
runner.on('end', () => {
  result.fileMs = [...fileMs];
  result.cpuMs = cpuMs();
  process.send!(result, () => process.exit(0));
});
