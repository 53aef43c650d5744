// etcd's put, get and range of 10k keys, with the CPU the etcd process spends per
// request: the peer every API figure is set against.
import { EtcdKv, startEtcd } from './etcd.js';
import { lanes, measure } from './load.js';
import { storedObject } from './objects.js';
import type { EtcdFigures } from './figures.js';

/** How long each phase runs. */
const PHASE_MS = 3_000;
const WARM_UP = 200;
const LISTED = 10_000;
const LISTS = 20;
const LIST_MS = 5_000;

export async function benchEtcd(): Promise<EtcdFigures> {
  const etcd = await startEtcd();
  // Interrupted, etcd must not outlive the bench.
  const onSignal = (): void => void etcd.stop().finally(() => process.exit(130));
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  const kv = new EtcdKv(etcd.endpoint);
  const pids = new Map([['etcd', etcd.pid]]);
  const value = Buffer.from(JSON.stringify(storedObject('bench', 'c-0')));
  const under = (prefix: string) => `/registry/configmaps/${prefix}/`;
  const key = (prefix: string, i: number) => `${under(prefix)}${i}`;
  let written = 0; // keys of the single-client phase, which the gets read back
  const put = (prefix: string) => async (i: number) => {
    await kv.put(key(prefix, i), value);
    if (prefix === 'p1') written++;
  };
  const get = async (i: number) => {
    const n = await kv.count(key('p1', (i * 7919) % written));
    if (n !== 1) throw new Error(`etcd get found ${n} keys`);
  };
  const list = async () => {
    const n = await kv.count(under('listed'), true);
    if (n !== LISTED) throw new Error(`etcd range found ${n} keys, expected ${LISTED}`);
  };
  try {
    await measure(pids, 8, PHASE_MS, put('warm'), WARM_UP);
    const put1 = await measure(pids, 1, PHASE_MS, put('p1'));
    const put32 = await measure(pids, 32, PHASE_MS, put('p32'));
    const get1 = await measure(pids, 1, PHASE_MS, get);
    const get32 = await measure(pids, 32, PHASE_MS, get);
    const seeded = await lanes(64, 60_000, put('listed'), LISTED);
    if (seeded.latencies.length < LISTED) throw new Error(`only ${seeded.latencies.length} of ${LISTED} keys to range over were written in time`);
    return {
      version: etcd.version, valueBytes: value.length,
      put: { c1: put1, c32: put32 }, get: { c1: get1, c32: get32 }, list: await measure(pids, 1, LIST_MS, list, LISTS),
    };
  } finally {
    kv.close();
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    await etcd.stop();
  }
}
