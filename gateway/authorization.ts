// Asking the authorization service whether a user may do what a request (or a
// step of it, such as the create behind an apply) does; 403 with the reason if not.
import { forbidden } from '../internal/apimachinery/status.js';
import type { Backends, UserInfo } from './backends.js';
import type { RequestInfo } from './requestinfo.js';

export function forbiddenMessage(info: RequestInfo, user: UserInfo, reason: string): string {
  const suffix = reason ? `: ${reason}` : '';
  if (!info.isResourceRequest) return `forbidden: User "${user.username}" cannot ${info.verb} path "${info.path}"${suffix}`;
  const what = info.group ? `${info.resource}.${info.group}` : info.resource;
  const subject = info.name ? `${what} "${info.name}"` : what;
  const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  const scope = info.namespace ? `in the namespace "${info.namespace}"` : 'at the cluster scope';
  return `${subject} is forbidden: User "${user.username}" cannot ${info.verb} resource "${resource}" in API group "${info.group}" ${scope}${suffix}`;
}

/** Throws 403 unless the chain allows the request; `verb` overrides the request's own. */
export async function authorizeRequest(backends: Backends, user: UserInfo, info: RequestInfo,
  selectors: { fieldSelector: string; labelSelector: string } = { fieldSelector: '', labelSelector: '' }, verb = info.verb): Promise<void> {
  const res = await backends.authorize(info.isResourceRequest
    ? { user, resource: { namespace: info.namespace, verb, group: info.group, version: info.version, resource: info.resource,
      subresource: info.subresource, name: info.name, ...selectors } }
    : { user, nonResource: { path: info.path, verb } });
  if (res.decision === 'ALLOW') return;
  throw forbidden(forbiddenMessage({ ...info, verb }, user, res.reason),
    info.isResourceRequest ? { group: info.group, resource: info.resource } : undefined, info.name);
}
