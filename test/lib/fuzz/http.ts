// Bad HTTPS requests drawn from a seed: odd paths, query parameters, headers and
// bodies (broken, truncated or mutated JSON/YAML, random bytes in every accepted
// content type, mutated valid objects of several kinds and patches of each type).
import { encodeEnvelope } from '../../../internal/apimachinery/protobuf/index.js';
import { encodeCbor } from '../../../gateway/negotiation.js';
import { GROUP_RBAC, MEDIA_PROTOBUF, UPSTREAM_MEDIA_PROTOBUF } from '../../../internal/names/index.js';
import type { Rng } from './random.js';

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** Without a client certificate. */
  anonymous: boolean;
}

/** The namespace the fuzzed writes go to. */
export const FUZZ_NAMESPACE = 'fuzz';
/** Objects that exist before the run, so that gets, updates, patches and deletes reach real objects. */
export const EXISTING = ['fz-0', 'fz-1', 'fz-2'];

const NS = `namespaces/${FUZZ_NAMESPACE}`;
const meta = (name: string) => ({ name, namespace: FUZZ_NAMESPACE, labels: { app: 'fuzz' }, annotations: { note: 'x' } });
const podSpec = { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }], env: [{ name: 'A', value: 'b' }] }] };

/** Collections the generator writes to, each with a valid object of its kind. Kinds whose objects change the
 * server's own behaviour (webhooks, custom resources, API services) are left out: a valid one is not a bad request. */
const KINDS: Array<{ path: string; object: (name: string) => Record<string, unknown> }> = [
  { path: `/api/v1/${NS}/configmaps`, object: (name) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(name), data: { a: 'b' } }) },
  { path: `/api/v1/${NS}/secrets`, object: (name) => ({ apiVersion: 'v1', kind: 'Secret', metadata: meta(name), type: 'Opaque', data: { a: 'Yg==' } }) },
  { path: `/api/v1/${NS}/pods`, object: (name) => ({ apiVersion: 'v1', kind: 'Pod', metadata: meta(name), spec: podSpec }) },
  { path: `/api/v1/${NS}/services`, object: (name) => ({ apiVersion: 'v1', kind: 'Service', metadata: meta(name), spec: { selector: { app: 'x' }, ports: [{ port: 80, protocol: 'TCP' }] } }) },
  { path: `/api/v1/${NS}/serviceaccounts`, object: (name) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(name) }) },
  {
    path: `/apis/apps/v1/${NS}/deployments`,
    object: (name) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta(name), spec: { replicas: 0, selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: podSpec } } }),
  },
  {
    path: `/apis/batch/v1/${NS}/jobs`,
    object: (name) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: meta(name), spec: { suspend: true, template: { spec: { ...podSpec, restartPolicy: 'Never' } } } }),
  },
  {
    path: `/apis/${GROUP_RBAC}/v1/${NS}/roles`,
    object: (name) => ({ apiVersion: `${GROUP_RBAC}/v1`, kind: 'Role', metadata: meta(name), rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }),
  },
  {
    path: `/apis/rbac.authorization.k8s.io/v1/${NS}/rolebindings`,
    object: (name) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta(name), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'fz-0' }, subjects: [{ kind: 'User', name: 'u' }] }),
  },
];

/** The collections to create EXISTING in before the run, with their object. */
export const seedObjects = (): Array<{ path: string; body: Record<string, unknown> }> =>
  KINDS.flatMap((k) => EXISTING.map((name) => ({ path: k.path, body: k.object(name) })));

const OTHER_COLLECTIONS = ['/api/v1/configmaps', '/api/v1/pods', '/api/v1/namespaces', '/api/v1/nodes', '/apis/apps/v1/deployments',
  `/api/v1/namespaces/${FUZZ_NAMESPACE}/events`, '/apis/coordination.k8s.io/v1/namespaces/fuzz/leases', '/apis/storage.k8s.io/v1/storageclasses',
  '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', '/apis/authentication.k8s.io/v1/tokenreviews', '/apis/authentication.k8s.io/v1/selfsubjectreviews'];

