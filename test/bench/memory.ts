// Memory growth per object: the resident memory of every process before and after
// 100,000 ConfigMaps of a realistic size are written, set against their JSON size.
// They are written through storage (64 at a time), as the API's own write path is
// not what is measured here; every process still receives each one on the change
// stream, as it would after a create through the API.
import { StorageClient } from '../../internal/storage/client.js';
import { objectKey } from '../../internal/storage/keys.js';
import { encodeStored } from '../../gateway/objects.js';
import { realistic } from './objects.js';
import { rssKb, waitQuiet, type Pids } from './proc.js';
import type { MemoryFigures } from './figures.js';

export const MEMORY_NAMESPACE = 'bench-memory';
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

/** Writes `total` objects through storage on LANES lanes, within `budgetMs`; returns how many and their JSON bytes. */
export async function writeThroughStorage(address: string, total: number, budgetMs: number, object: (i: number) => Record<string, any>): Promise<{ written: number; jsonBytes: number }> {
  const storage = new StorageClient(address);
  const deadline = performance.now() + budgetMs;
  let next = 0;
  let written = 0;
  let jsonBytes = 0;
  try {
    await Promise.all(Array.from({ length: LANES }, async () => {
      for (let i = next++; i < total && performance.now() < deadline; i = next++) {
        const obj = object(i);
        await createConfigMap(storage, obj);
        jsonBytes += Buffer.byteLength(JSON.stringify(obj));
        written++;
      }
    }));
  } finally {
    storage.close();
  }
  return { written, jsonBytes };
}

export async function benchMemory(storageAddress: string, pids: Pids): Promise<MemoryFigures> {
  await waitQuiet(pids, 100, 15_000);
  const beforeMb = rssMb(pids);
  const started = performance.now();
  const { written, jsonBytes } = await writeThroughStorage(storageAddress, OBJECTS, WRITE_BUDGET_MS, (i) => realistic(MEMORY_NAMESPACE, i));
  const writeSeconds = (performance.now() - started) / 1000;
  const settled = await waitQuiet(pids, 100, SETTLE_MS);
  return { objects: written, jsonBytes, writeSeconds, settled, beforeMb, afterMb: rssMb(pids) };
}
