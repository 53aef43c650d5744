// Seeded bad requests against the real processes: every answer is a status line
// (no reset), no 5xx but 503/504, a Status body of that code on every error, and
// no process restarts. FUZZ_SEED and FUZZ_COUNT replay or widen a run.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { pkiPaths } from '../../internal/pki/index.js';
import { GROUP_META } from '../../internal/names/index.js';
import { Cluster } from '../lib/cluster.js';
import { FUZZ_NAMESPACE, badRequest, describe as describeRequest, seedObjects } from '../lib/fuzz/http.js';
import { Rng, countFromEnv, seedFromEnv } from '../lib/fuzz/random.js';
import { judge, keepAliveAgent, pool, send, type Credentials } from '../lib/fuzz/send.js';
import { fuzzGrpc } from '../lib/fuzz/grpc.js';

const DEFAULT_SEED = 20261124;
const CONCURRENCY = 8;
const REQUEST_TIMEOUT_MS = 20_000;
/** At most this many failures are printed in full (all of them go to the log, up to LOGGED). */
const SHOWN = 20;
const LOGGED = 500;

/** Each service's PID; the same processes must be alive after the run. */
const pids = (c: Cluster) => new Map([...c.procs].map(([name, proc]) => [name, proc.pid]));

function expectSameProcesses(c: Cluster, before: Map<string, number | undefined>): void {
  for (const [name, pid] of before) {
    const proc = c.procs.get(name as never);
    expect(proc?.pid, `${name} was replaced`).to.equal(pid);
    expect(proc?.exitCode, `${name} exited`).to.equal(null);
    expect(proc?.signalCode, `${name} was killed`).to.equal(null);
    expect(() => process.kill(pid!, 0), `${name} (pid ${pid}) is not alive`).not.to.throw();
  }
}

/** Continue tokens to draw from: real ones, and ones naming keys of other collections. */
async function continueTokens(c: Cluster): Promise<string[]> {
  const tokens: string[] = [];
  for (const path of [`/api/v1/namespaces/${FUZZ_NAMESPACE}/configmaps?limit=1`, '/api/v1/pods?limit=1', '/apis/apps/v1/deployments?limit=1']) {
    const token = (await c.request('GET', path)).body?.metadata?.continue;
    if (token) tokens.push(token);
  }
  expect(tokens.length, 'no continue token to fuzz with').to.be.greaterThan(0);
  const forged = (start: string, rv: unknown = 1) => Buffer.from(JSON.stringify({ v: `${GROUP_META}/v1`, rv, start })).toString('base64url');
  return [...tokens, forged('zzz/other/key'), forged('/'), forged('core/secrets/kube-system/x'), forged('core/configmaps/fuzz/x', 0),
    forged('core/configmaps/fuzz/x', 1e300), forged('core/configmaps/fuzz/\u0000'), 'e30', 'bnVsbA', '!!!!', ''];
}

async function seedCluster(c: Cluster): Promise<void> {
  const ns = await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: FUZZ_NAMESPACE } } });
  expect(ns.status, ns.text).to.equal(201);
  for (const { path, body } of seedObjects()) {
    const res = await c.request('POST', path, { body });
    expect(res.status, `${path}: ${res.text}`).to.equal(201);
  }
}

describe('fuzz: seeded bad requests over HTTPS and bad messages on the internal gRPC APIs', function () {
  const seed = seedFromEnv(DEFAULT_SEED);
  const count = countFromEnv(2000);
  // A bound that grows with the count (make fuzz), generous for a loaded machine.
  this.timeout(Math.max(300_000, count * 60));
  /** Calls per gRPC service: an eighth of the requests, at least 250. */
  const grpcCount = Math.max(250, Math.floor(count / 8));
  let c: Cluster;
  /** The PIDs at the start: the same processes must serve to the end. */
  let started: Map<string, number | undefined>;
  before(async () => {
    c = await new Cluster().start();
    await seedCluster(c);
    started = pids(c);
  });
  after(async () => { await c?.stop(); });

  it(`${count} requests (seed ${seed}): a status line, no 500, a Status on every error, no process restarts`, async () => {
    console.log(`      fuzz: seed ${seed}, ${count} requests (replay: FUZZ_SEED=${seed} FUZZ_COUNT=${count})`);
    const rng = new Rng(seed);
    const tokens = await continueTokens(c);
    const requests = Array.from({ length: count }, () => badRequest(rng, tokens));
    const p = pkiPaths(c.dataDir);
    const creds: Credentials = { ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) };
    const agent = keepAliveAgent(creds, CONCURRENCY);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    await pool(requests.length, CONCURRENCY, async (i) => {
      const req = requests[i];
      const problem = await send(c.port, creds, req, REQUEST_TIMEOUT_MS, agent).then((answer) => {
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        return judge(req, answer);
      }, (err: Error) => `no answer: ${err.message}`);
      if (problem) failures.push(`#${i} ${problem}\n        request: ${describeRequest(req)}`);
    });
    agent.destroy();
    console.log(`      fuzz: answers by status ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
    if (failures.length > SHOWN) console.log(`      fuzz: every bad answer:\n      ${failures.slice(0, LOGGED).join('\n      ')}`);
    const report = failures.slice(0, SHOWN).join('\n      ');
    expect(failures, `seed ${seed}: ${failures.length} bad answers (replay with FUZZ_SEED=${seed} FUZZ_COUNT=${count}):\n      ${report}`).to.deep.equal([]);
    expectSameProcesses(c, started);
    expect((await c.request('GET', '/readyz')).status, 'the server is still ready').to.equal(200);
  });

  it(`${grpcCount} calls per service (seed ${seed}): a gRPC status, never UNKNOWN or INTERNAL, no process restarts`, async () => {
    const outcomes = new Map<string, number>();
    const failures = await fuzzGrpc(c.addresses, new Rng(seed), grpcCount, CONCURRENCY, outcomes);
    console.log(`      fuzz: gRPC outcomes ${[...outcomes].sort().map(([k, n]) => `${k.replace(/^\/svc\./, '')}: ${n}`).join(', ')}`);
    const report = failures.slice(0, SHOWN).join('\n      ');
    expect(failures, `seed ${seed}: ${failures.length} bad answers (replay with FUZZ_SEED=${seed} FUZZ_COUNT=${countFromEnv(2000)}):\n      ${report}`).to.deep.equal([]);
    expectSameProcesses(c, started);
  });
});