const SUBRESOURCES = ['status', 'scale', 'log', 'exec', 'attach', 'binding', 'eviction', 'token', 'finalize', 'proxy', 'ephemeralcontainers',
  'resize', 'approval', 'portforward', 'x', ''];

const METHODS = ['GET', 'GET', 'HEAD', 'POST', 'POST', 'PUT', 'PUT', 'PATCH', 'PATCH', 'PATCH', 'DELETE', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'get'];

/** Percent-encodes the UTF-8 bytes of text (lone surrogates included), leaving unreserved characters. */
function encode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A path segment as a client might send it: encoded, half-encoded, with a broken escape, or raw Latin-1. */
function segment(rng: Rng): string {
  const text = rng.junk(30);
  switch (rng.int(6)) {
    case 0: return `${encode(text)}%${rng.pick(['', 'Z', 'ZZ', 'E0', 'C3%28', 'F0%9F', '0', '2'])}`;
    case 1: return rng.pick(['.', '..', '%2e', '%2E%2E', '%00', 'a%00b', '%2F', 'a%2Fb', '%25', '*', '~', 'a;b', '%u0041', '%C0%AF', '%EF%BF%BF', '%ED%A0%80']);
    case 2: return Buffer.from(text.replace(/[^\u0021-\u00ff]/g, ''), 'latin1').toString('latin1').replace(/[?#]/g, '') || 'x';
    default: return encode(text) || 'y';
  }
}

function objectName(rng: Rng): string {
  return rng.chance(0.5) ? rng.pick(EXISTING) : rng.chance(0.5) ? segment(rng) : `fz-${rng.int(1000)}`;
}

/** A path into the API, an odd one as often as not. */
function path(rng: Rng): string {
  const kind = rng.pick(KINDS);
  const collection = rng.chance(0.8) ? kind.path : rng.pick(OTHER_COLLECTIONS);
  switch (rng.int(14)) {
    case 0: case 1: case 2: return collection;
    case 3: case 4: case 5: return `${collection}/${objectName(rng)}`;
    case 6: return `${collection}/${objectName(rng)}/${rng.chance(0.7) ? rng.pick(SUBRESOURCES) : segment(rng)}`;
    case 7: return `/apis/${segment(rng)}/${rng.pick(['v1', 'v1beta1', segment(rng)])}/${rng.chance(0.5) ? `${NS}/` : ''}${segment(rng)}`;
    case 8: return `/${rng.pick(['livez', 'readyz', 'healthz'])}/${rng.chance(0.5) ? segment(rng) : rng.pick(['ping', 'log', 'etcd', '%ZZ', '%E0', 'poststarthook/%'])}`;
    case 9: return rng.pick(['/api', '/apis', '/api/v1', '/api/v2', '/apis/apps', '/apis/apps/v9', '/version', '/openapi/v2', '/openapi/v3',
      '/openapi/v3/apis/apps/v1', '/metrics', '/.well-known/openid-configuration', '/openid/v1/jwks', '/', '//', '/apis//v1', '/api/v1/namespaces//configmaps'])
      + (rng.chance(0.5) ? `/${segment(rng)}` : '');
    case 10: return collection.replace(/\/v1\//, rng.pick(['/v1/../v1/', '/./v1/', '/v1//', '/%76%31/', '/V1/']));
    case 11: return `${collection}/${objectName(rng)}/${segment(rng)}/${segment(rng)}`;
    case 12: return `/api/v1/namespaces/${segment(rng)}/${rng.pick(['configmaps', 'pods', segment(rng)])}${rng.chance(0.5) ? `/${objectName(rng)}` : ''}`;
    default: return `/${segment(rng)}`;
  }
}

const LABEL_SELECTORS = ['a', '!a', 'a=b', 'a==b', 'a!=b', 'a in (b,c)', 'a notin (b)', 'a in (', 'a in ()', 'a=', '=b', 'a=b=c', ',',
  'a,,b', 'a b', 'a>1', 'a<x', 'a=b,c!=d,!e', '(', ')', 'a in (b c)', 'x/y/z=1', 'A'.repeat(70) + '=1', 'a=' + 'b'.repeat(70)];
const FIELD_SELECTORS = ['metadata.name=fz-0', 'metadata.name!=x', 'metadata.namespace==fuzz', 'spec.nodeName=n', 'status.phase=Running',
  'metadata.name', 'metadata.name=', '=x', 'metadata.name in (a)', 'a.b.c=d', 'metadata.name=a,b', 'metadata.labels.x=y', ',', '\\=x', 'metadata.name=\\'];

/** A value for a query parameter: a plausible one, a number out of range, or junk. */
function queryValue(rng: Rng, name: string, continueTokens: string[]): string {
  const r = rng.next();
  if (r < 0.3) return rng.number();
  if (r < 0.5) return rng.junk(20);
  switch (name) {
    case 'labelSelector': return rng.pick(LABEL_SELECTORS);
    case 'fieldSelector': return rng.pick(FIELD_SELECTORS);
    case 'continue': return rng.chance(0.6) ? rng.pick(continueTokens) : rng.mutateText(rng.pick(continueTokens));
    case 'resourceVersionMatch': return rng.pick(['Exact', 'NotOlderThan', 'exact', '', 'Any']);
    case 'resourceVersion': return rng.pick(['0', '1', '5', '', '999999999', 'abc']);
    case 'fieldValidation': return rng.pick(['Strict', 'Warn', 'Ignore', 'strict', '']);
    case 'dryRun': return rng.pick(['All', '', 'all', 'None']);
    case 'propagationPolicy': return rng.pick(['Orphan', 'Background', 'Foreground', 'orphan']);
    case 'fieldManager': return rng.pick(['m', 'x'.repeat(200), '', 'kubectl-client-side-apply']);
    case 'watch': case 'allowWatchBookmarks': case 'sendInitialEvents': case 'pretty': case 'force': case 'orphanDependents':
      return rng.pick(['true', 'false', '1', '0', 'yes', '']);
    case 'includeObject': return rng.pick(['None', 'Metadata', 'Object', 'All']);
    default: return rng.number();
  }
}

const QUERY_PARAMS = ['limit', 'continue', 'resourceVersion', 'resourceVersionMatch', 'timeoutSeconds', 'fieldManager', 'fieldValidation',
  'dryRun', 'propagationPolicy', 'gracePeriodSeconds', 'watch', 'allowWatchBookmarks', 'sendInitialEvents', 'labelSelector', 'fieldSelector',
  'pretty', 'force', 'orphanDependents', 'includeObject', 'exclude', 'verbose', 'container', 'follow', 'tailLines', 'sinceSeconds'];

function queryString(rng: Rng, continueTokens: string[]): string {
  const parts: string[] = [];
  for (let i = 0, n = 1 + rng.int(4); i < n; i++) {
    const name = rng.chance(0.9) ? rng.pick(QUERY_PARAMS) : segment(rng);
    const raw = rng.chance(0.1);
    parts.push(`${name}=${raw ? segment(rng) : encode(queryValue(rng, name, continueTokens))}`);
  }
  if (rng.chance(0.05)) parts.push(rng.pick(['&', '=', '==', '%', 'a', 'limit', '&&&']));
  return parts.join('&');
}

const ACCEPTS = ['application/json', 'application/yaml', UPSTREAM_MEDIA_PROTOBUF, MEDIA_PROTOBUF, 'application/cbor', '*/*', 'text/html',
  'application/json;as=Table;g=meta.k8s.io;v=v1', 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
  `${UPSTREAM_MEDIA_PROTOBUF};as=Table;g=meta.k8s.io;v=v1`, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
  'application/json;as=PartialObjectMetadata;g=meta.svc.io;v=v1', 'application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io',
  'application/json;q=abc', 'application/json;q=0', ';;;', ',', 'application/*', 'image/png', 'application/json;as=Table;g=x;v=v9',
  'application/yaml;as=Table;g=meta.k8s.io;v=v1', '*/*;q=0.1, application/xml', 'application/json;stream=watch'];

export const CONTENT_TYPES = ['application/json', 'application/yaml', UPSTREAM_MEDIA_PROTOBUF, MEDIA_PROTOBUF, 'application/cbor',
  'application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml',
  'application/apply-patch+cbor'];
const ODD_CONTENT_TYPES = ['text/plain', 'application/json; charset=utf-16', 'application/json;charset=utf-8', 'application/x-yaml',
  'text/yaml', 'multipart/form-data; boundary=x', '', ';', 'application/', 'APPLICATION/JSON', 'application/json, application/yaml'];

/** A header value the client can send: Latin-1 bytes of junk text, without the controls no HTTP parser lets through. */
function headerText(rng: Rng, maxLength = 40): string {
  return Buffer.from(rng.junk(maxLength), 'utf8').toString('latin1').replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, '');
}

/** A header name: token characters, with percent escapes (valid and not). */
function headerName(rng: Rng): string {
  const tokens = ['a', 'key', 'Scopes', 'x.y', 'a%2Fb', '%ZZ', '%E0', '%', '%25', '%C3%A9', 'a%00b', 'UPPER', '~', "'", '*'];
  return Array.from({ length: 1 + rng.int(3) }, () => rng.pick(tokens)).join('');
}

function headers(rng: Rng, req: FuzzRequest): void {
  const h = req.headers;
  if (rng.chance(0.3)) h.Accept = rng.chance(0.8) ? rng.pick(ACCEPTS) : headerText(rng);
  if (rng.chance(0.1)) h.Authorization = rng.pick(['Bearer ', 'Basic ', 'bearer ', 'Bearer  ', 'Negotiate ', '']) + headerText(rng, 200);
  if (rng.chance(0.12)) {
    h['Impersonate-User'] = rng.pick(['', 'alice', 'system:anonymous', 'system:serviceaccount:fuzz:x', 'system:serviceaccount:', headerText(rng)]);
    if (rng.chance(0.5)) h['Impersonate-Group'] = rng.pick(['system:masters', 'g', headerText(rng)]);
    if (rng.chance(0.3)) h['Impersonate-Uid'] = headerText(rng);
  }
  if (rng.chance(0.08)) h[`Impersonate-Extra-${headerName(rng)}`] = headerText(rng);
  if (rng.chance(0.05)) h[rng.pick(['Content-Encoding', 'Accept-Encoding', 'X-Remote-User', 'Audit-ID', 'If-None-Match', 'Range', 'Expect', 'Transfer-Encoding'])]
    = rng.pick(['gzip', 'deflate', 'br', 'identity', 'bytes=0-1', 'x', '*', headerText(rng)]);
}

/** Changes one place of a value: a different type, a nasty key or string, a deletion, a deep or long value. */
function mutateValue(rng: Rng, value: unknown, depth = 0): unknown {
  if (depth > 6 || rng.chance(0.25) || value === null || typeof value !== 'object') return randomValue(rng);
  const copy: any = Array.isArray(value) ? [...value] : { ...value };
  const keys = Object.keys(copy);
  const r = rng.next();
  if (r < 0.15 || keys.length === 0) copy[rng.chance(0.5) ? rng.junk(20) : `bad${rng.pick(['\u2028', '\u0000', '"', '\\', '\n', '\u00e9', '\ud800'])}field`] = randomValue(rng);
  else if (r < 0.3) delete copy[rng.pick(keys)];
  else { const k = rng.pick(keys); copy[k] = mutateValue(rng, copy[k], depth + 1); }
  return copy;
}

function randomValue(rng: Rng): unknown {
  switch (rng.int(12)) {
    case 0: return null;
    case 1: return rng.chance(0.5);
    case 2: return rng.pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 2, 2 ** 63, Number.MIN_VALUE, 4294967296]);
    case 3: return rng.junk(40);
    case 4: return 'x'.repeat(rng.pick([64, 254, 256, 1024, 70_000]));
    case 5: return [];
    case 6: return {};
    case 7: return [randomValue(rng), randomValue(rng)];
    case 8: return { [rng.junk(10)]: randomValue(rng) };
    case 9: return rng.pick(['2024-01-01T00:00:00Z', 'not-a-date', '1Gi', '-1', '100m', '1e9999', 'TCP', 'Always', '', ' ']);
    case 10: { let v: unknown = 1; for (let i = 0, n = 5 + rng.int(60); i < n; i++) v = rng.chance(0.5) ? [v] : { a: v }; return v; }
    default: return rng.number();
  }
}

