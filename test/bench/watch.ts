// Watch fan-out through the API: WATCHERS watch one namespace over HTTPS while a
// paced writer targets TARGET_RATE creates/s there. A create's commit is when its
// event shows on NATS (this process subscribes to the storage change stream like
// the gateway does); delivery latency runs from there to each watcher reading the
// event. Then the same again while one more watcher, of every ConfigMap, stops
// reading: it should be ended, and the others should not notice.
import https from 'node:https';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { connect } from '@nats-io/transport-node';
import { collectionPrefix } from '../../internal/storage/keys.js';
import { decodeSubjectToken, subscriptionSubject } from '../../internal/storage/events.js';
import { Cluster } from '../lib/cluster.js';
import { adminTls, keepAlive, send, type Tls } from './https.js';
import { rssKb, waitQuiet, type Pids } from './proc.js';
import { smallBody, storedObject } from './objects.js';
import { createConfigMap, writeThroughStorage } from './memory.js';
import { StorageClient } from '../../internal/storage/client.js';
import { Fanout, MAX_IN_FLIGHT, phase, SEQS, TARGET_RATE, WATCHERS } from './fanout.js';
import type { WatchFigures, WatchPhase } from './figures.js';

export const WATCH_NAMESPACE = 'bench-watch';
/** Watches opened at once. */
const OPENING_LANES = 50;
const OPEN_BUDGET_MS = 60_000;
/** How long the stalled watcher's stream is read afterwards to learn whether it was ended. */
const STALLED_READ_MS = 10_000;
/** What precedes a watched write's sequence number in its event: `"name":"w-<seq>"`. */
const NAME_MARK = Buffer.from('"name":"w-');
const DIGIT_0 = 0x30;
const QUOTE = 0x22;

const collection = `/api/v1/namespaces/${WATCH_NAMESPACE}/configmaps`;

/** The sequence numbers of the event names `w-<seq>` in data, in order, into seqs; returns where an unfinished
 * name starts (data.length when none: what is left is kept to be read with the next chunk). */
function namesIn(data: Buffer, seqs: number[]): number {
  seqs.length = 0;
  for (let at = data.indexOf(NAME_MARK); at >= 0; at = data.indexOf(NAME_MARK, at + NAME_MARK.length)) {
    let seq = 0;
    let i = at + NAME_MARK.length;
    for (; i < data.length && data[i] !== QUOTE; i++) seq = seq * 10 + data[i] - DIGIT_0;
    if (i === data.length) return at;
    seqs.push(seq);
  }
  return cutMark(data);
}

/** Where the start of a NAME_MARK cut by the end of data begins; data.length when data does not end with one (as a
 * read ending with whole events does not: nothing is kept then). */
function cutMark(data: Buffer): number {
  for (let k = Math.min(NAME_MARK.length - 1, data.length); k > 0; k--) {
    let i = 0;
    while (i < k && data[data.length - k + i] === NAME_MARK[i]) i++;
    if (i === k) return data.length - k;
  }
  return data.length;
}

/** Opens watcher w's watch; every event name `w-<seq>` it reads is recorded in f. */
function openWatch(agent: https.Agent, port: number, path: string, f: Fanout, w: number): Promise<ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = https.request({ agent, host: '127.0.0.1', port, method: 'GET', path }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`watch answered ${res.statusCode}`)); req.destroy(); return; }
      let carry: Buffer | undefined;
      const seqs: number[] = [];
      res.on('data', (chunk: Buffer) => {
        // The bytes, not a text made of them, are searched; a name cut by a chunk boundary is read with the next chunk.
        const data = carry ? Buffer.concat([carry, chunk]) : chunk;
        const rest = namesIn(data, seqs);
        carry = rest < data.length ? data.subarray(rest) : undefined;
        if (seqs.length > 0) f.reads++;
        for (const seq of seqs) f.received(w, seq, chunk.length / seqs.length);
      });
      const onEnd = () => f.ended.add(w);
      res.on('end', onEnd);
      res.on('error', onEnd);
      resolve(req);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A watcher of every ConfigMap from resourceVersion 0 (so the existing objects come first) that reads nothing. */
function openStalled(agent: https.Agent, port: number): Promise<{ req: ClientRequest; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ agent, host: '127.0.0.1', port, method: 'GET', path: '/api/v1/configmaps?watch=1&resourceVersion=0' }, (res) => {
      res.pause();
      res.on('error', () => undefined); // a reset by the server is read as its end by howEnded
      if (res.statusCode !== 200) { reject(new Error(`stalled watch answered ${res.statusCode}`)); req.destroy(); return; }
      resolve({ req, res });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Reads what the stalled watcher was sent; says whether the server ended it and how. */
function howEnded(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let tail = '';
    let bytes = 0;
    let lastData = performance.now();
    const started = performance.now();
    const finish = (how: string) => { clearInterval(timer); resolve(`${how} after ${(bytes / 1048576).toFixed(1)} MiB`); };
    const timer = setInterval(() => {
      if (performance.now() - lastData > 1_000) finish('not ended: the stream stayed open');
      else if (performance.now() - started > STALLED_READ_MS) finish('not ended: still sending');
    }, 100);
    res.on('data', (chunk: Buffer) => { bytes += chunk.length; lastData = performance.now(); tail = (tail + chunk.toString('latin1')).slice(-4096); });
    const ended = () => {
      const error = /"type":"ERROR".*"code":(\d+)/.exec(tail);
      finish(error ? `ended with an ERROR event, code ${error[1]},` : 'ended (closed without an ERROR event)');
    };
    res.once('end', ended).once('close', ended).once('error', ended);
    res.resume();
  });
}

