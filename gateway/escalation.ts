// Escalation prevention on writes of roles and bindings, whatever the
// authorization mode: system:masters passes; otherwise a role's writer holds
// `escalate` on it or every permission it grants at its scope, and a binding's
// writer holds `bind` on the role it refers to or every permission of that role.
import { isDeepStrictEqual } from 'node:util';
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { forbidden, notFound, type GroupResource } from '../internal/apimachinery/status.js';
import { GROUP_MASTERS, GROUP_RBAC } from '../internal/names/index.js';
import { escalationMessage } from '../internal/rbac/covers.js';
import type { CoversRulesRequest } from '../internal/rpc/gen/svc/authz/v1/CoversRulesRequest.js';
import type { PolicyRule } from '../internal/rbac/types.js';
import type { Backends, UserInfo } from './backends.js';
import type { ResourceRequest } from './context.js';

const ROLE_KINDS = new Set(['roles', 'clusterroles']);
const BINDING_KINDS = new Set(['rolebindings', 'clusterrolebindings']);

type Obj = ApiObject & Record<string, any>;

/** An update that only touches what garbage collection changes (owners, finalizers) grants nothing new. */
function onlyGcFields(next: ApiObject, old: ApiObject): boolean {
  const strip = (o: ApiObject) => {
    const { ownerReferences: _o, finalizers: _f, managedFields: _m, resourceVersion: _r, ...meta } = o.metadata ?? {};
    return { ...o, metadata: meta };
  };
  return isDeepStrictEqual(strip(next), strip(old));
}

async function allowed(backends: Backends, user: UserInfo, verb: string, resource: string, namespace: string, name: string): Promise<boolean> {
  const res = await backends.authorize({ user, resource: { namespace, verb, group: GROUP_RBAC, version: '*', resource, subresource: '', name, fieldSelector: '', labelSelector: '' } });
  return res.decision === 'ALLOW';
}

/** 403 unless the user's RBAC rules at the scope cover what the request asks for. */
async function confirmCovered(backends: Backends, user: UserInfo, request: Omit<CoversRulesRequest, 'user'>, gr: GroupResource, name: string): Promise<void> {
  const res = await backends.coversRules({ ...request, user });
  const ref = request.roleRef;
  if (res.roleNotFound && ref) throw notFound({ group: GROUP_RBAC, resource: ref.kind === 'Role' ? 'roles' : 'clusterroles' }, ref.name ?? '');
  if (res.covered) return;
  const missing: PolicyRule[] = res.missing.map((m) => ({
    verbs: m.verbs, apiGroups: m.apiGroups, resources: m.resources, resourceNames: m.resourceNames, nonResourceURLs: m.nonResourceUrls,
  }));
  const reason = escalationMessage(user.username, user.groups, missing, res.resolutionErrors);
  const qualified = `${gr.resource}.${gr.group}`;
  throw forbidden(name ? `${qualified} ${JSON.stringify(name)} is forbidden: ${reason}` : `${qualified} is forbidden: ${reason}`, gr, name);
}

/** Refuses a create or update of a role or binding that would grant what the writer does not hold. */
export async function confirmNoEscalation(r: ResourceRequest, backends: Backends, obj: Obj, old?: ApiObject): Promise<void> {
  const resource = r.def.resource;
  if (r.def.group !== GROUP_RBAC || !(ROLE_KINDS.has(resource) || BINDING_KINDS.has(resource))) return;
  if (r.user.groups.includes(GROUP_MASTERS) || (old && onlyGcFields(obj, old))) return;
  const namespace = obj.metadata?.namespace ?? '';
  const name = obj.metadata?.name ?? '';
  const gr = { group: GROUP_RBAC, resource };
  if (ROLE_KINDS.has(resource)) {
    if (await allowed(backends, r.user, 'escalate', resource, r.info.namespace, r.info.name)) return;
    return confirmCovered(backends, r.user, { namespace, rules: rulesOf(obj) }, gr, name);
  }
  const ref = { kind: String(obj.roleRef?.kind ?? ''), name: String(obj.roleRef?.name ?? '') };
  if (await allowed(backends, r.user, 'bind', ref.kind === 'Role' ? 'roles' : 'clusterroles', namespace, ref.name)) return;
  return confirmCovered(backends, r.user, { namespace, roleRef: ref }, gr, name);
}

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

function rulesOf(obj: Obj) {
  return (Array.isArray(obj.rules) ? obj.rules : []).map((rule: Obj) => ({
    verbs: list(rule.verbs), apiGroups: list(rule.apiGroups), resources: list(rule.resources),
    resourceNames: list(rule.resourceNames), nonResourceUrls: list(rule.nonResourceURLs),
  }));
}