/** A body of the given media type from a value, possibly broken afterwards as text or bytes. */
function serialize(rng: Rng, value: unknown, mediaType: string): Buffer {
  const type = mediaType.split(';')[0].trim().toLowerCase();
  let out: Buffer;
  if (type === UPSTREAM_MEDIA_PROTOBUF || type === MEDIA_PROTOBUF) {
    out = rng.chance(0.5) ? Buffer.concat([Buffer.from('k8s\0', 'latin1'), rng.bytes(rng.length(200))]) : safely(() => encodeEnvelope(value as any), rng);
  } else if (type.includes('cbor')) {
    out = rng.chance(0.3) ? rng.bytes(rng.length(200)) : safely(() => encodeCbor(value), rng);
  } else if (type.includes('yaml')) {
    out = Buffer.from(rng.chance(0.5) ? yamlish(value) : rng.pick(YAML_BREAKERS), 'utf8');
  } else {
    out = Buffer.from(JSON.stringify(value) ?? 'null', 'utf8');
  }
  if (rng.chance(0.35)) out = mutateBytes(rng, out);
  return out;
}

const YAML_BREAKERS = ['a: b: c', '- a\nb: c', '{', '[', 'a: *x', '&a [*a]', '!!binary x', 'a: !!int x', '? [a]\n: b', '%YAML 9.9\n---\na: 1',
  'a:\n\t- b', '---\n---\n', '"\\x', '\'', 'metadata: {name: [}', 'a: 1\na: 2', '@', '`', '<<: 5', 'kind: ConfigMap\nmetadata:\n  name: 5'];

