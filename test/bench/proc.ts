// What the server's processes cost, read from /proc: CPU time (utime + stime over
// every thread), resident memory, and how often the main thread went to sleep
// (its voluntary context switches: one per turn of an idle event loop).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Process name → PID. */
export type Pids = Map<string, number>;

const TICK_MS = 1000 / (Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100);

function read(pid: number, file: string): string {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    throw new Error(`process ${pid} is gone`);
  }
}

/** Clock ticks the process has spent so far in user and in kernel mode. */
function ticks(pid: number): { user: number; kernel: number } {
  const stat = read(pid, 'stat');
  // The command name may hold spaces: count fields after its closing parenthesis (field 3 on).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]), kernel: Number(fields[12]) }; // utime (14), stime (15)
}

/** CPU time the process has used so far, in ms. */
export function cpuMs(pid: number): number {
  const { user, kernel } = ticks(pid);
  return (user + kernel) * TICK_MS;
}

export type TickSample = Map<string, { user: number; kernel: number }>;

export const sampleTicks = (pids: Pids): TickSample => new Map([...pids].map(([name, pid]) => [name, ticks(pid)]));

/** The share of each process's CPU since `before` spent in the kernel (system calls, the network stack). */
export function kernelShares(before: TickSample, pids: Pids): Record<string, number> {
  return Object.fromEntries([...sampleTicks(pids)].map(([name, { user, kernel }]) => {
    const then = before.get(name) ?? { user, kernel };
    const k = kernel - then.kernel;
    return [name, k / Math.max(1, k + user - then.user)];
  }));
}

function statusField(pid: number, field: string): number {
  const line = read(pid, 'status').split('\n').find((l) => l.startsWith(`${field}:`));
  return Number(line?.split(/\s+/)[1] ?? NaN);
}

/** Resident memory, in KiB. */
export const rssKb = (pid: number): number => statusField(pid, 'VmRSS');
/** Times the main thread slept of its own accord. */
export const wakeups = (pid: number): number => statusField(pid, 'voluntary_ctxt_switches');

const ownCpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export interface CpuSample { at: number; byProcess: Map<string, number>; client: number }

export function sampleCpu(pids: Pids): CpuSample {
  return { at: performance.now(), byProcess: new Map([...pids].map(([name, pid]) => [name, cpuMs(pid)])), client: ownCpuMs() };
}

export interface CpuSpent {
  elapsedMs: number;
  /** ms of CPU each server process used. */
  byProcess: Record<string, number>;
  /** Summed over the server processes. */
  total: number;
  /** This process: the load generator, to tell when it is what limits. */
  client: number;
}

export function cpuSince(before: CpuSample, pids: Pids): CpuSpent {
  const after = sampleCpu(pids);
  const byProcess = Object.fromEntries([...before.byProcess].map(([name, ms]) => [name, (after.byProcess.get(name) ?? ms) - ms]));
  const total = Object.values(byProcess).reduce((a, b) => a + b, 0);
  return { elapsedMs: after.at - before.at, byProcess, total, client: after.client - before.client };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until, over one second, the processes together use less than `busyMs` of CPU, at most `maxMs`.
 *  True when they went quiet. */
export async function waitQuiet(pids: Pids, busyMs: number, maxMs: number): Promise<boolean> {
  const deadline = performance.now() + maxMs;
  while (performance.now() < deadline) {
    const before = sampleCpu(pids);
    await sleep(1000);
    if (cpuSince(before, pids).total < busyMs) return true;
  }
  return false;
}

export interface Idle { cpuMsPerSec: number; wakeupsPerSec: number }

/** The idle window: long enough to hold one period of every periodic task (bookmarks, the garbage collector's
 * rediscovery and gRPC keepalives come every 30 s), so that it counts polling and not where a burst happens to fall. */
export const IDLE_WINDOW_MS = 30_000;

/** CPU and main-thread wake-ups per second of each process over `ms` with no requests. */
export async function measureIdle(pids: Pids, ms: number): Promise<Record<string, Idle>> {
  const wakes = new Map([...pids].map(([name, pid]) => [name, wakeups(pid)]));
  const before = sampleCpu(pids);
  await sleep(ms);
  const spent = cpuSince(before, pids);
  const perSec = 1000 / spent.elapsedMs;
  return Object.fromEntries([...pids].map(([name, pid]) => [name, {
    cpuMsPerSec: spent.byProcess[name] * perSec,
    wakeupsPerSec: (wakeups(pid) - wakes.get(name)!) * perSec,
  }]));
}
