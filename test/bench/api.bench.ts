// The API measured end to end: a whole cluster (nats-server and every service as
// its own process), reached over HTTPS with keep-alive and the admin client
// certificate, as a client sees it. Every loop is bounded in count and in time.
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { Cluster } from '../lib/cluster.js';
import { pkiPaths } from '../../internal/pki/index.js';
import { randomUUID } from 'node:crypto';
import { StorageClient } from '../../internal/storage/client.js';
import { objectKey } from '../../internal/storage/keys.js';
import { MEDIA_PROTOBUF } from '../../internal/names/index.js';
import { encodeStored } from '../../gateway/objects.js';

export interface ApiBenchResult { name: string; opsPerSec: number; p50Ms: number; p99Ms: number; note?: string }

const NAMESPACE = 'bench';
const WATCH_NAMESPACE = 'bench-watch';
const PAYLOAD = 'x'.repeat(900);
/** No loop runs longer than this, whatever its count. */
const LOOP_BUDGET_MS = 10_000;
const WATCHERS = 100;
const WATCHED_WRITES = 100;
const DELIVERY_TIMEOUT_MS = 3_000;

const collection = (ns: string): string => `/api/v1/namespaces/${ns}/configmaps`;
const configMap = (name: string): string => JSON.stringify({ metadata: { name }, data: { payload: PAYLOAD } });
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;
const round = (n: number): number => Math.round(n * 1000) / 1000;

function summarize(name: string, count: number, elapsedMs: number, latencies: number[], note?: string): ApiBenchResult {
  latencies.sort((a, b) => a - b);
  return { name, opsPerSec: Math.round((count / elapsedMs) * 1000), p50Ms: round(percentile(latencies, 0.5)), p99Ms: round(percentile(latencies, 0.99)), ...(note ? { note } : {}) };
}

type Tls = { ca: Buffer; cert: Buffer; key: Buffer };

/** One request on a keep-alive agent; resolves with the status once the body is read.
 *  A reused socket the server closed while idle is retried once on a fresh one. */
function send(agent: https.Agent, port: number, method: string, path: string, body?: string, retried = false, accept = 'application/json'): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { Accept: accept, ...(body === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }) };
    const req = https.request({ agent, host: '127.0.0.1', port, method, path, headers, timeout: 15_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (req.reusedSocket && err.code === 'ECONNRESET' && !retried) send(agent, port, method, path, body, true, accept).then(resolve, reject);
      else reject(err);
    });
    req.end(body);
  });
}

/** Runs op(0..total-1) on `clients` lanes, each with its own connection, until done or the budget is spent. */
async function measure(name: string, tls: Tls, port: number, total: number, clients: number, op: (agent: https.Agent, i: number) => Promise<void>): Promise<ApiBenchResult> {
  const agent = new https.Agent({ ...tls, keepAlive: true, maxSockets: clients });
  const latencies: number[] = [];
  const deadline = performance.now() + LOOP_BUDGET_MS;
  let next = 0;
  const started = performance.now();
  try {
    await Promise.all(Array.from({ length: clients }, async () => {
      for (let i = next++; i < total && performance.now() < deadline; i = next++) {
        const t = performance.now();
        await op(agent, i).catch((err: Error) => { throw new Error(`${name}: ${err.message}`); });
        latencies.push(performance.now() - t);
      }
    }));
  } finally {
    agent.destroy();
  }
  const done = latencies.length;
  return summarize(name, done, performance.now() - started, latencies, done < total ? `stopped after ${done} of ${total} (time budget)` : undefined);
}

const expectStatus = (want: number, what: string) => (status: number): void => {
  if (status !== want) throw new Error(`${what} answered ${status}, expected ${want}`);
};

