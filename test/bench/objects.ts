// The ConfigMaps the benchmarks write, so that the API and etcd move objects of one size.
import { randomUUID } from 'node:crypto';

const PAYLOAD = 'x'.repeat(900);

/** The body of a create, as a client sends it. */
export const createBody = (name: string): string => JSON.stringify({ metadata: { name }, data: { payload: PAYLOAD } });

/** The same object as a server stores it (what an etcd put carries). */
export const storedObject = (namespace: string, name: string, data: Record<string, string> = { payload: PAYLOAD }): Record<string, any> => ({
  apiVersion: 'v1', kind: 'ConfigMap',
  metadata: {
    name, namespace, uid: randomUUID(), creationTimestamp: new Date().toISOString(),
    managedFields: [{ manager: 'node', operation: 'Update', apiVersion: 'v1', time: new Date().toISOString(), fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': Object.fromEntries([['.', {}], ...Object.keys(data).map((k) => [`f:${k}`, {}])]) } }],
  },
  data,
});

const SMALL_DATA = { key: 'value' };
/** A small object for the watch benchmark, where a thousand watchers each receive every event. */
export const smallBody = (name: string): string => JSON.stringify({ metadata: { name }, data: SMALL_DATA });
/** smallBody's object as a server stores it. */
export const smallStored = (namespace: string, name: string): Buffer => Buffer.from(JSON.stringify(storedObject(namespace, name, SMALL_DATA)));

/** A ConfigMap of a size seen in real clusters (about 550 bytes of JSON): labels,
 *  an annotation and a few settings. */
export function realistic(namespace: string, i: number): Record<string, any> {
  const app = `app-${i % 97}`;
  return {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: {
      name: `${app}-config-${i}`, namespace, uid: randomUUID(), creationTimestamp: new Date().toISOString(),
      labels: { app, tier: i % 3 ? 'backend' : 'frontend', release: `r${i % 7}` },
      annotations: { 'example.com/owner': `team-${i % 13}@example.com` },
    },
    data: {
      'LOG_LEVEL': i % 5 ? 'info' : 'debug',
      'DATABASE_URL': `postgres://${app}:5432/${app}?sslmode=require&pool=${10 + (i % 20)}`,
      'FEATURE_FLAGS': 'search,export,beta-dashboard',
      'settings.yaml': `server:\n  port: ${8000 + (i % 1000)}\n  timeoutSeconds: 30\ncache:\n  ttl: 5m\n  size: ${i % 512}\n`,
    },
  };
}