/** A writer of the watched creates straight through storage: the fan-out measured at the target rate, whatever the API's write path costs. */
function storageWriter(address: string): { write: (seq: number) => Promise<boolean>; close(): void } {
  const storage = new StorageClient(address);
  const write = async (seq: number) => {
    await createConfigMap(storage, storedObject(WATCH_NAMESPACE, `w-${seq}`, { key: 'value' }));
    return true;
  };
  return { write, close: () => storage.close() };
}

export async function benchWatch(cluster: Cluster, pids: Pids, tls: Tls, throughStorage = false): Promise<WatchFigures> {
  const f = new Fanout();
  const nc = await connect({ servers: cluster.natsUrl });
  nc.subscribe(subscriptionSubject(collectionPrefix('', 'configmaps', WATCH_NAMESPACE)), {
    callback: (_err, msg) => f.committed(Number(/^w-(\d+)$/.exec(decodeSubjectToken(msg.subject.slice(msg.subject.lastIndexOf('.') + 1)))?.[1])),
  });
  await nc.flush();
  const watchAgent = new https.Agent({ ...tls, keepAlive: false, maxSockets: Infinity });
  const writer = keepAlive(tls, MAX_IN_FLIGHT);
  const direct = throughStorage ? storageWriter(cluster.addresses.storage) : undefined;
  const write = direct?.write ?? (async (seq: number) => (await send(writer, cluster.port, 'POST', collection, smallBody(`w-${seq}`))) === 201);
  const requests: ClientRequest[] = [];
  try {
    const rv = (await cluster.request('GET', collection)).body.metadata.resourceVersion;
    const openDeadline = performance.now() + OPEN_BUDGET_MS;
    let next = 0;
    await Promise.all(Array.from({ length: OPENING_LANES }, async () => {
      for (let w = next++; w < WATCHERS && performance.now() < openDeadline; w = next++) {
        requests.push(await openWatch(watchAgent, cluster.port, `${collection}?watch=1&resourceVersion=${rv}`, f, w));
        f.opened++;
      }
    }));
    if (f.opened < WATCHERS) throw new Error(`only ${f.opened} of ${WATCHERS} watches opened within ${OPEN_BUDGET_MS} ms`);
    const alone = await phase(f, pids, write, 0);

    const stalled = await openStalled(watchAgent, cluster.port);
    requests.push(stalled.req);
    // Its first events (every existing ConfigMap) are sent before the writes start, so
    // that what they cost the gateway is not counted against the others.
    await waitQuiet(new Map([['gateway', pids.get('gateway')!]]), 100, 10_000);
    const rssBefore = rssKb(pids.get('gateway')!);
    const withStalled = await phase(f, pids, write, SEQS);
    const gatewayRssGrowthMb = (rssKb(pids.get('gateway')!) - rssBefore) / 1024;
    const stalledEnded = await howEnded(stalled.res);
    return {
      watchers: f.opened, targetRate: TARGET_RATE, eventBytes: f.sample.bytes / f.sample.events, endedWatchers: f.ended.size,
      alone, withStalled: { ...withStalled, stalledEnded, gatewayRssGrowthMb },
    };
  } finally {
    for (const req of requests) req.destroy();
    watchAgent.destroy();
    writer.destroy();
    direct?.close();
    await nc.close();
  }
}

const phaseLine = (name: string, p: WatchPhase): string =>
  `${name}: ${p.achievedRate.toFixed(0)} writes/s (${p.writes} writes, ${p.failedWrites} failed), delivery p50 ${p.p50Ms.toFixed(1)} ms `
  + `p99 ${p.p99Ms.toFixed(1)} ms, ${p.lost} lost; CPU ms/write ${Object.entries(p.cpuMsPerWriteByProcess).map(([k, ms]) => `${k} ${ms.toFixed(2)}`).join(', ')}; `
  + `client ${(p.clientCpuShare * 100).toFixed(0)}% of a core; ${p.readsPerWatcherPerSecond.toFixed(1)} reads/s per watcher`;

/** ConfigMaps of another namespace written first, so that the stalled watcher (of every namespace) has a catch-up to read. */
const SEEDED = 20_000;

/** The watch phase on a cluster of its own, printed briefly (BENCH=watch). BENCH_CPU_PROF=<dir> profiles every
 * service into dir; BENCH_WATCH_WRITER=storage writes the watched creates straight through storage. */
export async function benchWatchAlone(): Promise<void> {
  const profDir = process.env.BENCH_CPU_PROF;
  const throughStorage = process.env.BENCH_WATCH_WRITER === 'storage';
  const cluster = new Cluster(profDir ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] } : {});
  try {
    await cluster.start();
    const created = await cluster.request('POST', '/api/v1/namespaces', { body: { metadata: { name: WATCH_NAMESPACE } } });
    if (created.status !== 201) throw new Error(`create namespace ${WATCH_NAMESPACE}: ${created.status}`);
    const { written } = await writeThroughStorage(cluster.addresses.storage, SEEDED, 60_000, (i) => storedObject('bench-seed', `s-${i}`));
    console.log(`${written} ConfigMaps seeded${throughStorage ? '; the watched creates go straight through storage' : ''}`);
    const w = await benchWatch(cluster, cluster.pids(), adminTls(cluster.dataDir), throughStorage);
    console.log(`${w.watchers} watchers, target ${w.targetRate} writes/s, events of ~${Math.round(w.eventBytes)} B, watchers ended: ${w.endedWatchers}`);
    console.log(phaseLine('alone', w.alone));
    console.log(phaseLine('with stalled', w.withStalled));
    console.log(`stalled watcher: ${w.withStalled.stalledEnded}; gateway RSS grew ${w.withStalled.gatewayRssGrowthMb.toFixed(1)} MiB`);
  } finally {
    await cluster.stop();
  }
}