async function benchCrud(tls: Tls, port: number): Promise<ApiBenchResult[]> {
  let created = 0; // objects of the single-client run, which the gets read back
  const create = (prefix: string) => async (agent: https.Agent, i: number) => {
    expectStatus(201, 'create')(await send(agent, port, 'POST', collection(NAMESPACE), configMap(`${prefix}-${i}`)));
    if (prefix === 'c1') created++;
  };
  const get = async (agent: https.Agent, i: number) =>
    expectStatus(200, 'get')(await send(agent, port, 'GET', `${collection(NAMESPACE)}/c1-${(i * 7919) % created}`));
  return [
    await measure('https create, 1 client', tls, port, 300, 1, create('c1')),
    await measure('https create, 32 clients', tls, port, 1000, 32, create('c32')),
    await measure('https get, 1 client', tls, port, 500, 1, get),
    await measure('https get, 32 clients', tls, port, 1500, 32, get),
  ];
}

const LIST_NAMESPACE = 'bench-list';
const LISTED_OBJECTS = 10_000;
const SEED_LANES = 64;

/** Writes the listed objects straight through storage: seeding is not what is measured. */
async function seedList(cluster: Cluster): Promise<void> {
  const storage = new StorageClient(cluster.addresses.storage);
  try {
    let next = 0;
    await Promise.all(Array.from({ length: SEED_LANES }, async () => {
      for (let i = next++; i < LISTED_OBJECTS; i = next++) {
        const name = `l-${i}`;
        const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: LIST_NAMESPACE, uid: randomUUID(), creationTimestamp: new Date().toISOString() }, data: { payload: PAYLOAD } };
        await storage.create(objectKey('', 'configmaps', LIST_NAMESPACE, name), encodeStored(obj), obj.metadata.uid);
      }
    }));
  } finally {
    storage.close();
  }
}

/** The latency of listing 10k ConfigMaps over HTTPS, as JSON and as Protobuf. */
async function benchList(tls: Tls, port: number, cluster: Cluster): Promise<ApiBenchResult[]> {
  await seedList(cluster);
  const list = (accept: string) => async (agent: https.Agent) =>
    expectStatus(200, 'list')(await send(agent, port, 'GET', collection(LIST_NAMESPACE), undefined, false, accept));
  return [
    await measure(`https list of ${LISTED_OBJECTS} configmaps, JSON`, tls, port, 20, 1, list('application/json')),
    await measure(`https list of ${LISTED_OBJECTS} configmaps, Protobuf`, tls, port, 20, 1, list(MEDIA_PROTOBUF)),
  ];
}

/** One line of a watch stream; undefined for a blank or malformed one (its delivery counts as missed). */
function parseEvent(line: string): { type: string; object: { metadata: { name: string } } } | undefined {
  try {
    return line.trim() ? JSON.parse(line) : undefined;
  } catch {
    return undefined;
  }
}

/** A raw watch stream: calls onEvent with the name of each ADDED object, as it arrives. */
function openWatch(agent: https.Agent, port: number, path: string, onEvent: (name: string) => void): Promise<ClientRequest> {
  return new Promise((resolve, reject) => {
    const req = https.request({ agent, host: '127.0.0.1', port, method: 'GET', path }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`watch answered ${res.statusCode}`)); req.destroy(); return; }
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          const event = parseEvent(line);
          if (event?.type === 'ADDED') onEvent(event.object.metadata.name);
        }
      });
      res.on('error', () => undefined); // destroyed at the end of the bench
      resolve(req);
    });
    req.on('error', reject);
    req.end();
  });
}

interface Delivery { sentAt: number; ackAt: number; times: number[] }

/** WATCHERS open watches on the collection and a writer whose write(name) creates one
 *  object and waits until every watcher has its event (or DELIVERY_TIMEOUT_MS passed). */