/** YAML from a value: JSON is YAML, in the flow style YAML parsers read too. */
function yamlish(value: unknown): string {
  return JSON.stringify(value, null, 1) ?? 'null';
}

function safely(make: () => Buffer, rng: Rng): Buffer {
  try {
    return make();
  } catch {
    return rng.bytes(rng.length(100));
  }
}

function mutateBytes(rng: Rng, bytes: Buffer): Buffer {
  const text = rng.mutateText(bytes.toString('latin1'));
  return Buffer.from(text, 'latin1');
}

function jsonPatch(rng: Rng): unknown {
  const ops = ['add', 'remove', 'replace', 'move', 'copy', 'test', 'x', ''];
  const paths = ['/metadata/labels/a', '/data/a', '/spec', '/metadata/name', '/-', '', '/', '~', '/a~2b', '/data/~1', '/spec/containers/99', '/metadata/labels/a\u2028b'];
  return Array.from({ length: 1 + rng.int(3) }, () => {
    const op: Record<string, unknown> = { op: rng.pick(ops), path: rng.chance(0.8) ? rng.pick(paths) : rng.junk(10) };
    if (rng.chance(0.7)) op.value = randomValue(rng);
    if (rng.chance(0.3)) op.from = rng.pick(paths);
    return rng.chance(0.1) ? randomValue(rng) : op;
  });
}

