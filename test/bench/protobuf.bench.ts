// JSON vs Protobuf encode and decode of a 100-pod list and a 10k-ConfigMap list.
import { decodeEnvelope, encodeEnvelope } from '../../internal/apimachinery/protobuf/index.js';
import type { JsonObject } from '../../internal/apimachinery/protobuf/index.js';
import { labelKey } from '../../internal/names/index.js';

/** Time spent measuring each operation. */
const BUDGET_MS = 300;

function pod(i: number): JsonObject {
  const name = `web-7d4b9c8f6-${String(i).padStart(5, '0')}`;
  const labels = { app: 'web', 'pod-template-hash': '7d4b9c8f6', tier: 'frontend' };
  return {
    metadata: {
      name, generateName: 'web-7d4b9c8f6-', namespace: 'default', uid: `0b6c2f0e-4f4e-4d8a-9a51-${String(i).padStart(12, '0')}`,
      resourceVersion: String(1000 + i), creationTimestamp: '2025-03-01T10:00:00Z', labels,
      annotations: { [labelKey('restartedAt', 'kubectl')]: '2025-03-01T09:59:00Z' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d4b9c8f6', uid: '5f0c7a2e-1b7d-4d6e-8a1b-2c3d4e5f6a7b', controller: true, blockOwnerDeletion: true }],
      managedFields: [{ manager: 'controller-manager', operation: 'Update', apiVersion: 'v1', time: '2025-03-01T10:00:00Z', fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {} } } } } }],
    },
    spec: {
      containers: [{
        name: 'web', image: 'registry.example/web:1.27.3', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
        env: [{ name: 'MODE', value: 'production' }, { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }],
        resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
        volumeMounts: [{ name: 'config', mountPath: '/etc/web', readOnly: true }],
        livenessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
        terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent',
      }],
      volumes: [{ name: 'config', configMap: { name: 'web-config', defaultMode: 420 } }],
      restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', serviceAccountName: 'default',
      nodeName: `node-${i % 7}`, securityContext: {}, schedulerName: 'default-scheduler',
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      priority: 0, enableServiceLinks: true, preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastTransitionTime: '2025-03-01T10:00:05Z' })),
      hostIP: '10.0.0.7', podIP: `10.244.1.${i % 250}`, podIPs: [{ ip: `10.244.1.${i % 250}` }], startTime: '2025-03-01T10:00:00Z',
      containerStatuses: [{ name: 'web', ready: true, restartCount: 0, image: 'registry.example/web:1.27.3', imageID: 'registry.example/web@sha256:4f1c',
        containerID: 'containerd://8a7b', started: true, state: { running: { startedAt: '2025-03-01T10:00:03Z' } } }],
      qosClass: 'Burstable',
    },
  };
}

function configMap(i: number): JsonObject {
  return {
    metadata: { name: `settings-${i}`, namespace: `team-${i % 20}`, uid: `7e1d0c4a-2b3c-4d5e-8f90-${String(i).padStart(12, '0')}`,
      resourceVersion: String(50000 + i), creationTimestamp: '2025-03-01T10:00:00Z', labels: { app: 'settings', shard: String(i % 16) } },
    data: { 'app.properties': `mode=production\nshard=${i % 16}\n`, LOG_LEVEL: 'info' },
  };
}

const podList = { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '2000' }, items: Array.from({ length: 100 }, (_, i) => pod(i)) };
const configMapList = { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '70000' }, items: Array.from({ length: 10_000 }, (_, i) => configMap(i)) };

/** Runs `op` for about BUDGET_MS after a short warm-up; its operations per second. */
function measure(op: () => unknown): number {
  for (let i = 0; i < 3; i++) op();
  let runs = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < BUDGET_MS) {
    op();
    runs++;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  return Math.round((runs * 1000) / elapsed);
}

export async function benchProtobuf(): Promise<Array<{ name: string; opsPerSec: number }>> {
  const results: Array<{ name: string; opsPerSec: number }> = [];
  for (const [label, list] of [['PodList(100)', podList], ['ConfigMapList(10k)', configMapList]] as const) {
    const json = Buffer.from(JSON.stringify(list));
    const pb = encodeEnvelope(list);
    results.push(
      { name: `${label} JSON encode`, opsPerSec: measure(() => Buffer.from(JSON.stringify(list))) },
      { name: `${label} Protobuf encode`, opsPerSec: measure(() => encodeEnvelope(list)) },
      { name: `${label} JSON decode`, opsPerSec: measure(() => JSON.parse(json.toString('utf8'))) },
      { name: `${label} Protobuf decode`, opsPerSec: measure(() => decodeEnvelope(pb)) },
    );
  }
  return results;
}
