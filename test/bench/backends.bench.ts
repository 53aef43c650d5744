// The API on each storage backend in one run: a fresh cluster on LevelDB, then one on
// a 3-member local etcd, each put through the API benchmark's creates and gets. CPU per
// request is summed over our processes (nats-server included) and, on etcd, over the
// members too, so the ratio etcd/LevelDB counts what each backend really costs.
import type { Measured } from './load.js';
import type { Pids } from './proc.js';
import { Cluster } from '../lib/cluster.js';
import { adminTls, expectStatus } from './https.js';
import { benchCrud, NAMESPACE } from './api.bench.js';
import { waitQuiet } from './proc.js';
import { num, ratio } from './table.js';

const ETCD_MEMBERS = 3;
const ETCD_PREFIX = 'etcd-';

type Backend = 'leveldb' | 'etcd3';
type Crud = Awaited<ReturnType<typeof benchCrud>>;

/** The cluster's processes, each etcd member under a name of its own (the cluster names only the first). */
function processes(cluster: Cluster): Pids {
  const pids = cluster.pids();
  pids.delete('etcd');
  for (const m of cluster.etcd?.members ?? []) pids.set(`${ETCD_PREFIX}${m.name}`, m.pid);
  return pids;
}

/** CPU ms per request of our processes and of the etcd members. */
function cpuSplit(m: Measured): { ours: number; etcd: number } {
  let ours = 0;
  let etcd = 0;
  for (const [p, ms] of Object.entries(m.cpuMsPerOpByProcess)) {
    if (p.startsWith(ETCD_PREFIX)) etcd += ms;
    else ours += ms;
  }
  return { ours, etcd };
}

async function onBackend(storageBackend: Backend): Promise<Crud> {
  const cluster = new Cluster({ storageBackend, etcdMembers: ETCD_MEMBERS });
  // Interrupted, the services and etcd must not outlive the bench.
  const onSignal = (): void => void cluster.stop().finally(() => process.exit(130));
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    await cluster.start();
    const pids = processes(cluster);
    await waitQuiet(pids, 50, 15_000);
    expectStatus(201, `create namespace ${NAMESPACE}`)((await cluster.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NAMESPACE } } })).status);
    return await benchCrud(cluster, pids, adminTls(cluster.dataDir));
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    await cluster.stop();
  }
}

/** One row per operation and concurrency: each backend's figures, then etcd's over LevelDB's. */
export async function benchBackends(): Promise<Array<Record<string, string>>> {
  const level = await onBackend('leveldb');
  const etcd = await onBackend('etcd3');
  const rows: Array<Record<string, string>> = [];
  for (const op of ['create', 'get'] as const) {
    for (const c of ['c1', 'c32'] as const) {
      const l = level[op][c];
      const e = etcd[op][c];
      const cpu = cpuSplit(e);
      rows.push({
        name: `${op}, ${c.slice(1)} client${c === 'c1' ? '' : 's'}`,
        'LevelDB ops/s': num(l.opsPerSec), 'p50 ms': num(l.p50Ms), 'p99 ms': num(l.p99Ms), 'CPU ms/req': num(l.cpuMsPerOp),
        'etcd ops/s': num(e.opsPerSec), 'etcd p50 ms': num(e.p50Ms), 'etcd p99 ms': num(e.p99Ms),
        'CPU ms/req ours': num(cpu.ours), '+ members': num(cpu.etcd),
        'ops/s etcd/LevelDB': ratio(e.opsPerSec, l.opsPerSec), 'CPU etcd/LevelDB': ratio(e.cpuMsPerOp, l.cpuMsPerOp),
      });
    }
  }
  return rows;
}

