// ConfigMap creates per second through one mutating and one validating webhook
// (real HTTPS webhooks in this process) beside plain creates on the same
// cluster, where the webhooks' namespace selector leaves them out; interleaved
// phase by phase so both see the same load, each with its CPU ms per create.
import { Cluster, waitFor } from '../lib/cluster.js';
import { AdmissionWebhook } from '../lib/admissionwebhook.js';
import { group } from '../../internal/names/index.js';
import { adminTls, expectStatus, keepAlive, send, type Client } from './https.js';
import { measure, type Measured } from './load.js';
import { waitQuiet, type Pids } from './proc.js';
import { createBody } from './objects.js';

const PHASE_MS = 4_000;
const CLIENTS = [1, 16];
const PLAIN = 'bench-plain';
const HOOKED = 'bench-webhooks';
const configMaps = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const REGISTRATION = `/apis/${group('admissionregistration')}/v1`;

export interface WebhookRow { name: string; clients: number; opsPerSec: number; p50Ms: number; p99Ms: number; cpuMsPerOp: number }

const row = (name: string, clients: number, m: Measured): WebhookRow =>
  ({ name, clients, opsPerSec: Math.round(m.opsPerSec), p50Ms: +m.p50Ms.toFixed(2), p99Ms: +m.p99Ms.toFixed(2), cpuMsPerOp: +m.cpuMsPerOp.toFixed(2) });

const webhook = (wh: AdmissionWebhook, name: string, path: string) => ({
  name, clientConfig: { url: wh.url(path), caBundle: wh.caBundle }, sideEffects: 'None', admissionReviewVersions: ['v1'],
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
  namespaceSelector: { matchLabels: { webhooks: 'on' } },
});

async function configure(cluster: Cluster, wh: AdmissionWebhook): Promise<void> {
  for (const [name, labels] of [[PLAIN, {}], [HOOKED, { webhooks: 'on' }]] as const) {
    expectStatus(201, 'namespace')((await cluster.request('POST', '/api/v1/namespaces', { body: { metadata: { name, labels } } })).status);
  }
  expectStatus(201, 'mutating configuration')((await cluster.request('POST', `${REGISTRATION}/mutatingwebhookconfigurations`,
    { body: { metadata: { name: 'bench' }, webhooks: [webhook(wh, 'mutate.bench.example.com', '/mutate')] } })).status);
  expectStatus(201, 'validating configuration')((await cluster.request('POST', `${REGISTRATION}/validatingwebhookconfigurations`,
    { body: { metadata: { name: 'bench' }, webhooks: [webhook(wh, 'validate.bench.example.com', '/allow')] } })).status);
  const reached = await waitFor(async () => (await cluster.request('POST', configMaps(HOOKED), { body: { metadata: { generateName: 'probe-' } } }))
    .body?.metadata?.labels?.mutated === 'yes', 20_000, 50);
  if (!reached) throw new Error('the webhooks were not called in time');
}

async function phase(pids: Pids, agent: Client, port: number, clients: number, ns: string, prefix: string): Promise<Measured> {
  return measure(pids, clients, PHASE_MS, async (i) => {
    expectStatus(201, `create in ${ns}`)(await send(agent, port, 'POST', configMaps(ns), createBody(`${prefix}-${i}`)));
  });
}

export async function benchWebhooks(): Promise<WebhookRow[]> {
  const cluster = new Cluster();
  const wh = new AdmissionWebhook();
  try {
    await Promise.all([cluster.start(), wh.start()]);
    await configure(cluster, wh);
    const pids = cluster.pids();
    const tls = adminTls(cluster.dataDir);
    const rows: WebhookRow[] = [];
    for (const clients of CLIENTS) {
      const agent = keepAlive(tls, clients);
      try {
        await phase(pids, agent, cluster.port, clients, PLAIN, `warm-${clients}`);
        await phase(pids, agent, cluster.port, clients, HOOKED, `warm-${clients}`);
        await waitQuiet(pids, 50, 10_000);
        rows.push(row('create ConfigMap', clients, await phase(pids, agent, cluster.port, clients, PLAIN, `cm-${clients}`)));
        await waitQuiet(pids, 50, 10_000);
        rows.push(row('create ConfigMap, 1 mutating + 1 validating webhook', clients, await phase(pids, agent, cluster.port, clients, HOOKED, `cm-${clients}`)));
      } finally {
        agent.destroy();
      }
    }
    return rows;
  } finally {
    await Promise.all([cluster.stop(), wh.stop()]);
  }
}
