// Closed-loop load: `clients` lanes each issue one request after another for a
// fixed time, while the CPU of the server processes is counted, so every
// throughput figure comes with latency and CPU per request.
import { cpuSince, sampleCpu, type Pids } from './proc.js';

export interface Measured {
  count: number;
  opsPerSec: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** CPU ms per operation summed over the server processes, and by process. */
  cpuMsPerOp: number;
  cpuMsPerOpByProcess: Record<string, number>;
  /** The load generator's own CPU ms per operation. */
  clientCpuMsPerOp: number;
}

export const percentile = (sorted: ArrayLike<number>, p: number): number =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN;

/** Runs op(0, 1, ...) on `clients` lanes until `durationMs` passed or `maxOps` started; latencies in ms. */
export async function lanes(clients: number, durationMs: number, op: (i: number) => Promise<void>, maxOps = Infinity): Promise<{ latencies: number[]; elapsedMs: number }> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + durationMs;
  let next = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (performance.now() < deadline && next < maxOps) {
      const t = performance.now();
      await op(next++);
      latencies.push(performance.now() - t);
    }
  }));
  return { latencies, elapsedMs: performance.now() - started };
}

/** `lanes` with the CPU the processes of `pids` spent meanwhile. */
export async function measure(pids: Pids, clients: number, durationMs: number, op: (i: number) => Promise<void>, maxOps?: number): Promise<Measured> {
  const before = sampleCpu(pids);
  const { latencies, elapsedMs } = await lanes(clients, durationMs, op, maxOps);
  const cpu = cpuSince(before, pids);
  const count = latencies.length;
  latencies.sort((a, b) => a - b);
  const perOp = (ms: number) => (count ? ms / count : NaN);
  return {
    count,
    opsPerSec: (count / elapsedMs) * 1000,
    p50Ms: percentile(latencies, 0.5),
    p90Ms: percentile(latencies, 0.9),
    p99Ms: percentile(latencies, 0.99),
    maxMs: count ? latencies[count - 1] : NaN,
    cpuMsPerOp: perOp(cpu.total),
    cpuMsPerOpByProcess: Object.fromEntries(Object.entries(cpu.byProcess).map(([name, ms]) => [name, perOp(ms)])),
    clientCpuMsPerOp: perOp(cpu.client),
  };
}
