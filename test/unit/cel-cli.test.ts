import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../../cmd/svc-cel/main.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'svc-cel-'));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function svcCel(...args: string[]): { status: number | null; out: string; json: Record<string, unknown> } {
  const r = spawnSync(process.execPath, [main, ...args], { encoding: 'utf8' });
  const out = r.stdout.trim();
  return { status: r.status, out, json: JSON.parse(out) };
}

const schema = file('schema.yaml', `
type: object
properties:
  replicas: {type: integer}
  maxReplicas: {type: integer}
  names:
    type: array
    maxItems: 10
    items: {type: string, maxLength: 20}
`);
const vars = file('vars.yaml', `
self: {replicas: 3, maxReplicas: 5, names: [a, b]}
oldSelf: {replicas: 2, maxReplicas: 5, names: [a]}
`);

describe('svc-cel', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the result and cost of an expression and exits 0', () => {
    const r = svcCel('--expr', '1 + 2');
    expect(r.status).to.equal(0);
    expect(r.out).to.equal('{"result": 3, "cost": 1}');
  });

  it('gives the declared types to the variables of a vars file', () => {
    const claims = file('claims.json', JSON.stringify({ claims: { sub: 'alice', groups: ['a', 'b'] }, user: { username: 'bob' } }));
    const r = svcCel('--expr', "claims.sub + ':' + claims.groups.join(',') + ':' + user.username", '--vars', claims);
    expect(r.json).to.deep.equal({ result: 'alice:a,b:bob', cost: 12 });
    const typed = svcCel('--expr', 'user.name', '--vars', claims);
    expect(typed.status).to.equal(1);
    expect(typed.json.error).to.include("undefined field 'name'");
  });

  it('prints timestamps in RFC 3339 with their nanoseconds and optional entries as values', () => {
    expect(svcCel('--expr', "timestamp('2024-01-01T00:00:00.000000001Z')").json.result).to.equal('2024-01-01T00:00:00.000000001Z');
    expect(svcCel('--expr', "[1, ?optional.none(), ?optional.of(3)]").json.result).to.deep.equal([1, 3]);
  });

  it('prints a compile error and exits 1', () => {
    const r = svcCel('--expr', '1 +');
    expect(r.status).to.equal(1);
    expect(Object.keys(r.json)).to.deep.equal(['error']);
    expect(r.json.error).to.match(/^ERROR: <input>:1:/);
  });

  it('prints a runtime error and exits 1', () => {
    const r = svcCel('--expr', '1 / 0');
    expect(r.status).to.equal(1);
    expect(r.out).to.equal('{"error": "division by zero"}');
  });

  it('types self and oldSelf from --schema', () => {
    const ok = svcCel('--expr', 'self.replicas <= self.maxReplicas && self.replicas > oldSelf.replicas', '--schema', schema, '--vars', vars);
    expect(ok.json).to.deep.equal({ result: true, cost: 10 });
    const bad = svcCel('--expr', "self.replicas + 'x'", '--schema', schema, '--vars', vars);
    expect(bad.status).to.equal(1);
    expect(bad.json.error).to.include('no such overload: int + string');
  });

  it('prints the worst-case cost with --estimate instead of evaluating', () => {
    const r = svcCel('--expr', "self.names.all(n, n.matches('^[a-z]+$'))", '--schema', schema, '--estimate');
    expect(r.status).to.equal(0);
    expect(r.json).to.deep.equal({ estimatedCost: 2 + 10 * (1 + 3 * 2 + 2) });
  });

  it('stops at the --budget with an error naming it', () => {
    const over = svcCel('--expr', '[1, 2, 3].map(x, x * 2)', '--budget', '50');
    expect(over.status).to.equal(1);
    expect(over.json.error).to.include('runtime cost budget of 50');
    const within = svcCel('--expr', '[1, 2, 3].map(x, x * 2)', '--budget', '92');
    expect(within.json).to.deep.equal({ result: [2, 4, 6], cost: 92 });
  });

  it('requires --expr', () => {
    const r = svcCel('--vars', vars);
    expect(r.status).to.equal(1);
    expect(r.json.error).to.include('--expr is required');
  });
});