type Kind = typeof KINDS[number];

/** Valid requests on sub-resources and review kinds, each with its body (undefined for a GET). */
const SPECIAL: Array<{ method: string; path: (name: string) => string; body?: (name: string) => unknown }> = [
  { method: 'GET', path: (n) => `/apis/apps/v1/${NS}/deployments/${n}/scale` },
  { method: 'PUT', path: (n) => `/apis/apps/v1/${NS}/deployments/${n}/scale`, body: (n) => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: n, namespace: FUZZ_NAMESPACE }, spec: { replicas: 0 } }) },
  { method: 'PUT', path: (n) => `/api/v1/${NS}/pods/${n}/status`, body: (n) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: n, namespace: FUZZ_NAMESPACE }, spec: podSpec, status: { phase: 'Pending' } }) },
  { method: 'POST', path: (n) => `/api/v1/${NS}/pods/${n}/eviction?dryRun=All`, body: (n) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: n, namespace: FUZZ_NAMESPACE } }) },
  { method: 'POST', path: (n) => `/api/v1/${NS}/pods/${n}/binding?dryRun=All`, body: (n) => ({ apiVersion: 'v1', kind: 'Binding', metadata: { name: n }, target: { kind: 'Node', name: 'node-1' } }) },
  { method: 'GET', path: (n) => `/api/v1/${NS}/pods/${n}/log` },
  { method: 'POST', path: (n) => `/api/v1/${NS}/serviceaccounts/${n}/token`, body: () => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['x'], expirationSeconds: 600 } }) },
  { method: 'POST', path: () => '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', body: () => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods', namespace: FUZZ_NAMESPACE } } }) },
  { method: 'POST', path: () => `/apis/authorization.k8s.io/v1/${NS}/localsubjectaccessreviews`, body: () => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: { namespace: FUZZ_NAMESPACE }, spec: { user: 'u', resourceAttributes: { verb: 'get', resource: 'pods', namespace: FUZZ_NAMESPACE } } }) },
  { method: 'POST', path: () => '/apis/authentication.k8s.io/v1/tokenreviews', body: () => ({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'abc', audiences: ['x'] } }) },
  { method: 'POST', path: () => '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', body: () => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: FUZZ_NAMESPACE } }) },
  { method: 'PUT', path: () => `/api/v1/namespaces/${FUZZ_NAMESPACE}/finalize`, body: () => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: FUZZ_NAMESPACE }, spec: { finalizers: ['kubernetes'] } }) },
];

