import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { grpc, isServiceError, trailers } from '../../internal/rpc/index.js';
import { StorageClient, type StorageEvent } from '../../internal/storage/client.js';
import { extractContext, runIn } from '../../internal/tracing/index.js';
import {
  PREV_REVISION_HEADER, REVISION_HEADER, decodeEvent, eventSubject, subscriptionSubject,
} from '../../internal/storage/events.js';
import { startNats, type RunningNats } from '../lib/nats.js';

const MAIN = fileURLToPath(new URL('../../cmd/storage/main.js', import.meta.url));
const v = (s: string): Buffer => Buffer.from(s);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface StorageProcess { proc: ChildProcess; address: string; log: string[] }

/** Starts dist/cmd/storage/main.js and waits (bounded) for its listening line. */
async function startStorage(dataDir: string, natsUrl: string): Promise<StorageProcess> {
  const proc = spawn(process.execPath, [MAIN, '--listen=127.0.0.1:0', `--nats-url=${natsUrl}`, `--data-dir=${dataDir}`],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  const log: string[] = [];
  proc.stderr!.on('data', (d) => log.push(String(d)));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`storage did not start:\n${log.join('')}`)), 20_000);
    proc.stdout!.on('data', (d) => {
      log.push(String(d));
      const m = /storage listening on (\S+)/.exec(log.join(''));
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.once('exit', (code) => reject(new Error(`storage exited with ${code}:\n${log.join('')}`)));
  });
  return { proc, address, log };
}

/** Sends a signal and waits (bounded) for the exit; resolves the exit code or signal. */
async function stopProcess(proc: ChildProcess, signal: NodeJS.Signals): Promise<number | string> {
  if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode ?? proc.signalCode!;
  const exited = new Promise<number | string>((resolve) => proc.once('exit', (code, sig) => resolve(code ?? sig!)));
  process.kill(proc.pid!, signal);
  const timer = setTimeout(() => process.kill(proc.pid!, 'SIGKILL'), 10_000);
  const result = await exited;
  clearTimeout(timer);
  return result;
}

async function waitFor<T>(what: string, get: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function grpcError(p: Promise<unknown>): Promise<grpc.ServiceError> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  if (!isServiceError(err)) throw new Error(`expected a gRPC error, got ${String(err)}`);
  return err;
}

/** Reads a watch stream until `count` events arrived, then cancels it. */
function readWatch(stream: grpc.ClientReadableStream<StorageEvent>, count: number): Promise<StorageEvent[]> {
  return new Promise((resolve, reject) => {
    const events: StorageEvent[] = [];
    const timer = setTimeout(() => { stream.cancel(); reject(new Error(`watch got only ${events.length} events`)); }, 10_000);
    stream.on('data', (e: StorageEvent) => {
      events.push(e);
      if (events.length === count) {
        clearTimeout(timer);
        stream.cancel();
        resolve(events);
      }
    });
    stream.on('error', (err: grpc.ServiceError) => {
      clearTimeout(timer);
      if (err.code === grpc.status.CANCELLED && events.length === count) return;
      reject(err);
    });
    stream.on('end', () => { clearTimeout(timer); resolve(events); });
  });
}

