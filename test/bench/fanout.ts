// Watch fan-out measured the same way for the API and for etcd: WATCHERS watchers,
// a writer paced at TARGET_RATE for WRITE_MS, each write's commit time, and when
// each watcher read its event. Sequence numbers name the writes; a run has two
// phases of SEQS writes each.
import { percentile } from './load.js';
import { cpuSince, sampleCpu, type Pids } from './proc.js';
import type { WatchPhase } from './figures.js';

export const WATCHERS = 1000;
/** BENCH_WATCH_RATE sets another, to compare versions at a rate both keep up with. */
export const TARGET_RATE = Number(process.env.BENCH_WATCH_RATE) || 500;
const WRITE_MS = 5_000;
export const MAX_IN_FLIGHT = 64;
/** Writes in one phase, at most. */
export const SEQS = Math.ceil((TARGET_RATE * WRITE_MS) / 1000);
/** A phase's deliveries are awaited until all arrived, nothing arrived for DRAIN_IDLE_MS, or DRAIN_MS. */
const DRAIN_MS = 10_000;
const DRAIN_IDLE_MS = 2_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class Fanout {
  /** When watcher w read write seq's event: at[w * 2 * SEQS + seq]; NaN until then. */
  private readonly at = new Float64Array(WATCHERS * 2 * SEQS).fill(NaN);
  /** When each write committed; NaN when not known. */
  readonly commits = new Float64Array(2 * SEQS).fill(NaN);
  /** Watchers opened. */
  opened = 0;
  /** Watchers whose stream the server ended. */
  readonly ended = new Set<number>();
  /** Bytes and events watcher 0 read: the size of one event on the wire. */
  readonly sample = { bytes: 0, events: 0 };
  /** Reads of a watch stream that carried events (each as many events as the server wrote together, or fewer). */
  reads = 0;
  /** Watchers that read each write's event, so far. */
  private readonly readers = new Uint32Array(2 * SEQS);

  /** Records that watcher w read write seq's event (the first time only). */
  received(w: number, seq: number, bytes: number): void {
    if (!(seq >= 0 && seq < 2 * SEQS)) return;
    const i = w * 2 * SEQS + seq;
    if (!Number.isNaN(this.at[i])) return;
    this.at[i] = performance.now();
    this.readers[seq]++;
    if (w === 0) { this.sample.bytes += bytes; this.sample.events++; }
  }

  /** Records write seq's commit time (the first one given). */
  committed(seq: number, at = performance.now()): void {
    if (seq >= 0 && seq < 2 * SEQS && Number.isNaN(this.commits[seq])) this.commits[seq] = at;
  }

  receipt(w: number, seq: number): number {
    return this.at[w * 2 * SEQS + seq];
  }

  /** How many watchers read write seq's event so far. */
  readCount(seq: number): number {
    return this.readers[seq];
  }
}

interface Writes { acked: Map<number, number>; failed: number; elapsedMs: number }

/** Calls write(seq) for seqs from startSeq on at TARGET_RATE for WRITE_MS, at most MAX_IN_FLIGHT at once.
 *  write resolves true when the write was acknowledged. */
async function paceWrites(write: (seq: number) => Promise<boolean>, startSeq: number): Promise<Writes> {
  const acked = new Map<number, number>();
  const pending = new Set<Promise<void>>();
  let failed = 0;
  let launched = 0;
  const started = performance.now();
  let lastAck = started;
  const launch = (seq: number) => {
    const p = write(seq).then(
      (ok) => { if (ok) { lastAck = performance.now(); acked.set(seq, lastAck); } else failed++; },
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
  return { acked, failed, elapsedMs: Math.max(WRITE_MS, lastAck - started) };
}

/** Waits until every watcher read every acknowledged write, or delivery stalls (counted per write as events are
 * read, so that the wait costs the client next to nothing while deliveries are being measured). */
async function drain(f: Fanout, writes: Writes): Promise<void> {
  const expected = writes.acked.size * f.opened;
  const deadline = performance.now() + DRAIN_MS;
  let seen = -1;
  let progressAt = performance.now();
  while (performance.now() < deadline && performance.now() - progressAt < DRAIN_IDLE_MS) {
    let have = 0;
    for (const seq of writes.acked.keys()) have += f.readCount(seq);
    if (have >= expected) return;
    if (have !== seen) { seen = have; progressAt = performance.now(); }
    await sleep(250);
  }
}

/** One phase: paced writes, their delivery to every watcher, and the CPU the processes of `pids` spent. */
export async function phase(f: Fanout, pids: Pids, write: (seq: number) => Promise<boolean>, startSeq: number): Promise<WatchPhase> {
  const before = sampleCpu(pids);
  const readsBefore = f.reads;
  const writes = await paceWrites(write, startSeq);
  await drain(f, writes);
  const cpu = cpuSince(before, pids);
  const latencies = new Float64Array(writes.acked.size * f.opened);
  let delivered = 0;
  let lost = 0;
  let commitsSeen = 0;
  for (const [seq, ackAt] of writes.acked) {
    // A write whose commit was not seen is dated by its acknowledgement.
    const seen = !Number.isNaN(f.commits[seq]);
    if (seen) commitsSeen++;
    const committed = seen ? f.commits[seq] : ackAt;
    for (let w = 0; w < f.opened; w++) {
      const at = f.receipt(w, seq);
      if (Number.isNaN(at)) lost++;
      else latencies[delivered++] = Math.max(0, at - committed);
    }
  }
  const sorted = latencies.subarray(0, delivered).sort();
  const n = writes.acked.size || NaN;
  return {
    achievedRate: (writes.acked.size / writes.elapsedMs) * 1000,
    writes: writes.acked.size,
    failedWrites: writes.failed,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    lost,
    commitsSeen,
    cpuMsPerWrite: cpu.total / n,
    cpuMsPerWriteByProcess: Object.fromEntries(Object.entries(cpu.byProcess).map(([k, ms]) => [k, ms / n])),
    clientCpuShare: cpu.client / cpu.elapsedMs,
    readsPerWatcherPerSecond: ((f.reads - readsBefore) / f.opened / cpu.elapsedMs) * 1000,
  };
}
