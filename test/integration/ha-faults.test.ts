// The replicated topology under faults: 3 etcd members, 3 NATS nodes, 2 storage
// processes on etcd3 (one publishes), 2 of authn, authz, admission and the
// gateway (no controller-manager: the test's clients are the only ones). A
// writer creates ConfigMaps through alternating gateways and keeps a ledger of
// what was acknowledged; a reader gets acknowledged ones back; 20
// watchers (half on each gateway) list, watch, and list again whenever a watch
// ends. One at a time, an etcd follower, the publishing storage process, a
// gateway, the NATS node that gateway uses and the etcd leader are SIGKILLed,
// the rest serves on, and the process is started again. Afterwards every
// acknowledged write is there through both gateways, every watch saw its range
// in order without gap or duplicate or was ended and listed again, and clients
// only ever got retryable answers. The unavailability each fault caused is printed.
import { expect } from 'chai';
import { EtcdClient } from '../../internal/storage/etcd/client.js';
import { EtcdKeys } from '../../internal/storage/etcd/values.js';
import { Cluster, waitFor } from '../lib/cluster.js';
import { LedgerWriter, type Send } from '../lib/ledger.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const WATCHERS = 20;
/** Acknowledged creates that count as serving again, after a kill and after the restart. */
const ACKS = 10;
const HEAL_MS = 30_000;
/** A request slower than this counts as unavailability, as a failed one does. */
const SLOW_MS = 1000;
const RETRYABLE = new Set([429, 500, 503, 504]);
const RETRY_PAUSE_MS = 200;

interface Call { port: number; start: number; end: number; status: number; error?: string }
interface Segment { port: number; from: number; rvs: number[]; names: Set<string>; ended?: string; endedAt?: number }
interface Fault { name: string; killedAt: number; restartedAt: number; port?: number }

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Lists the ledger's objects, watches from the list's revision, and lists again when the watch ends. */
class Watcher {
  readonly segments: Segment[] = [];
  /** What it believes the ledger holds: name → resourceVersion. */
  state = new Map<string, number>();
  readonly lists: Array<{ rv: number; names: Set<string> }> = [];
  readonly calls: Call[] = [];
  /** When it first knew of each object, by an event or a list. */
  readonly seenAt = new Map<string, number>();
  private loop?: Promise<void>;
  private gateway: number;
  /** Ends the current watch (see rehome). */
  private current?: AbortController;

  constructor(private readonly c: Cluster, private readonly ports: () => number[], private readonly home: number,
    private readonly selector: string, private readonly signal: AbortSignal) {
    this.gateway = home;
  }

  /** Goes back to its own gateway if it watches through the other (a client spreading its load again). */
  rehome(): void {
    if (this.gateway !== this.home) this.current?.abort();
  }

  private know(name: string, rv: number): void {
    this.state.set(name, rv);
    if (!this.seenAt.has(name)) this.seenAt.set(name, Date.now());
  }

  start(): this {
    this.loop = this.run();
    return this;
  }

  stopped(): Promise<void> | undefined {
    return this.loop;
  }

  private async run(): Promise<void> {
    while (!this.signal.aborted) {
      const port = this.ports()[this.gateway];
      const call: Call = { port, start: Date.now(), end: 0, status: 0 };
      const list = await this.c.request('GET', `${CMS}?${this.selector}`, { port, timeoutMs: 20_000 }).catch((err: Error) => { call.error = err.message; return undefined; });
      this.calls.push(Object.assign(call, { end: Date.now(), status: list?.status ?? 0 }));
      if (list?.status !== 200) {
        if (!list) this.gateway = 1 - this.gateway; // the other address, as a client given both would
        await pause(RETRY_PAUSE_MS);
        continue;
      }
      const rv = Number(list.body.metadata.resourceVersion);
      this.state = new Map();
      for (const o of list.body.items as any[]) this.know(o.metadata.name, Number(o.metadata.resourceVersion));
      this.lists.push({ rv, names: new Set(this.state.keys()) });
      await this.watch(port, rv);
      if (this.current?.signal.aborted) this.gateway = this.home;
    }
  }

