// Seeds a data dir with many objects at once, through the store's own code (group
// commits of a chunk of creates each), as a cluster that had been written to for a
// long time would hold them; for start-up and restart tests at size.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { encodeStored } from '../../internal/storage/objects.js';
import { objectKey } from '../../internal/storage/keys.js';
import { Store } from '../../internal/storage/store.js';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import { GROUP_RBAC } from '../../internal/names/index.js';

const CHUNK = 2000;

export interface SeedCounts {
  /** ConfigMaps, spread over `namespaces` namespaces named seed-0, seed-1, ... */
  configMaps: number;
  secrets?: number;
  /** Roles, each with a RoleBinding of the same name. */
  roles?: number;
  namespaces?: number;
}

interface Seeded { key: string; obj: ApiObject }

function* objects(counts: SeedCounts): Generator<Seeded> {
  const namespaces = counts.namespaces ?? 10;
  const created = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), uid: randomUUID(), creationTimestamp: created });
  const ns = (i: number) => `seed-${i % namespaces}`;
  for (let i = 0; i < namespaces; i++) {
    yield { key: objectKey('', 'namespaces', '', ns(i)), obj: { apiVersion: 'v1', kind: 'Namespace', metadata: meta(ns(i)), spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } } };
  }
  for (let i = 0; i < counts.configMaps; i++) {
    yield { key: objectKey('', 'configmaps', ns(i), `cm-${i}`), obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(`cm-${i}`, ns(i)), data: { index: String(i), payload: 'x'.repeat(64) } } };
  }
  for (let i = 0; i < (counts.secrets ?? 0); i++) {
    yield { key: objectKey('', 'secrets', ns(i), `secret-${i}`), obj: { apiVersion: 'v1', kind: 'Secret', metadata: meta(`secret-${i}`, ns(i)), type: 'Opaque', data: { k: Buffer.from(`v${i}`).toString('base64') } } };
  }
  const rbac = GROUP_RBAC;
  for (let i = 0; i < (counts.roles ?? 0); i++) {
    const name = `role-${i}`;
    yield { key: objectKey(rbac, 'roles', ns(i), name), obj: { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: meta(name, ns(i)), rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] } };
    yield {
      key: objectKey(rbac, 'rolebindings', ns(i), name),
      obj: { apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: meta(name, ns(i)), roleRef: { apiGroup: rbac, kind: 'Role', name }, subjects: [{ kind: 'User', apiGroup: rbac, name: `user-${i}` }] },
    };
  }
}

/** Writes the objects into the store under dataDir (which no storage process may have open); resolves with how many. */
export async function seedObjects(dataDir: string, counts: SeedCounts): Promise<number> {
  const store = await Store.open(join(dataDir, 'storage'), { historyWindowMs: 0 });
  let written = 0;
  try {
    let chunk: Array<Promise<unknown>> = [];
    for (const { key, obj } of objects(counts)) {
      chunk.push(store.create(key, encodeStored(obj), obj.metadata!.uid));
      if (chunk.length === CHUNK) {
        await Promise.all(chunk);
        written += chunk.length;
        chunk = [];
      }
    }
    await Promise.all(chunk);
    written += chunk.length;
  } finally {
    await store.close();
  }
  return written;
}
