// Turns a request path and method into the attributes every later step uses:
// verb, group, version, resource, namespace, name, sub-resource.
import { badRequest } from '../internal/apimachinery/status.js';
import { UPSTREAM_REVIEW_GROUPS, ownGroup } from '../internal/names/index.js';

export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  /** get, list, watch, create, update, patch, delete, deletecollection (or the lower-case method for non-resource paths). */
  verb: string;
  apiPrefix: 'api' | 'apis' | '';
  group: string;
  /** The upstream spelling of the group when the path used it (`rbac.authorization.k8s.io`); answers keep it. */
  groupAlias?: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

const NAMESPACE_SUBRESOURCES = ['status', 'finalize'];
const METHOD_VERBS: Record<string, string> = { GET: 'get', HEAD: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

const isWatch = (query: URLSearchParams): boolean => {
  const w = query.get('watch');
  return w !== null && w !== '0' && w.toLowerCase() !== 'false';
};

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw badRequest(`the path segment "${segment}" is not valid percent-encoding`);
  }
}

/** Parses `/api/v1/...` and `/apis/{group}/{version}/...` paths; anything else is a non-resource request. */
export function requestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const nonResource: RequestInfo = {
    isResourceRequest: false, path, verb: method.toLowerCase(), apiPrefix: '', group: '', version: '', resource: '', subresource: '', namespace: '', name: '',
  };
  const parts = path.split('/').filter(Boolean).map(decodeSegment);
  let rest: string[];
  let group = '';
  let version: string;
  if (parts[0] === 'api' && parts.length >= 3) {
    version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1];
    version = parts[2];
    rest = parts.slice(3);
  } else {
    return nonResource;
  }
  let namespace = '';
  // `namespaces/{ns}/{resource}...` addresses a namespaced collection; `namespaces/{name}` is the namespace itself.
  // `namespaces/{name}/status` and `/finalize` are sub-resources of the namespace itself.
  if (rest[0] === 'namespaces' && rest.length === 3 && NAMESPACE_SUBRESOURCES.includes(rest[2])) {
    namespace = rest[1];
  } else if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  } else if (rest[0] === 'namespaces' && rest.length === 2) {
    namespace = rest[1];
  }
  if (rest.length > 3) throw badRequest(`the path ${path} addresses no resource`);
  const [resource, name = '', subresource = ''] = rest;
  let verb = METHOD_VERBS[method] ?? method.toLowerCase();
  if (!name && method === 'GET') verb = isWatch(query) ? 'watch' : 'list';
  else if (name && method === 'GET' && isWatch(query)) verb = 'watch';
  else if (!name && method === 'DELETE') verb = 'deletecollection';
  const own = ownGroup(group);
  return {
    isResourceRequest: true, path, verb, apiPrefix: parts[0] as 'api' | 'apis', group: own, version, resource, subresource, namespace, name,
    ...(own !== group ? { groupAlias: group } : {}),
  };
}

/** The request as served when the upstream names of renamed groups are not: such a path names an unknown group
 * (404), but for the review groups kubectl posts to in that spelling on its own. */
export function withoutUpstreamNames(info: RequestInfo): RequestInfo {
  if (!info.groupAlias || UPSTREAM_REVIEW_GROUPS.includes(info.groupAlias)) return info;
  const { groupAlias, ...rest } = info;
  return { ...rest, group: groupAlias };
}
