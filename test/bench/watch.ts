// Watch fan-out under load: WATCHERS watch one namespace while a paced writer
// targets TARGET_RATE creates/s there. A create's commit is when its event shows
// on NATS (this process subscribes to the storage change stream like the
// gateway does); delivery latency runs from there to each watcher reading the
// event. Then the same again while one more watcher, of every ConfigMap, stops
// reading: it should be ended, and the others should not notice.
import https from 'node:https';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { connect } from '@nats-io/transport-node';
import { collectionPrefix } from '../../internal/storage/keys.js';
import { decodeSubjectToken, subscriptionSubject } from '../../internal/storage/events.js';
import type { Cluster } from '../lib/cluster.js';
import { keepAlive, send, type Tls } from './https.js';
import { percentile } from './load.js';
import { cpuSince, rssKb, sampleCpu, waitQuiet, type Pids } from './proc.js';
import { smallBody } from './objects.js';
import type { WatchFigures, WatchPhase } from './figures.js';

export const WATCH_NAMESPACE = 'bench-watch';
const WATCHERS = 1000;
const TARGET_RATE = 500;
const WRITE_MS = 5_000;
const MAX_IN_FLIGHT = 64;
/** Watches opened at once. */
const OPENING_LANES = 50;
const OPEN_BUDGET_MS = 60_000;
/** A phase's deliveries are awaited until all arrived, nothing arrived for DRAIN_IDLE_MS, or DRAIN_MS. */
const DRAIN_MS = 10_000;
const DRAIN_IDLE_MS = 2_000;
/** How long the stalled watcher's stream is read afterwards to learn whether it was ended. */
const STALLED_READ_MS = 10_000;
const SEQS = Math.ceil((TARGET_RATE * WRITE_MS) / 1000);
const NAME = /"name":"w-(\d+)"/g;

const collection = `/api/v1/namespaces/${WATCH_NAMESPACE}/configmaps`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** When each watcher read each write's event: receipts[watcher * 2 * SEQS + seq]; NaN until then. */
class Receipts {
  readonly at = new Float64Array(WATCHERS * 2 * SEQS).fill(NaN);
  count = 0;
  record(watcher: number, seq: number, now: number): void {
    const i = watcher * 2 * SEQS + seq;
    if (seq < 2 * SEQS && Number.isNaN(this.at[i])) { this.at[i] = now; this.count++; }
  }
  get(watcher: number, seq: number): number {
    return this.at[watcher * 2 * SEQS + seq];
  }
}

/** Opens one watch; every event name `w-<seq>` it reads goes to onSeq. */
function openWatch(agent: https.Agent, port: number, path: string, onSeq: (seq: number, bytes: number) => void, onEnd: () => void): Promise<ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = https.request({ agent, host: '127.0.0.1', port, method: 'GET', path }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`watch answered ${res.statusCode}`)); req.destroy(); return; }
      let carry = '';
      res.on('data', (chunk: Buffer) => {
        // Names cut by a chunk boundary are found on the next chunk; one found twice is recorded once.
        const text = carry + chunk.toString('latin1');
        const names = [...text.matchAll(NAME)];
        for (const m of names) onSeq(Number(m[1]), chunk.length / names.length);
        carry = text.slice(-24);
      });
      res.on('end', onEnd);
      res.on('error', onEnd);
      resolve(req);
    });
    req.on('error', reject);
    req.end();
  });
}

interface Writes { startSeq: number; acked: Map<number, number>; failed: number; elapsedMs: number }

/** Creates `w-<seq>` objects at TARGET_RATE for WRITE_MS, at most MAX_IN_FLIGHT at once. */
async function paceWrites(agent: https.Agent, port: number, startSeq: number): Promise<Writes> {
  const acked = new Map<number, number>();
  const pending = new Set<Promise<void>>();
  let failed = 0;
  let launched = 0;
  const started = performance.now();
  let lastAck = started;
  const launch = (seq: number) => {
    const p = send(agent, port, 'POST', collection, smallBody(`w-${seq}`)).then(
      (status) => { if (status === 201) { lastAck = performance.now(); acked.set(seq, lastAck); } else failed++; },
      () => { failed++; },
    ).finally(() => pending.delete(p));
    pending.add(p);
  };
  while (performance.now() - started < WRITE_MS) {
    const due = Math.min(SEQS, Math.floor(((performance.now() - started) / 1000) * TARGET_RATE));
    while (launched < due && pending.size < MAX_IN_FLIGHT) launch(startSeq + launched++);
    await sleep(2);
  }
  await Promise.all(pending);
  return { startSeq, acked, failed, elapsedMs: Math.max(WRITE_MS, lastAck - started) };
}

interface Fanout {
  receipts: Receipts;
  commits: Float64Array;
  /** Watches that answered 200. */
  opened: number;
  /** Watchers whose stream the server ended. */
  ended: Set<number>;
  /** Bytes and events watcher 0 read: the size of one event on the wire. */
  sample: { bytes: number; events: number };
}

