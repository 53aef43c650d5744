// NamespaceLifecycle: no content is created in a namespace that does not exist or
// is being terminated, no content is updated in one that does not exist, and the
// immortal namespaces cannot be deleted. Namespaces themselves, cluster-scoped
// objects and deletions of namespaced objects always pass.
import { objectKey } from '../../storage/keys.js';
import { isServiceError, grpc } from '../../rpc/index.js';
import type { GetResponse } from '../../storage/client.js';
import { group, NAMESPACE_DEFAULT, NAMESPACE_PUBLIC, NAMESPACE_SYSTEM } from '../../names/index.js';
import { forbidden, internalError, notFound } from '../errors.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject, Operation } from '../types.js';

export const NAMESPACE_LIFECYCLE = 'NamespaceLifecycle';
export const IMMORTAL_NAMESPACES = [NAMESPACE_DEFAULT, NAMESPACE_SYSTEM, NAMESPACE_PUBLIC];

/** The one read of the storage client the plugin needs. */
export interface NamespaceStore {
  get(key: string): Promise<GetResponse>;
}

const NAMESPACES = { group: '', resource: 'namespaces' };
/** Answering "not found" for these would tell a caller which namespaces exist. */
const ACCESS_REVIEWS = new Set([`${group('authorization')}/localsubjectaccessreviews`]);

const isNamespaceKind = (request: AdmissionRequest): boolean =>
  (request.kind.kind ? request.kind.group === '' && request.kind.kind === 'Namespace'
    : request.resource.group === '' && request.resource.resource === 'namespaces');

const isTerminating = (namespace: JsonObject): boolean => {
  const status = namespace.status as { phase?: string } | undefined;
  const metadata = namespace.metadata as { deletionTimestamp?: string } | undefined;
  return status?.phase === 'Terminating' || Boolean(metadata?.deletionTimestamp);
};

/** The name a refusal names: the request's, else the object's name or generateName. */
function nameOf(request: AdmissionRequest): string {
  if (request.name) return request.name;
  if (!request.object) return 'Unknown';
  const metadata = (request.object.metadata ?? {}) as { name?: string; generateName?: string };
  return metadata.name || metadata.generateName || '';
}

export class NamespaceLifecycle implements AdmissionPlugin {
  readonly name = NAMESPACE_LIFECYCLE;
  readonly phase = 'mutating' as const;

  constructor(private readonly store: NamespaceStore, private readonly immortal = IMMORTAL_NAMESPACES) {}

  handles(operation: Operation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE' || operation === 'DELETE';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    if (isNamespaceKind(request)) {
      if (request.operation === 'DELETE' && this.immortal.includes(request.name)) {
        throw forbidden(request.resource, request.name, 'this namespace may not be deleted');
      }
      return;
    }
    if (!request.namespace || request.operation === 'DELETE') return;
    if (ACCESS_REVIEWS.has(`${request.resource.group}/${request.resource.resource}`)) return;

    const namespace = await this.readNamespace(request.namespace);
    if (request.operation === 'CREATE' && isTerminating(namespace)) {
      throw forbidden(request.resource, nameOf(request),
        `unable to create new content in namespace ${request.namespace} because it is being terminated`,
        [{ type: 'NamespaceTerminating', message: `namespace ${request.namespace} is being terminated`, field: 'metadata.namespace' }]);
    }
  }

  private async readNamespace(name: string): Promise<JsonObject> {
    let response: GetResponse;
    try {
      response = await this.store.get(objectKey('', 'namespaces', '', name));
    } catch (err) {
      if (isServiceError(err) && err.code === grpc.status.NOT_FOUND) throw notFound(NAMESPACES, name);
      throw err;
    }
    if (!response.kv) throw notFound(NAMESPACES, name);
    try {
      return JSON.parse(response.kv.value.toString('utf8')) as JsonObject;
    } catch (err) {
      throw internalError(`stored namespace ${name} is not JSON: ${(err as Error).message}`);
    }
  }
}
