// The API measured end to end: a whole cluster (nats-server and every service as
// its own process), reached over HTTPS with keep-alive and the admin client
// certificate, as a client sees it. Phases run one after another; each counts the
// CPU every server process spends (from /proc), and every loop is bounded.
import { Cluster } from '../lib/cluster.js';
import { MEDIA_PROTOBUF } from '../../internal/names/index.js';
import { adminTls, expectStatus, keepAlive, openConnections, send, type Tls, type Client } from './https.js';
import { measure, type Measured } from './load.js';
import { IDLE_WINDOW_MS, measureIdle, waitQuiet, type Pids } from './proc.js';
import { createBody, storedObject } from './objects.js';
import { benchMemory, MEMORY_NAMESPACE, writeThroughStorage } from './memory.js';
import { benchWatch, WATCH_NAMESPACE } from './watch.js';
import type { ApiFigures, ListFigures } from './figures.js';

/** Where benchCrud creates and gets; a cluster of its own must have it. */
export const NAMESPACE = 'bench';
const LIST_NAMESPACE = 'bench-list';
const LISTED_OBJECTS = 10_000;
const PHASE_MS = { c1: 3_000, c32: 5_000 };
const WARM_UP = 100;
const LISTS = 20;
const LIST_MS = 5_000;

const collection = (ns: string): string => `/api/v1/namespaces/${ns}/configmaps`;

/** Runs `op` with a keep-alive agent of `clients` connections, opened first and destroyed afterwards. */
async function withAgent(tls: Tls, port: number, clients: number, fn: (agent: Client) => Promise<Measured>): Promise<Measured> {
  const agent = keepAlive(tls, clients);
  try {
    await openConnections(agent, port, clients);
    return await fn(agent);
  } finally {
    agent.destroy();
  }
}

/** Creates at 1 then 32 clients, then gets of what they made at 1 then 32 clients, each for a few seconds. */
export async function benchCrud(cluster: Cluster, pids: Pids, tls: Tls): Promise<Pick<ApiFigures, 'create' | 'get'>> {
  const created: string[] = []; // what the gets read back
  const run = (clients: number, ms: number, op: (agent: Client, i: number) => Promise<void>, maxOps?: number) =>
    withAgent(tls, cluster.port, clients, (agent) => measure(pids, clients, ms, (i) => op(agent, i), maxOps));
  const create = (prefix: string) => async (agent: Client, i: number) => {
    const name = `${prefix}-${i}`;
    expectStatus(201, 'create')(await send(agent, cluster.port, 'POST', collection(NAMESPACE), createBody(name)));
    created.push(name);
  };
  const get = async (agent: Client, i: number) =>
    expectStatus(200, 'get')(await send(agent, cluster.port, 'GET', `${collection(NAMESPACE)}/${created[(i * 7919) % created.length]}`));
  await run(8, PHASE_MS.c1, create('warm'), WARM_UP);
  const c1 = await run(1, PHASE_MS.c1, create('c1'));
  const c32 = await run(32, PHASE_MS.c32, create('c32'));
  return { create: { c1, c32 }, get: { c1: await run(1, PHASE_MS.c1, get), c32: await run(32, PHASE_MS.c32, get) } };
}

/** Writes the objects to list straight through storage (seeding is not what is measured) and waits until a list has them all. */
async function seedList(cluster: Cluster, pids: Pids): Promise<void> {
  const { written } = await writeThroughStorage(cluster.addresses.storage, LISTED_OBJECTS, 60_000, (i) => storedObject(LIST_NAMESPACE, `l-${i}`));
  if (written < LISTED_OBJECTS) throw new Error(`only ${written} of ${LISTED_OBJECTS} objects to list were written in time`);
  await waitQuiet(pids, 100, 20_000);
  const items = (await cluster.request('GET', collection(LIST_NAMESPACE), { timeoutMs: 60_000 })).body?.items?.length;
  if (items !== LISTED_OBJECTS) throw new Error(`the list has ${items} items, expected ${LISTED_OBJECTS}`);
}

/** LISTS lists of the seeded collection in the format of `accept`, one client. */
const listIn = (cluster: Cluster, pids: Pids, accept: string) => (agent: Client) => measure(pids, 1, LIST_MS, async () =>
  expectStatus(200, 'list')(await send(agent, cluster.port, 'GET', collection(LIST_NAMESPACE), undefined, accept)), LISTS);