  private async watch(port: number, from: number): Promise<void> {
    const segment: Segment = { port, from, rvs: [], names: new Set() };
    this.segments.push(segment);
    let seen = 0;
    let error: any;
    const current = new AbortController();
    this.current = current;
    const stop = () => current.abort();
    this.signal.addEventListener('abort', stop, { once: true });
    const res = await this.c.watch(`${CMS}?watch=1&${this.selector}&resourceVersion=${from}`, {
      port, timeoutMs: 600_000, signal: current.signal,
      until: (events) => {
        for (; seen < events.length && !error; seen++) {
          const e = events[seen];
          if (e.type === 'ERROR') error = e.object;
          else if (e.type !== 'BOOKMARK' && e.object?.metadata) { // not a Status answered instead of a watch
            const rv = Number(e.object.metadata.resourceVersion);
            segment.rvs.push(rv);
            segment.names.add(e.object.metadata.name);
            if (e.type === 'DELETED') this.state.delete(e.object.metadata.name);
            else this.know(e.object.metadata.name, rv);
          }
        }
        return error !== undefined;
      },
    }).catch((err: Error) => ({ status: 0, events: [], ended: true, error: err.message }));
    segment.endedAt = Date.now();
    this.signal.removeEventListener('abort', stop);
    if (current.signal.aborted && !error) segment.ended = 'stopped';
    else if (error) segment.ended = `ERROR ${error.code}`;
    else if (res.status !== 200) segment.ended = `status ${res.status}`;
    else segment.ended = 'stream end';
    if (!current.signal.aborted && res.status !== 200 && res.status !== 410) {
      this.calls.push({ port, start: segment.endedAt, end: segment.endedAt, status: res.status, error: 'error' in res ? res.error : undefined });
      if (res.status === 0) this.gateway = 1 - this.gateway;
      await pause(RETRY_PAUSE_MS);
    }
  }
}

/** Runs of failed or slow calls between `from` and `to`, each from its first bad call to the end of the success after it. */
function windows(calls: Call[], from: number, to: number): number[] {
  const found: number[] = [];
  let badSince: number | undefined;
  for (const call of calls.filter((a) => a.end >= from && a.end < to)) {
    const bad = call.status !== 201 || call.end - call.start > SLOW_MS;
    if (bad) badSince ??= Math.max(call.start, from);
    else if (badSince !== undefined) {
      found.push(call.end - badSince);
      badSince = undefined;
    }
  }
  if (badSince !== undefined) found.push(to - badSince);
  return found;
}

