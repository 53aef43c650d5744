// NamespaceLifecycle: no content is created in a namespace that does not exist or
// is being terminated, no content is updated in one that does not exist, and the
// immortal namespaces cannot be deleted. Namespaces themselves, cluster-scoped
// objects and deletions of namespaced objects always pass.
// Namespaces are looked up in memory (NamespaceCache), storage only when memory
// may be wrong.
import { group, NAMESPACE_DEFAULT, NAMESPACE_PUBLIC, NAMESPACE_SYSTEM } from '../../names/index.js';
import { forbidden, notFound } from '../errors.js';
import type { NamespaceCache } from '../namespaces.js';
import type { AdmissionPlugin, AdmissionRequest, Operation } from '../types.js';

export const NAMESPACE_LIFECYCLE = 'NamespaceLifecycle';
export const IMMORTAL_NAMESPACES = [NAMESPACE_DEFAULT, NAMESPACE_SYSTEM, NAMESPACE_PUBLIC];

const NAMESPACES = { group: '', resource: 'namespaces' };
/** Answering "not found" for these would tell a caller which namespaces exist. */
const ACCESS_REVIEWS = new Set([`${group('authorization')}/localsubjectaccessreviews`]);

const isNamespaceKind = (request: AdmissionRequest): boolean =>
  (request.kind.kind ? request.kind.group === '' && request.kind.kind === 'Namespace'
    : request.resource.group === '' && request.resource.resource === 'namespaces');

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

  constructor(private readonly namespaces: Pick<NamespaceCache, 'get' | 'deleting'>, private readonly immortal = IMMORTAL_NAMESPACES) {}

  handles(operation: Operation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE' || operation === 'DELETE';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    if (isNamespaceKind(request)) {
      if (request.operation === 'DELETE' && this.immortal.includes(request.name)) {
        throw forbidden(request.resource, request.name, 'this namespace may not be deleted');
      }
      if (request.operation === 'DELETE') this.namespaces.deleting(request.name);
      return;
    }
    if (!request.namespace || request.operation === 'DELETE') return;
    if (ACCESS_REVIEWS.has(`${request.resource.group}/${request.resource.resource}`)) return;

    const namespace = await this.namespaces.get(request.namespace);
    if (!namespace) throw notFound(NAMESPACES, request.namespace);
    if (request.operation === 'CREATE' && namespace.terminating) {
      throw forbidden(request.resource, nameOf(request),
        `unable to create new content in namespace ${request.namespace} because it is being terminated`,
        [{ type: 'NamespaceTerminating', message: `namespace ${request.namespace} is being terminated`, field: 'metadata.namespace' }]);
    }
  }
}
