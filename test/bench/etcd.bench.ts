// etcd's put, get, range of 10k keys and watch fan-out, with the CPU the etcd
// process spends per request: the peer every API figure is set against.
import { EtcdKv, startEtcd } from './etcd.js';
import { lanes, measure } from './load.js';
import { smallStored, storedObject } from './objects.js';
import { Fanout, phase, WATCHERS } from './fanout.js';
import type { EtcdFigures, WatchPhase } from './figures.js';
import type { Pids } from './proc.js';

/** How long each phase runs. */
const PHASE_MS = 3_000;
const WARM_UP = 200;
const LISTED = 10_000;
const LISTS = 20;
const LIST_MS = 5_000;

const WATCHED = '/registry/configmaps/bench-watch/';
/** One connection per watcher, as each of the API's watchers has its own HTTPS connection. */
const WATCH_CONNECTIONS = WATCHERS;
const WATCHED_KEY = Buffer.from(`${WATCHED}w-`);

/** WATCHERS watch streams on one prefix while puts there are paced as the API's creates are. A put's
 *  commit is dated by its response or by the first watcher to read its event, whichever came first. */
async function benchWatch(endpoint: string, kv: EtcdKv, pids: Pids): Promise<WatchPhase & { watchers: number }> {
  const f = new Fanout();
  const watches: Array<{ cancel(): void }> = [];
  const connections = Array.from({ length: WATCH_CONNECTIONS }, () => new EtcdKv(endpoint));
  try {
    for (let w = 0; w < WATCHERS; w++) {
      watches.push(await connections[w % WATCH_CONNECTIONS].watch(WATCHED, (bytes) => {
        for (let at = bytes.indexOf(WATCHED_KEY); at >= 0; at = bytes.indexOf(WATCHED_KEY, at + 1)) {
          const start = at + WATCHED_KEY.length;
          let end = start;
          while (bytes[end] >= 0x30 && bytes[end] <= 0x39) end++;
          const seq = Number(bytes.toString('latin1', start, end));
          f.committed(seq);
          f.received(w, seq, bytes.length);
        }
      }, () => f.ended.add(w)));
      f.opened++;
    }
    const result = await phase(f, pids, async (seq) => {
      await kv.put(`${WATCHED}w-${seq}`, smallStored('bench-watch', `w-${seq}`));
      f.committed(seq);
      return true;
    }, 0);
    return { ...result, watchers: f.opened };
  } finally {
    for (const w of watches) w.cancel();
    for (const c of connections) c.close();
  }
}

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
      watch: await benchWatch(etcd.endpoint, kv, pids),
    };
  } finally {
    kv.close();
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    await etcd.stop();
  }
}
