// NamespaceExists: a write of namespaced content is refused (404) when its
// namespace does not exist. Namespaces are looked up as NamespaceLifecycle
// looks them up: in memory, storage when memory may be behind.
import { notFound } from '../errors.js';
import type { NamespaceCache } from '../namespaces.js';
import type { AdmissionPlugin, AdmissionRequest, Operation } from '../types.js';

export const NAMESPACE_EXISTS = 'NamespaceExists';
const NAMESPACES = { group: '', resource: 'namespaces' };

export class NamespaceExists implements AdmissionPlugin {
  readonly name = NAMESPACE_EXISTS;
  readonly phase = 'validating' as const;

  constructor(private readonly namespaces: Pick<NamespaceCache, 'get'>) {}

  handles(operation: Operation): boolean {
    return operation !== 'CONNECT';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    if (!request.namespace || (request.kind.group === '' && request.kind.kind === 'Namespace')) return;
    if (!(await this.namespaces.get(request.namespace))) throw notFound(NAMESPACES, request.namespace);
  }
}
