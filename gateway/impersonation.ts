// Impersonation: a caller allowed the `impersonate` verb acts as another user
// (`Impersonate-User`, `-Group`, `-Uid`, `-Extra-<key>`); every impersonated
// attribute is authorized on its own, as the upstream server does.
import type Koa from 'koa';
import { badRequest } from '../internal/apimachinery/status.js';
import { GROUP_AUTHENTICATED, USER_ANONYMOUS, group } from '../internal/names/index.js';
import type { Backends, UserInfo } from './backends.js';
import { authorizeRequest } from './authorization.js';
import type { RequestInfo } from './requestinfo.js';

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
const EXTRA_PREFIX = 'impersonate-extra-';
const AUTHENTICATION_GROUP = group('authentication');

const headerValues = (ctx: Koa.Context, name: string): string[] =>
  ([] as string[]).concat(ctx.headers[name] ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);

/** What is impersonated, as resource attributes the caller must be allowed to `impersonate`. */
function targets(user: string, groups: string[], uid: string, extra: Record<string, string[]>): RequestInfo[] {
  const target = (g: string, resource: string, name: string, namespace = '', subresource = ''): RequestInfo => ({
    isResourceRequest: true, path: '', verb: 'impersonate', apiPrefix: g ? 'apis' : 'api', group: g, version: '', resource, subresource, namespace, name,
  });
  const sa = user.startsWith(SERVICE_ACCOUNT_PREFIX) ? user.slice(SERVICE_ACCOUNT_PREFIX.length).split(':') : undefined;
  return [
    sa?.length === 2 ? target('', 'serviceaccounts', sa[1], sa[0]) : target('', 'users', user),
    ...groups.map((g) => target('', 'groups', g)),
    ...(uid ? [target(AUTHENTICATION_GROUP, 'uids', uid)] : []),
    ...Object.entries(extra).flatMap(([key, values]) => values.map((v) => target(AUTHENTICATION_GROUP, 'userextras', v, '', key))),
  ];
}

/** The user a request acts as: the caller, or whom it impersonates once every part is allowed. */
export async function impersonatedUser(ctx: Koa.Context, backends: Backends, caller: UserInfo): Promise<UserInfo> {
  const username = ctx.get('Impersonate-User');
  const groups = headerValues(ctx, 'impersonate-group');
  const uid = ctx.get('Impersonate-Uid');
  const extra: Record<string, string[]> = {};
  for (const name of Object.keys(ctx.headers).filter((h) => h.startsWith(EXTRA_PREFIX))) {
    extra[decodeURIComponent(name.slice(EXTRA_PREFIX.length))] = headerValues(ctx, name);
  }
  if (!username) {
    if (groups.length || uid || Object.keys(extra).length) throw badRequest('impersonation headers other than Impersonate-User require Impersonate-User');
    return caller;
  }
  for (const target of targets(username, groups, uid, extra)) await authorizeRequest(backends, caller, target);
  const implied = username === USER_ANONYMOUS ? [] : [GROUP_AUTHENTICATED];
  return {
    username, uid, groups: [...new Set([...groups, ...implied])],
    extra: Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, { values: v }])),
  };
}