/** A valid request on one kind: a list, get, watch, create, update, patch of each type, a dry-run delete, or one on a sub-resource or review. */
function validRequest(rng: Rng, kind: Kind): FuzzRequest {
  const name = rng.pick(EXISTING);
  const object = kind.path + '/' + name;
  const req: FuzzRequest = { method: 'GET', path: kind.path, headers: {}, anonymous: false };
  const json = (value: unknown, type = 'application/json') => { req.body = Buffer.from(JSON.stringify(value)); req.headers['Content-Type'] = type; };
  switch (rng.int(13)) {
    case 0: req.path = `${kind.path}?limit=1`; break;
    case 1: req.path = object; break;
    case 2: req.path = `${kind.path}?watch=1&timeoutSeconds=1`; break;
    case 3: Object.assign(req, { method: 'POST', path: `${kind.path}?dryRun=All` }); json(kind.object(`fz-new-${rng.int(1000)}`)); break;
    case 4: Object.assign(req, { method: 'PUT', path: object }); json(kind.object(name)); break;
    case 5: Object.assign(req, { method: 'PATCH', path: object }); json({ metadata: { labels: { x: 'y' } } }, 'application/merge-patch+json'); break;
    case 6: Object.assign(req, { method: 'PATCH', path: object }); json({ metadata: { labels: { x: 'z' } } }, 'application/strategic-merge-patch+json'); break;
    case 7: Object.assign(req, { method: 'PATCH', path: object }); json([{ op: 'add', path: '/metadata/labels/x', value: 'w' }], 'application/json-patch+json'); break;
    case 8: Object.assign(req, { method: 'PATCH', path: `${object}?fieldManager=fuzz&force=true` }); json(kind.object(name), 'application/apply-patch+yaml'); break;
    case 9: Object.assign(req, { method: 'DELETE', path: `${object}?dryRun=All` }); break;
    default: {
      const special = rng.pick(SPECIAL);
      Object.assign(req, { method: special.method, path: special.path(name) });
      if (special.body) json(special.body(name));
    }
  }
  return req;
}

const isPatchType = (type: string | undefined) => Boolean(type && CONTENT_TYPES.slice(5).includes(type));

/** The body decoded again for a value mutation (it is JSON until a mutation changes that). */
function bodyValue(req: FuzzRequest, kind: Kind): unknown {
  try {
    return JSON.parse(req.body?.toString('utf8') ?? '');
  } catch {
    return kind.object(EXISTING[0]);
  }
}

type Mutation = (rng: Rng, req: FuzzRequest, kind: Kind, continueTokens: string[]) => void;

