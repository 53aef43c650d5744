// Creates alone, on a cluster of their own: a quick loop for work on the write path.
// BENCH_ROUNDS rounds of 32 clients creating ConfigMaps, each printed with the CPU ms
// per create of every server process and the share of it spent in the kernel, then
// the processes' resident memory.
// BENCH_CPU_PROF=<dir> profiles every service; BENCH_NODE_ARGS adds Node options
// (e.g. --perf-basic-prof for `perf record`, --trace-gc); BENCH_LOGS=<dir> keeps their output.
// BENCH_PRELOAD=<n> first writes n ConfigMaps through storage, as the whole bench's memory
// phase does before its creates: the rounds then run beside a gateway cache holding them and
// LevelDB compacting them.
import { writeFileSync } from 'node:fs';
import { Cluster } from '../lib/cluster.js';
import { adminTls, expectStatus, keepAlive, openConnections, send, type Client } from './https.js';
import { measure, type Measured } from './load.js';
import { kernelShares, rssKb, sampleTicks, waitQuiet } from './proc.js';
import { createBody, realistic } from './objects.js';
import { MEMORY_NAMESPACE, writeThroughStorage } from './memory.js';

const NAMESPACE = 'bench';
const CLIENTS = 32;
const ROUND_MS = 5_000;
const WARM_UP = 300;
const PRELOAD_BUDGET_MS = 180_000;

const line = (label: string, m: Measured): string =>
  `${label}: ${m.opsPerSec.toFixed(0)}/s, p50 ${m.p50Ms.toFixed(1)} ms, p90 ${m.p90Ms.toFixed(1)} ms, p99 ${m.p99Ms.toFixed(1)} ms, `
  + `max ${m.maxMs.toFixed(1)} ms, CPU ${m.cpuMsPerOp.toFixed(3)} ms/create (`
  + Object.entries(m.cpuMsPerOpByProcess).map(([p, ms]) => `${p} ${ms.toFixed(3)}`).join(', ') + `; client ${m.clientCpuMsPerOp.toFixed(3)})`;

export async function benchCreatesAlone(): Promise<void> {
  const profDir = process.env.BENCH_CPU_PROF;
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const nodeArgs = [...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []), ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  const cluster = new Cluster({ nodeArgs });
  try {
    await cluster.start();
    const pids = cluster.pids();
    const preload = Number(process.env.BENCH_PRELOAD ?? 0);
    for (const ns of preload > 0 ? [NAMESPACE, MEMORY_NAMESPACE] : [NAMESPACE]) {
      expectStatus(201, 'create namespace')((await cluster.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status);
    }
    if (preload > 0) {
      const { written } = await writeThroughStorage(cluster.addresses.storage, preload, PRELOAD_BUDGET_MS, (i) => realistic(MEMORY_NAMESPACE, i));
      console.log(`preloaded ${written} ConfigMaps through storage`);
    }
    const agent: Client = keepAlive(adminTls(cluster.dataDir), CLIENTS);
    const create = (prefix: string) => async (i: number) =>
      expectStatus(201, 'create')(await send(agent, cluster.port, 'POST', `/api/v1/namespaces/${NAMESPACE}/configmaps`, createBody(`${prefix}-${i}`)));
    await measure(pids, 8, ROUND_MS, create('warm'), WARM_UP);
    await openConnections(agent, cluster.port, CLIENTS);
    await waitQuiet(pids, 100, 10_000);
    for (let r = 0; r < rounds; r++) {
      const before = sampleTicks(pids);
      console.log(line(`round ${r + 1}`, await measure(pids, CLIENTS, ROUND_MS, create(`r${r}`))));
      console.log(`  kernel share: ${Object.entries(kernelShares(before, pids)).map(([p, share]) => `${p} ${Math.round(share * 100)}%`).join(', ')}`);
    }
    agent.destroy();
    console.log(`resident memory after the rounds: ${[...pids].map(([p, pid]) => `${p} ${Math.round(rssKb(pid) / 1024)} MiB`).join(', ')}`);
    const logDir = process.env.BENCH_LOGS;
    if (logDir) for (const [s, log] of cluster.logs) writeFileSync(`${logDir}/${s}.log`, log.join(''));
  } finally {
    await cluster.stop();
  }
}
