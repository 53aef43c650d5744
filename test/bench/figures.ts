// What the API and etcd benchmarks measure, gathered for one report.
import type { Measured } from './load.js';
import type { Idle } from './proc.js';

export interface AtConcurrency { c1: Measured; c32: Measured }

export interface EtcdFigures {
  version: string;
  valueBytes: number;
  put: AtConcurrency;
  get: AtConcurrency;
  /** A range over 10k keys, one client. */
  list: Measured;
  /** Puts paced as the API's creates, watched by as many watchers. */
  watch: WatchPhase & { watchers: number };
}

export interface ListFigures { objects: number; json: Measured; protobuf: Measured }

export interface WatchPhase {
  /** Creates acknowledged per second, against the target. */
  achievedRate: number;
  writes: number;
  failedWrites: number;
  /** Create committed (its event seen on NATS) → event read by a watcher. */
  p50Ms: number;
  p99Ms: number;
  /** Deliveries of acknowledged creates that never arrived. */
  lost: number;
  /** Creates whose event this process saw on NATS; the others are dated by their response. */
  commitsSeen: number;
  cpuMsPerWrite: number;
  cpuMsPerWriteByProcess: Record<string, number>;
  clientCpuShare: number;
  /** Reads by each watcher that carried events, per second of the phase (drain included): how often the server wrote,
   * or fewer when the client falls behind and one read brings several writes. */
  readsPerWatcherPerSecond: number;
}

export interface WatchFigures {
  watchers: number;
  targetRate: number;
  /** Bytes of one event on the wire. */
  eventBytes: number;
  /** Watchers (of the WATCHERS) the server ended during the run. */
  endedWatchers: number;
  alone: WatchPhase;
  /** The same while one more watcher stops reading. */
  withStalled: WatchPhase & { stalledEnded: string; gatewayRssGrowthMb: number };
}

export interface MemoryFigures {
  objects: number;
  jsonBytes: number;
  writeSeconds: number;
  settled: boolean;
  /** Writes of the burst before the 'before' figure (see memory.ts: warmUp). */
  warmUpWrites: number;
  /** RSS before and after, MiB, by process. */
  beforeMb: Record<string, number>;
  afterMb: Record<string, number>;
}

export interface ApiFigures {
  idle: Record<string, Idle>;
  create: AtConcurrency;
  get: AtConcurrency;
  list?: ListFigures;
  memory?: MemoryFigures;
  watch?: WatchFigures;
  /** Phases that could not run to the end, with the reason. */
  problems: string[];
}
