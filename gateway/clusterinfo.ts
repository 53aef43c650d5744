// ConfigMap cluster-info in svc-public, as the cluster's bootstrap creates it:
// a client configuration with the server and its CA, which joining clients read
// (and check against the bootstrap signer's signatures).
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { newUid, nowTimestamp } from '../internal/apimachinery/meta.js';
import { CLUSTER_INFO_CONFIGMAP, CLUSTER_INFO_KUBECONFIG_KEY, NAMESPACE_PUBLIC } from '../internal/names/index.js';
import { clusterInfoKubeconfig } from '../internal/pki/index.js';
import type { StorageClient } from '../internal/storage/client.js';
import { objectKey } from '../internal/storage/keys.js';
import { createStoredOnce } from '../internal/storage/objects.js';

/** Creates cluster-info when absent; an existing one is left as it is. */
export async function ensureClusterInfo(storage: StorageClient, server: string, caPem: Buffer): Promise<void> {
  const cm: ApiObject = {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: { name: CLUSTER_INFO_CONFIGMAP, namespace: NAMESPACE_PUBLIC, uid: newUid(), creationTimestamp: nowTimestamp() },
    data: { [CLUSTER_INFO_KUBECONFIG_KEY]: clusterInfoKubeconfig(server, caPem) },
  };
  await createStoredOnce(storage, objectKey('', 'configmaps', NAMESPACE_PUBLIC, CLUSTER_INFO_CONFIGMAP), cm);
}
