// Refusals worded as the Kubernetes API server words its Status errors.
import { isUnreachable } from '../rpc/index.js';
import { AdmissionError, type AdmissionRequest, type Cause } from './types.js';

export interface GroupResource {
  group: string;
  resource: string;
}

/** `resource` for the core group, `resource.group` otherwise. */
export const qualifiedResource = ({ group, resource }: GroupResource): string => (group ? `${resource}.${group}` : resource);

const quoted = (name: string): string => JSON.stringify(name);

export function forbidden(target: GroupResource, name: string, detail: string, causes: Cause[] = []): AdmissionError {
  const what = qualifiedResource(target);
  const message = !what ? `forbidden: ${detail}`
    : name ? `${what} ${quoted(name)} is forbidden: ${detail}` : `${what} is forbidden: ${detail}`;
  return new AdmissionError(403, 'Forbidden', message, causes);
}

/** The name a refusal of a request names: the request's, else the object's name or generateName, else `Unknown`. */
export function requestName(request: AdmissionRequest): string {
  if (request.name) return request.name;
  const metadata = (request.object?.metadata ?? {}) as { name?: string; generateName?: string };
  return metadata.name || metadata.generateName || 'Unknown';
}

/** `<resource> "<name>" is forbidden: <detail>` for the request's resource and name (upstream's NewForbidden). */
export const forbiddenRequest = (request: AdmissionRequest, detail: string): AdmissionError =>
  forbidden(request.resource, requestName(request), detail);

export function notFound(target: GroupResource, name: string): AdmissionError {
  return new AdmissionError(404, 'NotFound', `${qualifiedResource(target)} ${quoted(name)} not found`);
}

export function internalError(detail: string): AdmissionError {
  return new AdmissionError(500, 'InternalError', `Internal error occurred: ${detail}`, [{ type: '', message: detail, field: '' }]);
}

/** A plugin's failure: 503 when a service it reads could not be reached (the client should retry), else 500. */
export function pluginFailure(plugin: string, err: unknown): AdmissionError {
  if (isUnreachable(err)) return new AdmissionError(503, 'ServiceUnavailable', `${plugin}: the storage service is unavailable: ${(err as Error).message}`);
  return internalError(`${plugin}: ${(err as Error).message}`);
}
