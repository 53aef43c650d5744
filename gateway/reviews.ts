// The kinds a create answers instead of storing: access reviews (asked of the
// authorization service), token and self reviews (of the authentication service)
// and Binding (assigning a pod to a node).
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { isObject } from '../internal/apimachinery/meta.js';
import { badRequest } from '../internal/apimachinery/status.js';
import type { Backends, UserInfo } from './backends.js';
import type { ResourceRequest } from './context.js';
import type { AuthorizeRequest } from '../internal/rpc/gen/svc/authz/v1/AuthorizeRequest.js';
import { bindPod } from './binding.js';

type Spec = Record<string, any>;
const specOf = (obj: ApiObject): Spec => (isObject(obj.spec) ? obj.spec : {}) as Spec;

/** UserInfo in the API's shape (extra as lists). */
const userInfoOf = (u: UserInfo) => ({
  username: u.username, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups,
  ...(Object.keys(u.extra ?? {}).length ? { extra: Object.fromEntries(Object.entries(u.extra).map(([k, v]) => [k, v.values])) } : {}),
});

function subjectOf(spec: Spec): UserInfo {
  const extra = Object.fromEntries(Object.entries((spec.extra ?? {}) as Record<string, string[]>).map(([k, v]) => [k, { values: v }]));
  return { username: spec.user ?? '', uid: spec.uid ?? '', groups: spec.groups ?? [], extra };
}

function attributesOf(user: UserInfo, spec: Spec): AuthorizeRequest {
  const ra = spec.resourceAttributes as Spec | undefined;
  if (ra) {
    return { user, resource: {
      namespace: ra.namespace ?? '', verb: ra.verb ?? '', group: ra.group ?? '', version: ra.version ?? '', resource: ra.resource ?? '',
      subresource: ra.subresource ?? '', name: ra.name ?? '', fieldSelector: ra.fieldSelector?.rawSelector ?? '', labelSelector: ra.labelSelector?.rawSelector ?? '',
    } };
  }
  const nra = (spec.nonResourceAttributes ?? {}) as Spec;
  return { user, nonResource: { path: nra.path ?? '', verb: nra.verb ?? '' } };
}

async function accessStatus(backends: Backends, user: UserInfo, spec: Spec) {
  const res = await backends.authorize(attributesOf(user, spec));
  return {
    allowed: res.decision === 'ALLOW', ...(res.decision === 'DENY' ? { denied: true } : {}),
    ...(res.reason ? { reason: res.reason } : {}), ...(res.evaluationError ? { evaluationError: res.evaluationError } : {}),
  };
}

async function tokenStatus(backends: Backends, spec: Spec) {
  if (typeof spec.token !== 'string' || spec.token === '') throw badRequest('token is required for TokenReview in authentication');
  const audiences = Array.isArray(spec.audiences) ? spec.audiences.filter((a: unknown) => typeof a === 'string') : [];
  const res = await backends.authenticateToken({ token: spec.token, audiences });
  if (!res.authenticated || !res.user) return { authenticated: false, user: {}, ...(res.error ? { error: res.error } : {}) };
  return { authenticated: true, user: userInfoOf(res.user), ...(res.audiences.length ? { audiences: res.audiences } : {}) };
}

const nonEmpty = (field: string, v: string[]) => (v.length ? { [field]: v } : {});

/** The user's rules in the review's namespace, from every authorizer that can list them. */
async function rulesStatus(backends: Backends, user: UserInfo, spec: Spec) {
  if (!spec.namespace) throw badRequest('no namespace on request');
  const res = await backends.rulesReview({ user, namespace: String(spec.namespace) });
  return {
    resourceRules: res.resourceRules.map((r) => ({
      verbs: r.verbs, ...nonEmpty('apiGroups', r.apiGroups), ...nonEmpty('resources', r.resources), ...nonEmpty('resourceNames', r.resourceNames),
    })),
    nonResourceRules: res.nonResourceRules.map((r) => ({ verbs: r.verbs, ...nonEmpty('nonResourceURLs', r.nonResourceUrls) })),
    incomplete: res.incomplete,
    ...(res.evaluationError ? { evaluationError: res.evaluationError } : {}),
  };
}

type Answer = (r: ResourceRequest, backends: Backends, obj: ApiObject) => Promise<unknown>;

const ANSWERS: Record<string, Answer> = {
  SelfSubjectReview: async (r) => ({ userInfo: userInfoOf(r.user) }),
  TokenReview: (_r, backends, obj) => tokenStatus(backends, specOf(obj)),
  SelfSubjectAccessReview: (r, backends, obj) => accessStatus(backends, r.user, specOf(obj)),
  SubjectAccessReview: (_r, backends, obj) => accessStatus(backends, subjectOf(specOf(obj)), specOf(obj)),
  LocalSubjectAccessReview: (_r, backends, obj) => accessStatus(backends, subjectOf(specOf(obj)), specOf(obj)),
  SelfSubjectRulesReview: (r, backends, obj) => rulesStatus(backends, r.user, specOf(obj)),
};

/** The answered object of an ephemeral kind: the request with its status filled in. */
export async function answerEphemeral(r: ResourceRequest, backends: Backends, obj: ApiObject): Promise<ApiObject> {
  if (r.def.kind === 'Binding') {
    await bindPod(r, backends, obj.metadata?.name ?? '', obj);
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as ApiObject;
  }
  const answer = ANSWERS[r.def.kind];
  if (!answer) return obj;
  const status = await answer(r, backends, obj);
  // A token review never hands the token back.
  if (r.def.kind === 'TokenReview') return { ...obj, spec: { ...specOf(obj), token: undefined }, status };
  return { ...obj, status };
}
