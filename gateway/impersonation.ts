// Impersonation: a caller allowed the `impersonate` verb acts as another user
// (`Impersonate-User`, `-Group`, `-Uid`, `-Extra-<key>`); every impersonated
// attribute is authorized on its own, and the identity is completed as the
// platform's authenticators would have made it (service-account groups,
// system:authenticated or system:unauthenticated).
import type Koa from 'koa';
import { badRequest } from '../internal/apimachinery/status.js';
import { dns1123Label, dns1123Subdomain } from '../internal/apimachinery/validation.js';
import {
  GROUP_AUTHENTICATED, GROUP_SERVICEACCOUNTS, GROUP_UNAUTHENTICATED, SERVICE_ACCOUNT_USER_PREFIX, USER_ANONYMOUS, group,
} from '../internal/names/index.js';
import type { Backends, UserInfo } from './backends.js';
import { authorizeRequest } from './authorization.js';
import type { RequestInfo } from './requestinfo.js';

const USER = 'impersonate-user';
const GROUP = 'impersonate-group';
const UID = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';
const AUTHENTICATION_GROUP = group('authentication');

/** What a request asks to act as. */
interface Impersonation {
  username: string;
  /** Namespace and name when the user is a service account. */
  serviceAccount?: { namespace: string; name: string };
  /** Each header value is one group, commas included. */
  groups: string[];
  uid: string;
  extra: Record<string, string[]>;
}

/** Every value of a header, one per header line as sent. */
const values = (ctx: Koa.Context, name: string): string[] => ctx.req.headersDistinct[name] ?? [];
const first = (ctx: Koa.Context, name: string): string => values(ctx, name)[0] ?? '';

/** `system:serviceaccount:<namespace>:<name>` with a valid namespace and name. */
function serviceAccountOf(username: string): Impersonation['serviceAccount'] {
  if (!username.startsWith(SERVICE_ACCOUNT_USER_PREFIX)) return undefined;
  const parts = username.slice(SERVICE_ACCOUNT_USER_PREFIX.length).split(':');
  if (parts.length !== 2 || dns1123Label('', parts[0]).length || dns1123Subdomain('', parts[1]).length) return undefined;
  return { namespace: parts[0], name: parts[1] };
}

/** The key of an `Impersonate-Extra-<key>` header: lower case, %-decoded; a broken escape is refused. */
function extraKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded.toLowerCase());
  } catch {
    throw badRequest(`invalid impersonation extra key "${encoded}": malformed percent-encoding`);
  }
}

function requested(ctx: Koa.Context): Impersonation | undefined {
  const username = first(ctx, USER);
  const groups = values(ctx, GROUP);
  const uid = first(ctx, UID);
  const extra: Record<string, string[]> = {};
  for (const name of Object.keys(ctx.req.headersDistinct).filter((h) => h.startsWith(EXTRA_PREFIX))) {
    const key = extraKey(name.slice(EXTRA_PREFIX.length));
    extra[key] = [...(extra[key] ?? []), ...values(ctx, name)];
  }
  if (!username) {
    if (groups.length || uid || Object.keys(extra).length) throw badRequest('impersonation headers other than Impersonate-User require Impersonate-User');
    return undefined;
  }
  return { username, serviceAccount: serviceAccountOf(username), groups, uid, extra };
}

/** What is impersonated, as resource attributes the caller must be allowed to `impersonate`. */
function targets(wanted: Impersonation): RequestInfo[] {
  const target = (g: string, resource: string, name: string, namespace = '', subresource = ''): RequestInfo => ({
    isResourceRequest: true, path: '', verb: 'impersonate', apiPrefix: g ? 'apis' : 'api', group: g, version: '', resource, subresource, namespace, name,
  });
  const sa = wanted.serviceAccount;
  return [
    sa ? target('', 'serviceaccounts', sa.name, sa.namespace) : target('', 'users', wanted.username),
    ...wanted.groups.map((g) => target('', 'groups', g)),
    ...Object.entries(wanted.extra).flatMap(([key, vs]) => vs.map((v) => target(AUTHENTICATION_GROUP, 'userextras', v, '', key))),
    ...(wanted.uid ? [target(AUTHENTICATION_GROUP, 'uids', wanted.uid)] : []),
  ];
}

/** The groups of the impersonated user: those asked for (or a service account's own), plus the
 * implied one, unless the request named it or its opposite. */
function groupsOf(wanted: Impersonation): string[] {
  const sa = wanted.serviceAccount;
  const groups = wanted.groups.length || !sa ? [...wanted.groups] : [GROUP_SERVICEACCOUNTS, `${GROUP_SERVICEACCOUNTS}:${sa.namespace}`];
  if (wanted.username === USER_ANONYMOUS) {
    if (!groups.includes(GROUP_UNAUTHENTICATED)) groups.push(GROUP_UNAUTHENTICATED);
  } else if (!groups.includes(GROUP_AUTHENTICATED) && !groups.includes(GROUP_UNAUTHENTICATED)) {
    groups.push(GROUP_AUTHENTICATED);
  }
  return groups;
}

/** Impersonation headers are consumed here: nothing after this reads them. */
function dropImpersonationHeaders(ctx: Koa.Context): void {
  for (const name of Object.keys(ctx.req.headers)) {
    if (name === USER || name === GROUP || name === UID || name.startsWith(EXTRA_PREFIX)) {
      delete ctx.req.headers[name];
      delete ctx.req.headersDistinct[name];
    }
  }
}

/** The user a request acts as: the caller, or whom it impersonates once every part is allowed. */
export async function impersonatedUser(ctx: Koa.Context, backends: Backends, caller: UserInfo): Promise<UserInfo> {
  const wanted = requested(ctx);
  if (!wanted) return caller;
  for (const target of targets(wanted)) await authorizeRequest(backends, caller, target);
  dropImpersonationHeaders(ctx);
  return {
    username: wanted.username, uid: wanted.uid, groups: groupsOf(wanted),
    extra: Object.fromEntries(Object.entries(wanted.extra).map(([k, v]) => [k, { values: v }])),
  };
}
