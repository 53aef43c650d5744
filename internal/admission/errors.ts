// Refusals worded as the Kubernetes API server words its Status errors.
import { AdmissionError, type Cause } from './types.js';

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

export function notFound(target: GroupResource, name: string): AdmissionError {
  return new AdmissionError(404, 'NotFound', `${qualifiedResource(target)} ${quoted(name)} not found`);
}

export function internalError(detail: string): AdmissionError {
  return new AdmissionError(500, 'InternalError', `Internal error occurred: ${detail}`, [{ type: '', message: detail, field: '' }]);
}