/** Listing 10k ConfigMaps over HTTPS, as JSON and as Protobuf. */
async function benchList(cluster: Cluster, pids: Pids, tls: Tls): Promise<ListFigures> {
  await seedList(cluster, pids);
  const list = (accept: string) => listIn(cluster, pids, accept);
  return {
    objects: LISTED_OBJECTS,
    json: await withAgent(tls, cluster.port, 1, list('application/json')),
    protobuf: await withAgent(tls, cluster.port, 1, list(MEDIA_PROTOBUF)),
  };
}

/** The last lines each service wrote, to tell why a request failed. */
function serviceLogTails(cluster: Cluster): string {
  return [...cluster.logs].map(([s, log]) => `--- ${s}\n${log.join('').split('\n').slice(-6).join('\n')}`).join('\n');
}

/** Runs one optional phase; a failure is noted and the next phase still runs. */
async function optional<T>(what: string, problems: string[], fn: () => Promise<T>): Promise<T | undefined> {
  const started = performance.now();
  try {
    return await fn();
  } catch (err) {
    problems.push(`${what}: ${(err as Error).message}`);
    return undefined;
  } finally {
    console.log(`  api ${what}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
}

export async function benchApi(): Promise<ApiFigures> {
  const cluster = new Cluster();
  // Interrupted, the services must not outlive the bench.
  const onSignal = (): void => void cluster.stop().finally(() => process.exit(130));
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  const problems: string[] = [];
  try {
    await cluster.start();
    const pids = cluster.pids();
    await waitQuiet(pids, 50, 15_000);
    const idle = await measureIdle(pids, IDLE_WINDOW_MS);
    for (const ns of [NAMESPACE, WATCH_NAMESPACE, LIST_NAMESPACE, MEMORY_NAMESPACE]) {
      expectStatus(201, `create namespace ${ns}`)((await cluster.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } })).status);
    }
    const tls = adminTls(cluster.dataDir);
    // Memory first, while the processes hold little besides what it adds.
    const memory = await optional('memory', problems, () => benchMemory(cluster.addresses.storage, pids));
    const crud = await optional('create and get', problems, () => benchCrud(cluster, pids, tls));
    if (!crud) throw new Error(problems.join('\n'));
    const list = await optional('list', problems, () => benchList(cluster, pids, tls));
    const watch = await optional('watch', problems, () => benchWatch(cluster, pids, tls));
    if (problems.length) problems.push(serviceLogTails(cluster));
    return { idle, ...crud, list, memory, watch, problems };
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${serviceLogTails(cluster)}`);
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    await cluster.stop();
  }
}

/** Lists alone, on a cluster of their own (BENCH=list): BENCH_ROUNDS rounds, each of JSON then Protobuf lists,
 * printed with the CPU ms per list by process. BENCH_LIST_FORMAT=JSON|Protobuf lists in one format only;
 * BENCH_CPU_PROF=<dir> profiles every service. */
export async function benchListAlone(): Promise<void> {
  const profDir = process.env.BENCH_CPU_PROF;
  const cluster = new Cluster({ nodeArgs: profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [] });
  try {
    await cluster.start();
    const pids = cluster.pids();
    expectStatus(201, 'create namespace')((await cluster.request('POST', '/api/v1/namespaces', { body: { metadata: { name: LIST_NAMESPACE } } })).status);
    await seedList(cluster, pids);
    const tls = adminTls(cluster.dataDir);
    for (let r = 0; r < Number(process.env.BENCH_ROUNDS ?? 3); r++) {
      for (const [format, accept] of [['JSON', 'application/json'], ['Protobuf', MEDIA_PROTOBUF]].filter(([f]) => (process.env.BENCH_LIST_FORMAT ?? f) === f)) {
        const m = await withAgent(tls, cluster.port, 1, listIn(cluster, pids, accept));
        console.log(`round ${r + 1} ${format}: ${m.count} lists, p50 ${m.p50Ms.toFixed(1)} ms, p99 ${m.p99Ms.toFixed(1)} ms, CPU ${m.cpuMsPerOp.toFixed(1)} ms/list (`
          + Object.entries(m.cpuMsPerOpByProcess).filter(([, ms]) => ms > 0).map(([p, ms]) => `${p} ${ms.toFixed(1)}`).join(', ') + `; client ${m.clientCpuMsPerOp.toFixed(1)})`);
      }
    }
  } finally {
    await cluster.stop();
  }
}
