// NamespaceAutoProvision: creating namespaced content in a namespace that does
// not exist creates the namespace first (not for a dry run). A namespace
// created meanwhile by someone else is as good.
import { newUid, nowTimestamp, type ApiObject } from '../../apimachinery/meta.js';
import { builtinRegistry } from '../../registry/index.js';
import { createStoredOnce } from '../../storage/objects.js';
import { objectKey } from '../../storage/keys.js';
import type { StorageClient } from '../../storage/client.js';
import type { NamespaceCache } from '../namespaces.js';
import type { AdmissionPlugin, AdmissionRequest, Operation } from '../types.js';

export const NAMESPACE_AUTO_PROVISION = 'NamespaceAutoProvision';

export class NamespaceAutoProvision implements AdmissionPlugin {
  readonly name = NAMESPACE_AUTO_PROVISION;
  readonly phase = 'mutating' as const;
  private readonly namespaceKind = builtinRegistry().lookup('', 'v1', 'namespaces')!;

  constructor(private readonly namespaces: Pick<NamespaceCache, 'get'>, private readonly storage: StorageClient) {}

  handles(operation: Operation): boolean {
    return operation === 'CREATE';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    if (request.dryRun || !request.namespace || (request.kind.group === '' && request.kind.kind === 'Namespace')) return;
    if (await this.namespaces.get(request.namespace)) return;
    // As the server creates any namespace: defaulted (its finalizer, its name label, Active).
    const namespace: ApiObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: request.namespace, uid: newUid(), creationTimestamp: nowTimestamp() } };
    this.namespaceKind.prepareForCreate?.(namespace);
    await createStoredOnce(this.storage, objectKey('', 'namespaces', '', request.namespace), namespace);
  }
}