/** Waits until every open watcher read every acknowledged write, or delivery stalls. */
async function drain(f: Fanout, writes: Writes): Promise<void> {
  const expected = writes.acked.size * f.opened;
  const deadline = performance.now() + DRAIN_MS;
  let seen = -1;
  let progressAt = performance.now();
  while (performance.now() < deadline && performance.now() - progressAt < DRAIN_IDLE_MS) {
    let have = 0;
    for (const seq of writes.acked.keys()) for (let w = 0; w < f.opened; w++) if (!Number.isNaN(f.receipts.get(w, seq))) have++;
    if (have >= expected) return;
    if (have !== seen) { seen = have; progressAt = performance.now(); }
    await sleep(250);
  }
}

/** One phase: paced writes, their delivery to every watcher, and what it cost. */
async function phase(f: Fanout, pids: Pids, agent: https.Agent, port: number, startSeq: number): Promise<WatchPhase> {
  const before = sampleCpu(pids);
  const writes = await paceWrites(agent, port, startSeq);
  await drain(f, writes);
  const cpu = cpuSince(before, pids);
  const latencies: number[] = [];
  let lost = 0;
  let commitsSeen = 0;
  for (const [seq, ackAt] of writes.acked) {
    // A commit this process did not see on NATS is dated by the create's response.
    const seen = !Number.isNaN(f.commits[seq]);
    if (seen) commitsSeen++;
    const committed = seen ? f.commits[seq] : ackAt;
    for (let w = 0; w < f.opened; w++) {
      const at = f.receipts.get(w, seq);
      if (Number.isNaN(at)) lost++;
      else latencies.push(Math.max(0, at - committed));
    }
  }
  latencies.sort((a, b) => a - b);
  const n = writes.acked.size || NaN;
  return {
    achievedRate: (writes.acked.size / writes.elapsedMs) * 1000,
    writes: writes.acked.size,
    failedWrites: writes.failed,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    lost,
    commitsSeen,
    cpuMsPerWrite: cpu.total / n,
    cpuMsPerWriteByProcess: Object.fromEntries(Object.entries(cpu.byProcess).map(([k, ms]) => [k, ms / n])),
    clientCpuShare: cpu.client / cpu.elapsedMs,
  };
}

/** A watcher of every ConfigMap from resourceVersion 0 (so the existing objects come first) that reads nothing. */
function openStalled(agent: https.Agent, port: number): Promise<{ req: ClientRequest; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ agent, host: '127.0.0.1', port, method: 'GET', path: '/api/v1/configmaps?watch=1&resourceVersion=0' }, (res) => {
      res.pause();
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
    res.once('end', ended).once('close', ended);
    res.resume();
  });
}

export async function benchWatch(cluster: Cluster, pids: Pids, tls: Tls): Promise<WatchFigures> {
  const f: Fanout = { receipts: new Receipts(), commits: new Float64Array(2 * SEQS).fill(NaN), opened: 0, ended: new Set(), sample: { bytes: 0, events: 0 } };
  const nc = await connect({ servers: cluster.natsUrl });
  nc.subscribe(subscriptionSubject(collectionPrefix('', 'configmaps', WATCH_NAMESPACE)), {
    callback: (_err, msg) => {
      const seq = Number(/^w-(\d+)$/.exec(decodeSubjectToken(msg.subject.slice(msg.subject.lastIndexOf('.') + 1)))?.[1]);
      if (seq < 2 * SEQS && Number.isNaN(f.commits[seq])) f.commits[seq] = performance.now();
    },
  });
  await nc.flush();
  const watchAgent = new https.Agent({ ...tls, keepAlive: false, maxSockets: Infinity });
  const writer = keepAlive(tls, MAX_IN_FLIGHT);
  const requests: ClientRequest[] = [];
  try {
    const rv = (await cluster.request('GET', collection)).body.metadata.resourceVersion;
    const openDeadline = performance.now() + OPEN_BUDGET_MS;
    const onSeq = (w: number) => (seq: number, bytes: number) => {
      f.receipts.record(w, seq, performance.now());
      if (w === 0) { f.sample.bytes += bytes; f.sample.events++; }
    };
    let next = 0;
    await Promise.all(Array.from({ length: OPENING_LANES }, async () => {
      for (let w = next++; w < WATCHERS && performance.now() < openDeadline; w = next++) {
        requests.push(await openWatch(watchAgent, cluster.port, `${collection}?watch=1&resourceVersion=${rv}`, onSeq(w), () => f.ended.add(w)));
        f.opened++;
      }
    }));
    if (f.opened < WATCHERS) throw new Error(`only ${f.opened} of ${WATCHERS} watches opened within ${OPEN_BUDGET_MS} ms`);
    const alone = await phase(f, pids, writer, cluster.port, 0);

    const stalled = await openStalled(watchAgent, cluster.port);
    requests.push(stalled.req);
    // Its first events (every existing ConfigMap) are sent before the writes start, so
    // that what they cost the gateway is not counted against the others.
    await waitQuiet(new Map([['gateway', pids.get('gateway')!]]), 100, 15_000);
    const rssBefore = rssKb(pids.get('gateway')!);
    const withStalled = await phase(f, pids, writer, cluster.port, SEQS);
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
    await nc.close();
  }
}