/** The ways one request goes bad; each leaves the rest of it valid. */
const MUTATIONS: Array<[number, Mutation]> = [
  [3, (rng, req) => { req.path = path(rng) + (req.path.includes('?') ? req.path.slice(req.path.indexOf('?')) : ''); }],
  [2, (rng, req) => { const [p, q] = req.path.split('?'); req.path = `${p.replace(/[^/]+$/, segment(rng))}${q ? `?${q}` : ''}`; }],
  [1, (rng, req) => { const [p, q] = req.path.split('?'); req.path = `${p}/${rng.chance(0.7) ? rng.pick(SUBRESOURCES) : segment(rng)}${q ? `?${q}` : ''}`; }],
  [4, (rng, req, _k, tokens) => { req.path += `${req.path.includes('?') ? '&' : '?'}${queryString(rng, tokens)}`; }],
  [3, (rng, req) => headers(rng, req)],
  [5, (rng, req, kind) => {
    const type = req.headers['Content-Type'] ?? rng.pick(CONTENT_TYPES);
    req.headers['Content-Type'] = type;
    const value = type === 'application/json-patch+json' && rng.chance(0.6) ? jsonPatch(rng) : mutateValue(rng, bodyValue(req, kind));
    req.body = serialize(rng, value, type);
  }],
  [2, (rng, req) => { req.body = Buffer.from(rng.mutateText(req.body?.toString('utf8') ?? '{}'), 'utf8'); }],
  [3, (rng, req, kind) => {
    const type = rng.chance(0.85) ? rng.pick(CONTENT_TYPES) : rng.pick(ODD_CONTENT_TYPES);
    req.headers['Content-Type'] = type;
    req.body = rng.chance(0.5) ? rng.bytes(rng.length(2048)) : serialize(rng, mutateValue(rng, bodyValue(req, kind)), type);
  }],
  [1, (rng, req) => {
    req.method = rng.pick(METHODS);
    if (['POST', 'PUT', 'PATCH'].includes(req.method) && !req.body) req.body = Buffer.from(rng.chance(0.5) ? '{}' : rng.junk(30));
  }],
  [1, (rng, req) => {
    if (req.method !== 'DELETE') req.method = 'DELETE';
    const type = rng.pick([...CONTENT_TYPES, ...ODD_CONTENT_TYPES]);
    req.headers['Content-Type'] = type;
    const options = { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, propagationPolicy: 'Background', preconditions: { uid: 'x' }, dryRun: ['All'] };
    req.body = rng.chance(0.4) ? rng.bytes(rng.length(512)) : serialize(rng, mutateValue(rng, options), type);
  }],
  [1, (rng, req) => { req.anonymous = true; }],
];
const WEIGHTS = MUTATIONS.reduce((sum, [w]) => sum + w, 0);

function pickMutation(rng: Rng): Mutation {
  let r = rng.int(WEIGHTS);
  for (const [w, m] of MUTATIONS) {
    if (r < w) return m;
    r -= w;
  }
  return MUTATIONS[0][1];
}

/** One bad request, drawn from rng alone: the same seed always draws the same sequence. A valid request
 * with one bad part most of the time, with several now and then. */
export function badRequest(rng: Rng, continueTokens: string[]): FuzzRequest {
  const kind = rng.pick(KINDS);
  const req = validRequest(rng, kind);
  const n = rng.chance(0.7) ? 1 : 2 + rng.int(3);
  for (let i = 0; i < n; i++) pickMutation(rng)(rng, req, kind, continueTokens);
  if (isPatchType(req.headers['Content-Type']) && req.method !== 'PATCH' && rng.chance(0.5)) req.headers['Content-Type'] = 'application/json';
  return req;
}

/** The request as one line that can be read and sent again. */
export function describe(req: FuzzRequest): string {
  const text = req.body?.toString('utf8');
  const printable = text !== undefined && Buffer.from(text, 'utf8').equals(req.body!);
  return JSON.stringify({
    method: req.method, path: req.path, headers: req.headers, anonymous: req.anonymous || undefined,
    ...(req.body ? (printable ? { body: text!.slice(0, 2000) } : { bodyBase64: req.body.toString('base64').slice(0, 2700) }) : {}),
  });
}
