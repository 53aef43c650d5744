// Watch fan-out through the API: WATCHERS watch one namespace over HTTPS while a
// paced writer targets TARGET_RATE creates/s there. A create's commit is when its
// event shows on NATS (this process subscribes to the storage change stream like
// the gateway does); delivery latency runs from there to each watcher reading the
// event. Then the same again while one more watcher, of every ConfigMap, stops
// reading: it should be ended, and the others should not notice.
import https from 'node:https';
import { connect as connectTls, createSecureContext, type SecureContext, type TLSSocket } from 'node:tls';
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
/** A watched write's name in its event, `"name":"w-<seq>"`, and what precedes the number. */
const NAME = /"name":"w-(\d+)"/g;
const NAME_MARK = '"name":"w-';
/** The beginnings of NAME_MARK a read may end with, longest first. */
const MARK_STARTS = Array.from({ length: NAME_MARK.length - 1 }, (_, i) => NAME_MARK.slice(0, NAME_MARK.length - 1 - i));

const collection = `/api/v1/namespaces/${WATCH_NAMESPACE}/configmaps`;

/** The sequence numbers of the event names `w-<seq>` in text, in order, into seqs (a compiled regular expression:
 * about twice as fast as searching the bytes per event); returns what to keep for the next read: an unfinished name. */
function namesIn(text: string, seqs: number[]): string {
  seqs.length = 0;
  let end = 0;
  NAME.lastIndex = 0;
  for (let m = NAME.exec(text); m; m = NAME.exec(text)) {
    seqs.push(Number(m[1]));
    end = NAME.lastIndex;
  }
  const open = text.lastIndexOf(NAME_MARK);
  if (open >= end) return text.slice(open);
  // A read ending with whole events (the usual case) keeps nothing.
  const cut = MARK_STARTS.find((start) => text.length - start.length >= end && text.endsWith(start));
  return cut ? text.slice(text.length - cut.length) : '';
}

/** The end of a chunked response: the last chunk's CRLF, then the chunk of size 0 and an empty trailer. */
const LAST_CHUNK = '\r\n0\r\n\r\n';

/** Opens watcher w's watch on a TLS connection of its own, read as bytes; every event name `w-<seq>` it reads is
 * recorded in f. Not through the HTTP client: its parser and streams cost the load generator about a third of its
 * time per read, and with 1,000 streams on 2 cores the load generator, not the server, bounded delivery. The chunk
 * framing stays in the text: its size lines hold no event name, and a chunk holds whole events. */
function openWatch(context: SecureContext, port: number, path: string, f: Fanout, w: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const socket = connectTls({ host: '127.0.0.1', port, secureContext: context });
    let head: string | undefined = ''; // the response's status line and headers, until they are whole
    let carry = '';
    const seqs: number[] = [];
    const fail = (err: Error) => { socket.destroy(); reject(err); };
    socket.once('secureConnect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: application/json\r\n\r\n`));
    socket.on('data', (chunk: Buffer) => {
      // The events of one read arrived together: one time for them all. A name cut by the read's end is read with the next.
      const at = performance.now();
      let text = chunk.toString('latin1');
      if (head !== undefined) {
        head += text;
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!/^HTTP\/1\.1 200 /.test(head)) return fail(new Error(`watch answered ${head.slice(0, head.indexOf('\r\n'))}`));
        if (!/\r\ntransfer-encoding: chunked\r\n/i.test(head.slice(0, end + 2))) return fail(new Error('watch answered without chunked encoding'));
        text = head.slice(end + 4);
        head = undefined;
        resolve(socket);
      }
      carry = namesIn(carry ? carry + text : text, seqs);
      if (seqs.length > 0) f.reads++;
      for (const seq of seqs) f.received(w, seq, chunk.length / seqs.length, at);
      if (text.endsWith(LAST_CHUNK)) f.ended.add(w);
    });
    socket.on('close', () => { if (head === undefined) f.ended.add(w); else reject(new Error('watch closed before its answer')); });
    socket.on('error', (err) => (head === undefined ? f.ended.add(w) : fail(err)));
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
  const requests: Array<{ destroy(): void }> = [];
  const context = createSecureContext(tls);
  try {
    const rv = (await cluster.request('GET', collection)).body.metadata.resourceVersion;
    const openDeadline = performance.now() + OPEN_BUDGET_MS;
    let next = 0;
    await Promise.all(Array.from({ length: OPENING_LANES }, async () => {
      for (let w = next++; w < WATCHERS && performance.now() < openDeadline; w = next++) {
        requests.push(await openWatch(context, cluster.port, `${collection}?watch=1&resourceVersion=${rv}`, f, w));
        f.opened++;
      }
    }));
    if (f.opened < WATCHERS) throw new Error(`only ${f.opened} of ${WATCHERS} watches opened within ${OPEN_BUDGET_MS} ms`);
    // As before the second phase: what opening 1,000 connections left to do (collecting its garbage) is not counted.
    await waitQuiet(pids, 100, 10_000);
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
    // As in the whole bench, where other phases come between: LevelDB compacting the seeded objects would slow the first phase.
    await waitQuiet(cluster.pids(), 100, 60_000);
    const w = await benchWatch(cluster, cluster.pids(), adminTls(cluster.dataDir), throughStorage);
    console.log(`${w.watchers} watchers, target ${w.targetRate} writes/s, events of ~${Math.round(w.eventBytes)} B, watchers ended: ${w.endedWatchers}`);
    console.log(phaseLine('alone', w.alone));
    console.log(phaseLine('with stalled', w.withStalled));
    console.log(`stalled watcher: ${w.withStalled.stalledEnded}; gateway RSS grew ${w.withStalled.gatewayRssGrowthMb.toFixed(1)} MiB`);
  } finally {
    await cluster.stop();
  }
}
