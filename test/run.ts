// Runs every test file under dist/test (or the ones named on the command line)
// with mocha, then prints the closing line `N passed, N failed`.
import Mocha from 'mocha';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));
const walk = (dir: string): string[] => readdirSync(dir).flatMap((f) => {
  const p = join(dir, f);
  return statSync(p).isDirectory() ? walk(p) : [p];
});

const suites = ['unit', 'integration', 'e2e'];
const wanted = process.argv.slice(2);
const files = suites.flatMap((s) => walk(join(root, s))).filter((f) => f.endsWith('.test.js'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w))).sort(
    (a, b) => suites.findIndex((s) => a.includes(`/${s}/`)) - suites.findIndex((s) => b.includes(`/${s}/`)) || a.localeCompare(b));

const mocha = new Mocha({ timeout: 60_000, reporter: 'spec', slow: 2000 });
for (const f of files) mocha.addFile(resolve(f));
await mocha.loadFilesAsync();
let passed = 0;
let failed = 0;
const runner = mocha.run();
runner.on('pass', () => passed++);
runner.on('fail', () => failed++);
// Wall time per file (hooks included), so the slowest files are in sight of the CI time limit.
const fileMs = new Map<string, number>();
let fileStart = performance.now();
runner.on('suite', (suite) => { if (suite.file && suite.parent?.root) fileStart = performance.now(); });
runner.on('suite end', (suite) => {
  if (suite.file && suite.parent?.root) fileMs.set(suite.file, (fileMs.get(suite.file) ?? 0) + performance.now() - fileStart);
});
runner.on('end', () => {
  const slowest = [...fileMs].sort((a, b) => b[1] - a[1]).slice(0, 15);
  process.stdout.write(`\nslowest files:\n${slowest.map(([f, ms]) => `${(ms / 1000).toFixed(1).padStart(7)} s  ${f.slice(root.length)}`).join('\n')}\n`);
  process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
});
