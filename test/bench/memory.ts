// Memory growth per object: the resident memory of every process before and after
// 100,000 ConfigMaps of a realistic size are written, set against their JSON size.
// They are written through storage (64 at a time), as the API's own write path is
// not what is measured here; every process still receives each one on the change
// stream, as it would after a create through the API.
import { StorageClient } from '../../internal/storage/client.js';
import { objectKey } from '../../internal/storage/keys.js';
import { encodeStored } from '../../gateway/objects.js';
import { Cluster } from '../lib/cluster.js';
import { expectStatus } from './https.js';
import { realistic } from './objects.js';
import { rssKb, waitQuiet, type Pids } from './proc.js';
import type { MemoryFigures } from './figures.js';

export const MEMORY_NAMESPACE = 'bench-memory';
const WARM_UP_NAMESPACE = 'bench-memory-warm-up';
const WARM_UP_WRITES = Number(process.env.BENCH_MEMORY_WARM_UP ?? 30_000);
const OBJECTS = 100_000;
const LANES = 64;
/** Past this the growth is scaled to 100k, to keep the whole run near six minutes. */
const WRITE_BUDGET_MS = 120_000;
/** After the writes, every process should be done with the change stream within this. */
const SETTLE_MS = 60_000;

const rssMb = (pids: Pids) => Object.fromEntries([...pids].map(([name, pid]) => [name, rssKb(pid) / 1024]));

/** Creates a stored ConfigMap straight through storage, past the API's write path. */
export async function createConfigMap(storage: StorageClient, obj: Record<string, any>): Promise<void> {
  const m = obj.metadata;
  await storage.create(objectKey('', 'configmaps', m.namespace, m.name), encodeStored(obj), m.uid);
}

/** Runs `op` for 0..total-1 on LANES lanes until done or `budgetMs` passes; resolves how many ran. */
async function inLanes(total: number, budgetMs: number, op: (i: number) => Promise<void>): Promise<number> {
  const deadline = performance.now() + budgetMs;
  let next = 0;
  let done = 0;
  await Promise.all(Array.from({ length: LANES }, async () => {
    for (let i = next++; i < total && performance.now() < deadline; i = next++) {
      await op(i);
      done++;
    }
  }));
  return done;
}

/** Writes `total` objects through storage on LANES lanes, within `budgetMs`; returns how many and their JSON bytes. */
export async function writeThroughStorage(address: string, total: number, budgetMs: number, object: (i: number) => Record<string, any>): Promise<{ written: number; jsonBytes: number }> {
  const storage = new StorageClient(address);
  let jsonBytes = 0;
  try {
    const written = await inLanes(total, budgetMs, async (i) => {
      const obj = object(i);
      await createConfigMap(storage, obj);
      jsonBytes += Buffer.byteLength(JSON.stringify(obj));
    });
    return { written, jsonBytes };
  } finally {
    storage.close();
  }
}

/**
 * Brings every process to the memory it keeps whatever it holds, before it is measured: a burst of WARM_UP_WRITES
 * writes through storage as fast as the measured ones, each lane updating one object again and again. What a burst
 * leaves allocated (V8's young generation grown to its maximum, malloc's arenas grown by the buffers of the change
 * stream, LevelDB's write buffers) is then there before as after, while the caches hold only LANES more objects.
 */
async function warmUp(address: string): Promise<void> {
  const storage = new StorageClient(address);
  try {
    const objects = Array.from({ length: LANES }, (_, i) => realistic(WARM_UP_NAMESPACE, i));
    await Promise.all(objects.map((obj) => createConfigMap(storage, obj)));
    await inLanes(WARM_UP_WRITES, WRITE_BUDGET_MS, async (i) => {
      const obj = objects[i % LANES];
      obj.data.LOG_LEVEL = `level-${i}`;
      await storage.update(objectKey('', 'configmaps', obj.metadata.namespace, obj.metadata.name), encodeStored(obj));
    });
  } finally {
    storage.close();
  }
}

export async function benchMemory(storageAddress: string, pids: Pids): Promise<MemoryFigures> {
  await warmUp(storageAddress);
  await waitQuiet(pids, 100, 15_000);
  const beforeMb = rssMb(pids);
  const started = performance.now();
  const { written, jsonBytes } = await writeThroughStorage(storageAddress, OBJECTS, WRITE_BUDGET_MS, (i) => realistic(MEMORY_NAMESPACE, i));
  const writeSeconds = (performance.now() - started) / 1000;
  const settled = await waitQuiet(pids, 100, SETTLE_MS);
  return { objects: written, jsonBytes, writeSeconds, settled, warmUpWrites: WARM_UP_WRITES, beforeMb, afterMb: rssMb(pids) };
}

/**
 * The memory phase alone, on a cluster of its own: a quick loop for work on memory. Prints each process's RSS
 * before and after. BENCH_NODE_ARGS adds Node options; BENCH_MEMORY_WARM_UP sets the writes of the warm-up;
 * BENCH_HEAP_SNAPSHOTS=<dir> writes a heap snapshot of every Node service there after the writes.
 */
export async function benchMemoryAlone(): Promise<void> {
  const snapshots = process.env.BENCH_HEAP_SNAPSHOTS;
  const nodeArgs = [...(snapshots ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`] : []),
    ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  const cluster = new Cluster({ nodeArgs });
  try {
    await cluster.start();
    expectStatus(201, 'create namespace')((await cluster.request('POST', '/api/v1/namespaces', { body: { metadata: { name: MEMORY_NAMESPACE } } })).status);
    const pids = cluster.pids();
    await waitQuiet(pids, 100, 15_000);
    const m = await benchMemory(cluster.addresses.storage, pids);
    const scale = 100_000 / m.objects;
    console.log(`${m.objects} ConfigMaps, ${(m.jsonBytes / 2 ** 20).toFixed(1)} MiB of JSON, written in ${m.writeSeconds.toFixed(1)} s`
      + ` after a warm-up of ${m.warmUpWrites} writes${m.settled ? '' : ' (still busy)'}`);
    let sum = 0;
    for (const p of pids.keys()) {
      const growth = (m.afterMb[p] - m.beforeMb[p]) * scale;
      sum += growth;
      console.log(`${p.padEnd(18)} RSS ${m.beforeMb[p].toFixed(1)} -> ${m.afterMb[p].toFixed(1)} MiB, growth per 100k ${growth.toFixed(1)} MiB`);
    }
    console.log(`sum of growth per 100k: ${sum.toFixed(1)} MiB, ${(sum * 2 ** 20 / (m.jsonBytes * scale)).toFixed(2)}x the JSON`);
    if (snapshots) await writeSnapshots(pids);
  } finally {
    await cluster.stop();
  }
}

/** Has every Node service write a heap snapshot, one at a time (each takes a while and memory). */
async function writeSnapshots(pids: Pids): Promise<void> {
  for (const [p, pid] of pids) {
    if (p === 'nats-server' || p === 'etcd') continue;
    process.kill(pid, 'SIGUSR2');
    await waitQuiet(new Map([[p, pid]]), 50, 120_000);
  }
}