async function openWatchers(tls: Tls, port: number, rv: string): Promise<{ write(name: string): Promise<Delivery>; close(): void }> {
  const watchAgent = new https.Agent({ ...tls, keepAlive: true, maxSockets: WATCHERS });
  const writer = new https.Agent({ ...tls, keepAlive: true, maxSockets: 1 });
  const received = new Map<string, number[]>(); // object name → when each watcher got it
  let onDelivery: (() => void) | undefined;
  const watches: ClientRequest[] = [];
  const close = (): void => {
    for (const req of watches) req.destroy();
    watchAgent.destroy();
    writer.destroy();
  };
  try {
    for (let w = 0; w < WATCHERS; w++) {
      watches.push(await openWatch(watchAgent, port, `${collection(WATCH_NAMESPACE)}?watch=1&resourceVersion=${rv}`, (name) => {
        received.get(name)?.push(performance.now());
        onDelivery?.();
      }));
    }
  } catch (err) {
    close();
    throw err;
  }
  const write = async (name: string): Promise<Delivery> => {
    const times: number[] = [];
    received.set(name, times);
    const allArrived = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, DELIVERY_TIMEOUT_MS);
      onDelivery = () => { if (times.length >= WATCHERS) { clearTimeout(timer); resolve(); } };
    });
    const sentAt = performance.now();
    expectStatus(201, 'create')(await send(writer, port, 'POST', collection(WATCH_NAMESPACE), configMap(name)));
    const ackAt = performance.now();
    onDelivery?.();
    await allArrived;
    return { sentAt, ackAt, times };
  };
  return { write, close };
}

/** Delivery latency to WATCHERS watchers, one write at a time: from the write's
 *  acknowledgement, and from its sending (the whole path through storage and NATS). */
async function benchWatch(tls: Tls, port: number, cluster: Cluster): Promise<ApiBenchResult[]> {
  const rv = (await cluster.request('GET', collection(WATCH_NAMESPACE))).body.metadata.resourceVersion;
  const watchers = await openWatchers(tls, port, rv);
  try {
    await watchers.write('warm-up').catch((err: Error) => { throw new Error(`watch warm-up: ${err.message}`); });
    const fromAck: number[] = [];
    const fromSend: number[] = [];
    let missed = 0;
    let early = 0;
    const deadline = performance.now() + LOOP_BUDGET_MS;
    const started = performance.now();
    let writes = 0;
    for (; writes < WATCHED_WRITES && performance.now() < deadline; writes++) {
      const d = await watchers.write(`w-${writes}`).catch((err: Error) => { throw new Error(`watch write ${writes}: ${err.message}`); });
      // An event may overtake the write's response: it was delivered no later than the ack.
      for (const t of d.times) fromAck.push(Math.max(0, t - d.ackAt));
      for (const t of d.times) fromSend.push(t - d.sentAt);
      early += d.times.filter((t) => t < d.ackAt).length;
      missed += WATCHERS - d.times.length;
    }
    const elapsed = performance.now() - started;
    const notes = [missed ? `${missed} deliveries missed` : '', writes < WATCHED_WRITES ? `stopped after ${writes} writes (time budget)` : ''];
    const note = (extra = ''): string | undefined => [extra, ...notes].filter(Boolean).join('; ') || undefined;
    return [
      summarize(`https watch, ${WATCHERS} watchers: write acked → event (events/s)`, fromAck.length, elapsed, fromAck,
        note(early ? `${early} of ${fromAck.length} events came before the write's response (counted as 0)` : '')),
      summarize(`https watch, ${WATCHERS} watchers: write sent → event (events/s)`, fromSend.length, elapsed, fromSend, note()),
    ];
  } finally {
    watchers.close();
  }
}

/** The last lines each service wrote, to tell why a request failed. */
function serviceLogTails(cluster: Cluster): string {
  return [...cluster.logs].map(([s, log]) => `--- ${s}\n${log.join('').split('\n').slice(-6).join('\n')}`).join('\n');
}

export async function benchApi(): Promise<ApiBenchResult[]> {
  const cluster = new Cluster();
  // Interrupted, the services must not outlive the bench.
  const onSignal = (): void => void cluster.stop().finally(() => process.exit(130));
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    await cluster.start();
    for (const ns of [NAMESPACE, WATCH_NAMESPACE, LIST_NAMESPACE]) {
      const res = await cluster.request('POST', '/api/v1/namespaces', { body: { metadata: { name: ns } } });
      expectStatus(201, `create namespace ${ns}`)(res.status);
    }
    const p = pkiPaths(cluster.dataDir);
    const tls = { ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) };
    return [...await benchCrud(tls, cluster.port), ...await benchWatch(tls, cluster.port, cluster), ...await benchList(tls, cluster.port, cluster)];
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${serviceLogTails(cluster)}`);
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    await cluster.stop();
  }
}
