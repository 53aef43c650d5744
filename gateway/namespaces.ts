// The namespaces that exist from the start. (Their deletion is the
// controller-manager's: internal/controllers/namespace.ts.)
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { newUid, nowTimestamp } from '../internal/apimachinery/meta.js';
import { INITIAL_NAMESPACES } from '../internal/names/index.js';
import type { Registry } from '../internal/registry/index.js';
import type { StorageClient } from '../internal/storage/client.js';
import { objectKey } from '../internal/storage/keys.js';
import { createStoredOnce } from '../internal/storage/objects.js';

const nsKey = (name: string) => objectKey('', 'namespaces', '', name);

/** Creates `default`, `svc-system`, `svc-public` and `svc-node-lease` when absent. */
export async function ensureInitialNamespaces(storage: StorageClient, registry: Registry): Promise<void> {
  const def = registry.lookup('', 'v1', 'namespaces')!;
  for (const name of INITIAL_NAMESPACES) {
    const ns: ApiObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name, uid: newUid(), creationTimestamp: nowTimestamp() } };
    def.prepareForCreate?.(ns);
    await createStoredOnce(storage, nsKey(name), ns);
  }
}