describe('faults: the replicated topology loses one process at a time under a writer and 20 watchers', function () {
  this.timeout(300_000);
  let c: Cluster;
  let etcd: EtcdClient;
  let writer: LedgerWriter;
  const reads: Call[] = [];
  const faults: Fault[] = [];
  const watchers: Watcher[] = [];
  const done = new AbortController();
  let reading: Promise<void> | undefined;
  const ports = () => [c.port, c.replicas.get('gateway-2')!.port];
  /** The gateway the writer sends a create to: by the number that ends its name. */
  const portOf = (name: string) => ports()[Number(name.split('-').pop()) % 2];
  /** Requests through one gateway, as a client of its address would make them. */
  const via = (port: number): Send => (method, path, body) => c.request(method, path, { body, port, timeoutMs: 20_000 });

  before(async () => {
    c = await new Cluster({
      storageBackend: 'etcd3', etcdMembers: 3, natsNodes: 3, withoutControllerManager: true,
      replicas: { storage: 1, authn: 1, authz: 1, admission: 1, gateway: 1 },
    }).start();
    etcd = new EtcdClient({ servers: c.etcd!.servers });
    // Creates alternate between the gateways; the server gives up on one after 10 s.
    writer = new LedgerWriter((method, path, body: any) => via(portOf(body.metadata.name))(method, `${path}?timeout=10s`, body), 'default').start();
    expect(await writer.acks(1, HEAL_MS), writer.describe()).to.equal(true);
    const selector = `labelSelector=ledger%3D${writer.label}`;
    for (let i = 0; i < WATCHERS; i++) watchers.push(new Watcher(c, ports, i % 2, selector, done.signal).start());
    reading = (async () => {
      for (let i = 0; !done.signal.aborted; i++) {
        const names = [...writer.acked.keys()];
        const port = ports()[i % 2];
        const call: Call = { port, start: Date.now(), end: 0, status: 0 };
        const res = await c.request('GET', `${CMS}/${names[i % names.length]}`, { port, timeoutMs: 20_000 }).catch((err: Error) => { call.error = err.message; return undefined; });
        reads.push(Object.assign(call, { end: Date.now(), status: res?.status ?? 0 }));
        await pause(res?.status === 200 ? 50 : RETRY_PAUSE_MS);
      }
    })();
  });

  after(async () => {
    done.abort();
    await writer?.stop();
    await Promise.all([reading, ...watchers.map((w) => w.stopped())]);
    etcd?.close();
    await c?.stop();
  });

  /** Kills a process, waits for the rest to serve without it, starts it again and waits for service again. */
  async function fault(name: string, kill: () => Promise<void>, restart: () => Promise<void>,
    opts: { port?: number; whileDown?: () => Promise<void> } = {}): Promise<void> {
    expect(await writer.acks(ACKS, HEAL_MS), `before: ${writer.describe()}`).to.equal(true);
    const killedAt = Date.now();
    await kill();
    expect(await writer.acks(ACKS, HEAL_MS), `${name} down: ${writer.describe()}`).to.equal(true);
    await opts.whileDown?.();
    await restart();
    faults.push({ name, killedAt, restartedAt: Date.now(), port: opts.port });
    expect(await writer.acks(ACKS, HEAL_MS), `${name} back: ${writer.describe()}`).to.equal(true);
  }

  /** The member etcd's metrics call leader, by index. */
  async function etcdLeader(): Promise<number> {
    const leader = await c.etcd!.leader(HEAL_MS);
    expect(leader, 'an etcd leader').to.be.at.least(0);
    return leader;
  }

  it('an etcd member that is not the leader', async () => {
    const leader = await etcdLeader();
    const member = c.etcd!.members[(leader + 1) % 3];
    await fault(`etcd member ${member.name} (follower)`, () => member.kill(), () => member.start());
  });

  it('the storage process that publishes', async () => {
    const publisher = async () => Number(String((await etcd.range({ key: new EtcdKeys('/registry').publisherKey })).kvs[0]?.value ?? '').split('/').pop());
    const pid = await publisher();
    const first = c.procs.get('storage')?.pid === pid;
    expect(first || c.replicas.get('storage-2')?.proc.pid === pid, `publisher ${pid}`).to.equal(true);
    const other = () => (first ? c.replicas.get('storage-2')!.proc.pid : c.procs.get('storage')!.pid);
    await fault(`storage ${first ? '1' : '2'} (publisher)`,
      () => (first ? c.kill('storage') : c.killReplica('storage-2')),
      async () => { await (first ? c.startService('storage') : c.startReplica('storage-2')); },
      { whileDown: async () => { expect(await waitFor(async () => (await publisher()) === other(), HEAL_MS), 'the other publishes').to.equal(true); } });
  });

  it('a gateway', async () => {
    await fault('gateway 1', () => c.kill('gateway'), () => c.startService('gateway'), { port: c.port });
    // The watchers whose gateway it was go back to it, so the next fault meets watches on both.
    for (const w of watchers) w.rehome();
  });

  it('the NATS node the first gateway uses', async () => {
    const gateway = `svc-gateway-${c.procs.get('gateway')!.pid}`;
    const node = await c.natsCluster!.nodeOf(gateway);
    expect(node).to.be.a('number');
    await fault(`NATS node ${node}`, () => c.natsCluster!.kill(node!), () => c.natsCluster!.restart(node!), {
      whileDown: async () => { expect(await waitFor(async () => ![undefined, node].includes(await c.natsCluster!.nodeOf(gateway)), HEAL_MS), 'the gateway on another node').to.equal(true); },
    });
  });

  it('the etcd leader', async () => {
    const leader = await etcdLeader();
    const member = c.etcd!.members[leader];
    await fault(`etcd member ${member.name} (leader)`, () => member.kill(), () => member.start(), {
      whileDown: async () => { expect(await etcdLeader(), 'a new leader').to.not.equal(leader); },
    });
  });

  it('lost no acknowledged write, watchers saw every event or were told, clients got only retryable errors', async () => {
    await writer.stop();
    const acked = writer.attempts.filter((a) => a.status === 201);
    expect(acked.length, writer.describe()).to.be.above(5 * 3 * ACKS);
    for (const port of ports()) expect(await writer.lost(via(port)), `lost, listed through ${port}`).to.deep.equal([]);

    // Every watcher ends with the whole ledger, by its events or by listing again.
    const complete = (w: Watcher) => acked.every((a) => w.state.has(a.name));
    const whole = await waitFor(() => watchers.every(complete), HEAL_MS);
    done.abort();
    await Promise.all([reading, ...watchers.map((w) => w.stopped())]);
    expect(whole, `watchers missing writes: ${watchers.map((w) => acked.filter((a) => !w.state.has(a.name)).length).join(',')}`).to.equal(true);
    for (const [i, w] of watchers.entries()) {
      for (const list of w.lists) {
        const missing = acked.filter((a) => a.resourceVersion! <= list.rv && !list.names.has(a.name));
        expect(missing.map((a) => a.name), `watcher ${i}: a list at ${list.rv} without writes acknowledged at or before it`).to.deep.equal([]);
      }
      for (const s of w.segments) {
        expect(s.rvs, `watcher ${i}: watch from ${s.from} in order without duplicate`).to.deep.equal([...new Set(s.rvs)].sort((a, b) => a - b));
        expect(s.rvs.every((rv) => rv > s.from), `watcher ${i}: events after ${s.from}`).to.equal(true);
        const last = s.rvs.at(-1) ?? s.from;
        const gap = acked.filter((a) => a.resourceVersion! > s.from && a.resourceVersion! <= last && !s.names.has(a.name));
        expect(gap.map((a) => a.name), `watcher ${i}: writes skipped by a watch from ${s.from} to ${last} (${s.ended})`).to.deep.equal([]);
      }
    }

    // Only retryable answers, and no answer only from the gateway while it was down.
    const down = (call: Call) => faults.some((f) => f.port === call.port && call.start <= f.restartedAt && call.end >= f.killedAt);
    const wrong = (ok: number) => (call: Call) => call.status !== ok && !RETRYABLE.has(call.status) && !(call.status === 0 && down(call));
    const watcherCalls = watchers.flatMap((w) => w.calls);
    const writes: Call[] = writer.attempts.map((a) => ({ ...a, port: portOf(a.name) }));
    expect(writes.filter(wrong(201)), 'writes').to.deep.equal([]);
    expect(reads.filter(wrong(200)), 'reads').to.deep.equal([]);
    expect(watcherCalls.filter(wrong(200)), 'lists and watches').to.deep.equal([]);
    const endings = watchers.flatMap((w) => w.segments.map((s) => s.ended));
    expect(endings.filter((e) => e?.startsWith('ERROR') && !/ (410|429|500|503|504)$/.test(e)), 'watch errors').to.deep.equal([]);

    const rows = faults.map((f) => {
      const next = faults[faults.indexOf(f) + 1]?.killedAt ?? Date.now();
      const runs = windows(writes, f.killedAt, next);
      const told = watchers.flatMap((w) => w.segments).filter((s) => s.endedAt! >= f.killedAt && s.endedAt! < next && s.ended !== 'stopped').length;
      const during = writes.filter((a) => a.end >= f.killedAt && a.end < next);
      // How long after its acknowledgement the last watcher knew of a write.
      const lag = Math.max(0, ...acked.filter((a) => a.end >= f.killedAt && a.end < next)
        .map((a) => Math.max(...watchers.map((w) => w.seenAt.get(a.name)! - a.end))));
      return [f.name, f.restartedAt - f.killedAt, runs[0] ?? 0, runs.reduce((n, r) => n + r, 0), runs.length,
        during.filter((a) => a.status !== 201).length, Math.max(...during.map((a) => a.end - a.start)), told, lag];
    });
    const header = ['fault', 'down ms', 'first window ms', 'unavailable ms', 'windows', 'failed writes', 'slowest write ms', 'watches ended', 'event lag ms'];
    console.log(`      ${header.join(' | ')}\n${rows.map((r) => `      ${r.join(' | ')}`).join('\n')}`);
    const count = (items: string[]) => JSON.stringify(items.reduce((m, e) => ({ ...m, [e]: (m[e] ?? 0) + 1 }), {} as Record<string, number>));
    console.log(`      writes: ${writer.describe()}; reads: ${reads.length}, failures ${count(reads.filter((r) => r.status !== 200).map((r) => String(r.status)))}; ` +
      `watch endings ${count(endings.map(String))}`);
    const refusals = writer.attempts.filter((a) => a.status !== 201 && a.status !== 0);
    console.log(`      refused writes: ${refusals.map((a) => `${a.status} after ${a.end - a.start} ms: ${a.error}`).join('; ') || 'none'}`);
  });
});