describe('storage service process', function () {
  this.timeout(60_000);
  let nats: RunningNats;
  let nc: NatsConnection;
  let dataDir: string;
  let storage: StorageProcess | undefined;
  let client: StorageClient | undefined;
  const all: Msg[] = [];
  const ns1: Msg[] = [];

  before(async () => {
    nats = await startNats();
    dataDir = mkdtempSync(join(tmpdir(), 'storage-it-'));
    nc = await connect({ servers: nats.url });
    nc.subscribe(subscriptionSubject(''), { callback: (_err, msg) => { all.push(msg); } });
    nc.subscribe(subscriptionSubject('core/configmaps/ns1/'), { callback: (_err, msg) => { ns1.push(msg); } });
    await nc.flush();
    storage = await startStorage(dataDir, nats.url);
    client = new StorageClient(storage.address);
  });

  after(async () => {
    client?.close();
    if (storage) await stopProcess(storage.proc, 'SIGKILL');
    await nc?.close();
    await nats?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('publishes each commit on NATS in order with a revision chain', async () => {
    // Only a write that came with a trace context passes one on (unchanged: this storage exports no spans).
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const traced = extractContext((k) => (k === 'traceparent' ? traceparent : undefined));
    const writes = [
      await runIn(traced, () => client!.create('core/configmaps/ns1/a.b', v('a1'), 'uid-a')),
      await client!.create('core/configmaps/ns2/b', v('b1'), 'uid-b'),
      await client!.update('core/configmaps/ns1/a.b', v('a2'), { modRevision: 1 }),
      await client!.delete('core/configmaps/ns2/b'),
      await client!.create('rbac.authorization.svc.io/clusterroles//admin', v('r'), 'uid-r'),
    ];
    expect(writes.map((w) => w.revision)).to.deep.equal([1, 2, 3, 4, 5]);
    await waitFor('5 messages', () => (all.length >= 5 ? true : undefined));
    const messages = all.splice(0);
    expect(messages.map((m) => m.subject)).to.deep.equal([
      eventSubject('core/configmaps/ns1/a.b'), eventSubject('core/configmaps/ns2/b'), eventSubject('core/configmaps/ns1/a.b'),
      eventSubject('core/configmaps/ns2/b'), eventSubject('rbac.authorization.svc.io/clusterroles//admin'),
    ]);
    expect(messages[0].subject).to.equal('svc.storage.v1.events.core.configmaps.ns1.a%2Eb');
    expect(messages.map((m) => m.headers?.get(REVISION_HEADER))).to.deep.equal(['1', '2', '3', '4', '5']);
    expect(messages.map((m) => m.headers?.get(PREV_REVISION_HEADER))).to.deep.equal(['0', '1', '2', '3', '4']);
    expect(messages.map((m) => m.headers?.get('traceparent') ?? '')).to.deep.equal([traceparent, '', '', '', '']);
    const events = messages.map((m) => decodeEvent(m.data));
    expect(events.map((e) => [e.type, e.revision, e.kv!.key, e.kv!.value.toString(), e.prevKv?.value.toString() ?? null])).to.deep.equal([
      ['PUT', 1, 'core/configmaps/ns1/a.b', 'a1', null],
      ['PUT', 2, 'core/configmaps/ns2/b', 'b1', null],
      ['PUT', 3, 'core/configmaps/ns1/a.b', 'a2', 'a1'],
      ['DELETE', 4, 'core/configmaps/ns2/b', 'b1', 'b1'],
      ['PUT', 5, 'rbac.authorization.svc.io/clusterroles//admin', 'r', null],
    ]);
    expect(ns1.splice(0).map((m) => m.headers?.get(REVISION_HEADER))).to.deep.equal(['1', '3']);
  });

  it('answers errors with codes and trailers over gRPC', async () => {
    expect((await grpcError(client!.get('core/configmaps/ns1/missing'))).code).to.equal(grpc.status.NOT_FOUND);
    expect((await grpcError(client!.create('core/configmaps/ns1/a.b', v('x'), 'u'))).code).to.equal(grpc.status.ALREADY_EXISTS);
    const stale = await grpcError(client!.update('core/configmaps/ns1/a.b', v('x'), { modRevision: 1 }));
    expect(stale.code).to.equal(grpc.status.FAILED_PRECONDITION);
    expect(trailers(stale)['storage-current-revision']).to.equal('3');
    const future = await grpcError(client!.list('core/configmaps/', { revision: 1000 }));
    expect(future.code).to.equal(grpc.status.OUT_OF_RANGE);
    expect(trailers(future)['storage-error']).to.equal('future');
    expect((await grpcError(client!.list('core/configmaps'))).code).to.equal(grpc.status.INVALID_ARGUMENT);

    expect(await client!.compact(2)).to.deep.equal({ compactedRevision: 2 });
    expect(await client!.currentRevision()).to.deep.equal({ revision: 5, compactedRevision: 2 });
    const compacted = await grpcError(client!.get('core/configmaps/ns1/a.b', 1));
    expect(compacted.code).to.equal(grpc.status.OUT_OF_RANGE);
    expect(trailers(compacted)['storage-error']).to.equal('compacted');
    const watchCompacted = await grpcError(readWatch(client!.watch('core/configmaps/', 1, true), 1));
    expect(watchCompacted.code).to.equal(grpc.status.OUT_OF_RANGE);
    expect(trailers(watchCompacted)['storage-error']).to.equal('compacted');
  });

  it('streams history, progress and live events over a Watch', async () => {
    const stream = client!.watch('core/configmaps/', 2, true);
    const reading = readWatch(stream, 4);
    await sleep(300); // history and progress are sent before the live write
    const live = await client!.create('core/configmaps/ns3/c', v('c1'), 'uid-c');
    const events = await reading;
    expect(events.map((e) => [e.type, e.revision])).to.deep.equal([['PUT', 3], ['DELETE', 4], ['PROGRESS', 5], ['PUT', live.revision]]);
    const listed = await client!.list('core/configmaps/', { limit: 1 });
    expect(listed).to.include({ revision: 6, more: true, remaining: 1 });
    expect(listed.items.map((kv) => kv.key)).to.deep.equal(['core/configmaps/ns1/a.b']);
    all.splice(0);
  });

  it('keeps data and continues revisions and the chain after a crash', async () => {
    expect(await stopProcess(storage!.proc, 'SIGKILL')).to.equal('SIGKILL');
    client!.close();
    storage = await startStorage(dataDir, nats.url);
    client = new StorageClient(storage.address);
    expect(await client.currentRevision()).to.deep.equal({ revision: 6, compactedRevision: 2 });
    expect((await client.get('core/configmaps/ns1/a.b')).kv).to.include({ modRevision: 3, createRevision: 1, uid: 'uid-a' });
    const next = await client.update('core/configmaps/ns3/c', v('c2'));
    expect(next.revision).to.equal(7);
    const msg = await waitFor('the first message after restart', () => all[0]);
    expect(msg.headers?.get(REVISION_HEADER)).to.equal('7');
    expect(msg.headers?.get(PREV_REVISION_HEADER)).to.equal('6');
  });

  it('publishes a burst of concurrent writes in revision order, the chain unbroken', async () => {
    all.splice(0);
    const before = (await client!.currentRevision()).revision;
    const writes = await Promise.all(Array.from({ length: 40 }, (_, i) => client!.create(`core/configmaps/burst/c${i}`, v(`${i}`), `uid-burst-${i}`)));
    const last = Math.max(...writes.map((w) => w.revision));
    expect(last).to.equal(before + 40);
    await waitFor('40 messages', () => (all.length >= 40 ? true : undefined));
    const messages = all.splice(0);
    const revisions = messages.map((m) => Number(m.headers?.get(REVISION_HEADER)));
    expect(revisions).to.deep.equal(Array.from({ length: 40 }, (_, i) => before + 1 + i));
    expect(messages.map((m) => Number(m.headers?.get(PREV_REVISION_HEADER)))).to.deep.equal(revisions.map((r) => r - 1));
  });

  it('shuts down cleanly on SIGTERM', async () => {
    const watching = grpcError(readWatch(client!.watch('', 7, true), 100));
    await sleep(200);
    expect(await stopProcess(storage!.proc, 'SIGTERM')).to.equal(0);
    expect((await watching).code).to.be.oneOf([grpc.status.UNAVAILABLE, grpc.status.CANCELLED]);
    storage = undefined;
  });
});

describe('storage service process without NATS', function () {
  this.timeout(60_000);
  let nats: RunningNats | undefined;
  let dataDir: string;
  let storage: StorageProcess | undefined;
  let client: StorageClient | undefined;
  let nc: NatsConnection | undefined;

  after(async () => {
    client?.close();
    if (storage) await stopProcess(storage.proc, 'SIGKILL');
    await nc?.close();
    await nats?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves writes while NATS is down and publishes once it is back, showing the gap', async () => {
    const probe = await startNats();
    const { port, url } = probe;
    await probe.stop();
    dataDir = mkdtempSync(join(tmpdir(), 'storage-it-'));
    storage = await startStorage(dataDir, url);
    client = new StorageClient(storage.address);
    expect((await client.create('core/configmaps/ns/a', v('1'), 'ua')).revision).to.equal(1);

    nats = await startNats({ port });
    nc = await connect({ servers: url });
    const received: Msg[] = [];
    nc.subscribe(subscriptionSubject('core/configmaps/'), { callback: (_err, msg) => { received.push(msg); } });
    await nc.flush();
    // The storage process reconnects on its own; write until a commit is published.
    let revision = 1;
    for (const deadline = Date.now() + 15_000; received.length === 0 && Date.now() < deadline; await sleep(200)) {
      revision = (await client.update('core/configmaps/ns/a', v(String(revision)))).revision;
    }
    const first = await waitFor('a message once NATS is back', () => received[0], 2000);
    expect(Number(first.headers?.get(REVISION_HEADER))).to.be.greaterThan(1);
    expect(first.headers?.get(PREV_REVISION_HEADER)).to.equal('0');

    await nats.stop();
    expect((await client.update('core/configmaps/ns/a', v('while down'))).revision).to.be.greaterThan(revision);
    expect(storage.proc.exitCode).to.equal(null);
  });
});
