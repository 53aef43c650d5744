// etcd's put and get at 1 and 32 concurrent clients, with the CPU the etcd process
// spends per request: the peer every API figure is set against.
import { EtcdKv, startEtcd } from './etcd.js';
import { measure } from './load.js';
import { storedObject } from './objects.js';
import type { EtcdFigures } from './figures.js';

/** How long each phase runs. */
const PHASE_MS = 3_000;
const WARM_UP = 200;

export async function benchEtcd(): Promise<EtcdFigures> {
  const etcd = await startEtcd();
  const kv = new EtcdKv(etcd.endpoint);
  const pids = new Map([['etcd', etcd.pid]]);
  const value = Buffer.from(JSON.stringify(storedObject('bench', 'c-0')));
  const key = (prefix: string, i: number) => `/registry/configmaps/bench/${prefix}-${i}`;
  let written = 0; // keys of the single-client phase, which the gets read back
  const put = (prefix: string) => async (i: number) => {
    await kv.put(key(prefix, i), value);
    if (prefix === 'p1') written++;
  };
  const get = async (i: number) => {
    const n = await kv.count(key('p1', (i * 7919) % written));
    if (n !== 1) throw new Error(`etcd get found ${n} keys`);
  };
  try {
    await measure(pids, 8, PHASE_MS, put('warm'), WARM_UP);
    const put1 = await measure(pids, 1, PHASE_MS, put('p1'));
    const put32 = await measure(pids, 32, PHASE_MS, put('p32'));
    const get1 = await measure(pids, 1, PHASE_MS, get);
    const get32 = await measure(pids, 32, PHASE_MS, get);
    return { version: etcd.version, valueBytes: value.length, put: { c1: put1, c32: put32 }, get: { c1: get1, c32: get32 } };
  } finally {
    kv.close();
    await etcd.stop();
  }
}
