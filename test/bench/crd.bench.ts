// Creates per second of a custom object whose schema has two validation rules,
// beside ConfigMap creates on the same cluster, interleaved phase by phase so
// both see the same load; each figure with its CPU ms per create.
import { Cluster, waitFor } from '../lib/cluster.js';
import { extension, group } from '../../internal/names/index.js';
import { crdManifest, specSchema } from '../lib/crd.js';
import { adminTls, expectStatus, keepAlive, send, type Client } from './https.js';
import { measure, type Measured } from './load.js';
import { waitQuiet, type Pids } from './proc.js';
import { createBody } from './objects.js';

const NAMESPACE = 'bench-crd';
const GROUP = 'bench.example.com';
const PHASE_MS = 4_000;
const CLIENTS = [1, 16];
const CONFIGMAPS = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
const WIDGETS = `/apis/${GROUP}/v1/namespaces/${NAMESPACE}/widgets`;

const crd = crdManifest(GROUP, 'Widget', specSchema({
  replicas: { type: 'integer', minimum: 0 }, maxReplicas: { type: 'integer', default: 10 },
  image: { type: 'string', maxLength: 256 }, payload: { type: 'string', maxLength: 1024 },
}, extension('validations'), [
  { rule: 'self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' },
  { rule: "self.image.startsWith('registry.example.com/')", message: 'images come from the registry' },
]));

const PAYLOAD = 'x'.repeat(800);
const widgetBody = (name: string): string => JSON.stringify({
  apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name },
  spec: { replicas: 3, image: 'registry.example.com/web:1.2', payload: PAYLOAD },
});

export interface CrdRow { name: string; clients: number; opsPerSec: number; p50Ms: number; p99Ms: number; cpuMsPerOp: number }

const row = (name: string, clients: number, m: Measured): CrdRow =>
  ({ name, clients, opsPerSec: Math.round(m.opsPerSec), p50Ms: +m.p50Ms.toFixed(2), p99Ms: +m.p99Ms.toFixed(2), cpuMsPerOp: +m.cpuMsPerOp.toFixed(2) });

async function phase(pids: Pids, agent: Client, port: number, clients: number, path: string, body: (name: string) => string, prefix: string): Promise<Measured> {
  return measure(pids, clients, PHASE_MS, async (i) => {
    expectStatus(201, `create ${prefix}`)(await send(agent, port, 'POST', path, body(`${prefix}-${i}`)));
  });
}

export async function benchCrd(): Promise<CrdRow[]> {
  const cluster = new Cluster();
  try {
    await cluster.start();
    const pids = cluster.pids();
    expectStatus(201, 'namespace')((await cluster.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NAMESPACE } } })).status);
    expectStatus(201, 'crd')((await cluster.request('POST', `/apis/${group('apiextensions')}/v1/customresourcedefinitions`, { body: crd })).status);
    if (!await waitFor(async () => (await cluster.request('GET', WIDGETS)).status === 200, 20_000, 50)) throw new Error('the custom kind was not served in time');
    const tls = adminTls(cluster.dataDir);
    const rows: CrdRow[] = [];
    for (const clients of CLIENTS) {
      const agent = keepAlive(tls, clients);
      try {
        // Warm both paths, then measure them one after the other at the same concurrency.
        await phase(pids, agent, cluster.port, clients, CONFIGMAPS, createBody, `warm-cm-${clients}`);
        await phase(pids, agent, cluster.port, clients, WIDGETS, widgetBody, `warm-w-${clients}`);
        await waitQuiet(pids, 50, 10_000);
        rows.push(row('create ConfigMap', clients, await phase(pids, agent, cluster.port, clients, CONFIGMAPS, createBody, `cm-${clients}`)));
        await waitQuiet(pids, 50, 10_000);
        rows.push(row('create custom object (2 rules)', clients, await phase(pids, agent, cluster.port, clients, WIDGETS, widgetBody, `w-${clients}`)));
      } finally {
        agent.destroy();
      }
    }
    return rows;
  } finally {
    await cluster.stop();
  }
}
