// Storage throughput and latency, in-process: creates through the store (group
// commit) with 1 and 32 writers against raw synced LevelDB puts, gets, and the
// NATS publish→receive hop that carries watch events.
import { ClassicLevel } from 'classic-level';
import { connect } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '../../internal/storage/store.js';
import { startNats } from '../lib/nats.js';
import { lanes, percentile } from './load.js';

export interface BenchResult { name: string; opsPerSec: number; p50Ms: number; p99Ms: number }

const VALUE = Buffer.from(JSON.stringify({ kind: 'ConfigMap', data: { payload: 'x'.repeat(900) } }));

/** Runs op(0..total-1) on `concurrency` parallel lanes; latency is per op. */
async function measure(name: string, total: number, concurrency: number, op: (i: number) => Promise<void>): Promise<BenchResult> {
  const { latencies, elapsedMs } = await lanes(concurrency, Infinity, op, total);
  latencies.sort((a, b) => a - b);
  const round = (n: number): number => Math.round(n * 1000) / 1000;
  return { name, opsPerSec: Math.round((total / elapsedMs) * 1000), p50Ms: round(percentile(latencies, 0.5)), p99Ms: round(percentile(latencies, 0.99)) };
}

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'storage-bench-'));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchStore(): Promise<BenchResult[]> {
  return withDir(async (dir) => {
    const store = await Store.open(join(dir, 'storage'), { compactionIntervalMs: 0 });
    try {
      const key = (i: number): string => `core/configmaps/ns${i % 10}/cm-${i}`;
      const one = await measure('store create, 1 writer (synced)', 1000, 1, async (i) => { await store.create(key(i), VALUE, `u${i}`); });
      const many = await measure('store create, 32 writers (group commit)', 4000, 32, async (i) => { await store.create(key(1000 + i), VALUE, `u${i}`); });
      const gets = await measure('store get', 5000, 1, async (i) => { await store.get(key((i * 7919) % 5000)); });
      const lists = await measure('store list 100 of 500 in a namespace', 500, 1, async () => { await store.list('core/configmaps/ns3/', { limit: 100 }); });
      return [one, many, gets, lists];
    } finally {
      await store.close();
    }
  });
}

async function benchRawLevel(): Promise<BenchResult> {
  return withDir(async (dir) => {
    const db = new ClassicLevel<Buffer, Buffer>(dir, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    try {
      return await measure('raw leveldb put, sync, 1 writer', 1000, 1, (i) => db.put(Buffer.from(`k${i}`), VALUE, { sync: true }));
    } finally {
      await db.close();
    }
  });
}

async function benchNats(): Promise<BenchResult> {
  const nats = await startNats();
  const nc = await connect({ servers: nats.url });
  try {
    let received: (() => void) | undefined;
    nc.subscribe('bench.events', { callback: () => received?.() });
    await nc.flush();
    return await measure('nats publish→receive', 2000, 1, () => new Promise<void>((resolve) => {
      received = resolve;
      nc.publish('bench.events', VALUE);
    }));
  } finally {
    await nc.close();
    await nats.stop();
  }
}

export async function benchStorage(): Promise<BenchResult[]> {
  return [...await benchStore(), await benchRawLevel(), await benchNats()];
}
