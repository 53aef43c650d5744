// OpenAPI documents generated from the registry: /openapi/v2 (Swagger 2.0) and
// /openapi/v3 with one document per group version. Schemas come from the shared
// definitions; each `x-svc-*` marker is also given in the upstream spelling that
// kubectl reads (`x-kubernetes-group-version-kind`, patch markers). The upstream
// spelling of a renamed group is derived from ours: the same paths and schemas, its
// name in path prefixes and group-version-kind markers. Kinds of CustomResourceDefinitions
// publish the definitions and paths their CRD version describes.
import { createHash } from 'node:crypto';
import type { KindDef, Registry } from '../internal/registry/index.js';
import { definitions, definitionNameFor, type Schema } from '../internal/registry/openapi.js';
import { extension, isRenamedGroup, upstreamGroup } from '../internal/names/index.js';
import { SERVED_RELEASE, type GroupView } from './discovery.js';
import { customDefinitions, publishedSchema } from '../internal/apiextensions/openapi.js';
import { customPaths, pathDefinitions } from '../internal/apiextensions/openapipaths.js';

const OWN_PREFIX = extension('');
const UPSTREAM_PREFIX = 'x-kubernetes-';
const GVK_MARKERS = new Set([`${OWN_PREFIX}group-version-kind`, `${UPSTREAM_PREFIX}group-version-kind`]);
const V2_REF = '#/definitions/';
const V3_REF = '#/components/schemas/';

/** A copy of a schema with upstream-spelled markers beside ours and refs in the given style. */
function exportSchema(schema: unknown, refPrefix: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => exportSchema(s, refPrefix));
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$ref' && typeof v === 'string') { out.$ref = refPrefix + v.slice(V2_REF.length); continue; }
    const value = exportSchema(v, refPrefix);
    out[k] = value;
    if (k.startsWith(OWN_PREFIX)) out[UPSTREAM_PREFIX + k.slice(OWN_PREFIX.length)] = value;
  }
  return out;
}

/** The names of the definitions a set of definitions (and schemas not among them) refers to, transitively. */
function reachable(roots: string[], schemas: unknown[] = []): Set<string> {
  const all = definitions();
  const seen = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') {
        const name = v.slice(V2_REF.length);
        if (!seen.has(name) && all[name]) { seen.add(name); visit(all[name]); }
      } else visit(v);
    }
  };
  for (const r of roots) if (all[r]) { seen.add(r); visit(all[r]); }
  schemas.forEach(visit);
  return seen;
}

const gvkOf = (k: KindDef) => ({ group: k.group, version: k.version, kind: k.kind });

/** A kind a CustomResourceDefinition serves: the definitions (its schema() is the published one) and paths of its version. */
interface CustomKind {
  definitions(v2: boolean): Record<string, Schema>;
  paths(v3: boolean): Record<string, unknown>;
  /** Definitions its paths refer to. */
  refs: string[];
}

function customKind(k: KindDef): CustomKind | undefined {
  if (!k.custom) return undefined;
  const names = { ...gvkOf(k), listKind: k.listKind ?? `${k.kind}List`, plural: k.resource };
  const schema = k.schema() ?? publishedSchema(names, undefined);
  const subresources = { status: Boolean(k.subresources?.includes('status')), scale: Boolean(k.subresources?.includes('scale')) };
  return {
    definitions: (v2) => customDefinitions(names, schema, v2),
    paths: (v3) => exportSchema(customPaths(names, k.namespaced, subresources, v3, V2_REF), v3 ? V3_REF : V2_REF) as Record<string, unknown>,
    refs: pathDefinitions(subresources.scale),
  };
}

/** The paths of a kind, built-in or custom. */
const kindPaths = (k: KindDef, v3: boolean): Record<string, unknown> =>
  customKind(k)?.paths(v3) ?? pathsOf(k, (n) => ({ $ref: (v3 ? V3_REF : V2_REF) + n }), v3);

const param = (name: string, type = 'string') => ({ name, in: 'query', schema: { type }, uniqueItems: true });
const WRITE_PARAMS = [param('dryRun'), param('fieldManager'), param('fieldValidation')];

function pathsOf(k: KindDef, ref: (name: string) => unknown, v3: boolean): Record<string, unknown> {
  const prefix = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
  const collection = `${prefix}${k.namespaced ? '/namespaces/{namespace}' : ''}/${k.resource}`;
  const defName = definitionNameFor(gvkOf(k));
  const schema = defName ? ref(defName) : { type: 'object' };
  const gvk = { [`${UPSTREAM_PREFIX}group-version-kind`]: gvkOf(k), [`${OWN_PREFIX}group-version-kind`]: gvkOf(k) };
  const responses = { 200: { description: 'OK', ...(v3 ? { content: { 'application/json': { schema } } } : { schema }) } };
  /** One operation; `bodySchema` is the request body (v3) or the body parameter (v2). */
  const op = (action: string, params: unknown[], bodySchema?: unknown) => ({
    operationId: `${action}${k.kind}`, [`${UPSTREAM_PREFIX}action`]: action, ...gvk, responses,
    parameters: !v3 && bodySchema ? [...params, { name: 'body', in: 'body', required: true, schema: bodySchema }] : params,
    ...(v3 && bodySchema ? { requestBody: { content: { '*/*': { schema: bodySchema } } } } : {}),
  });
  return {
    [`${collection}/{name}`]: {
      get: op('get', []),
      put: op('put', WRITE_PARAMS, schema),
      patch: op('patch', [...WRITE_PARAMS, param('force', 'boolean')], { type: 'object' }),
      delete: op('delete', [param('dryRun')]),
    },
    [collection]: { get: op('list', []), post: op('post', WRITE_PARAMS, schema) },
  };
}

type Gvk = { group: string; version: string; kind: string };
type GvkMap = (gvk: Gvk) => Gvk[];

/** A copy of a document whose group-version-kind markers are mapped (markers are a kind's list or an operation's one). */
function mapMarkers(node: unknown, map: GvkMap): unknown {
  if (Array.isArray(node)) return node.map((n) => mapMarkers(n, map));
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => {
    if (!GVK_MARKERS.has(k)) return [k, mapMarkers(v, map)];
    return [k, Array.isArray(v) ? (v as Gvk[]).flatMap(map) : map(v as Gvk)[0]];
  }));
}

const toUpstream = (gvk: Gvk): Gvk[] => [{ ...gvk, group: upstreamGroup(gvk.group) }];
const withUpstream = (gvk: Gvk): Gvk[] => (isRenamedGroup(gvk.group) ? [gvk, ...toUpstream(gvk)] : [gvk]);

/** `/apis/<renamed group>/...` paths of a document under the upstream spelling, markers mapped. */
function upstreamPaths(paths: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [path, item] of Object.entries(paths)) {
    const group = path.split('/')[2];
    if (path.startsWith('/apis/') && isRenamedGroup(group)) out[`/apis/${upstreamGroup(group)}${path.slice(6 + group.length)}`] = mapMarkers(item, toUpstream);
  }
  return out;
}

/** The Swagger 2.0 document; with upstream names, the aliases' paths too and each renamed kind's schema
 * marked with both group-version-kinds (as upstream marks a schema served in several groups). */
export function openapiV2(registry: Registry, upstreamNames: boolean): unknown {
  const all = { ...definitions(), ...Object.assign({}, ...registry.all().map((k) => customKind(k)?.definitions(true))) as Record<string, Schema> };
  let defs: Record<string, unknown> = Object.fromEntries(Object.entries(all).map(([name, s]) => [name, exportSchema(s, V2_REF)]));
  let paths: Record<string, unknown> = Object.assign({}, ...registry.all().map((k) => kindPaths(k, false)));
  if (upstreamNames) {
    defs = mapMarkers(defs, withUpstream) as Record<string, unknown>;
    paths = { ...paths, ...upstreamPaths(paths) };
  }
  return { swagger: '2.0', info: { title: 'svc-apiserver', version: SERVED_RELEASE.gitVersion }, paths, definitions: defs };
}

const groupVersionPath = (group: string, version: string) => (group ? `apis/${group}/${version}` : `api/${version}`);

interface V3Document {
  openapi: string;
  info: unknown;
  paths: Record<string, unknown>;
  components: unknown;
}

/** The v3 document of one group version, or undefined when it is not served. */
export function openapiV3Document(registry: Registry, group: string, version: string): V3Document | undefined {
  const kinds = registry.inGroupVersion(group, version);
  if (kinds.length === 0) return undefined;
  const custom = kinds.map(customKind).filter((c): c is CustomKind => c !== undefined);
  const own: Record<string, Schema> = Object.assign({}, ...custom.map((c) => c.definitions(false)));
  const roots = [...kinds.map((k) => definitionNameFor(gvkOf(k))).filter((n): n is string => Boolean(n)), ...custom.flatMap((c) => c.refs)];
  const found = Object.fromEntries([...reachable(roots, Object.values(own))].map((n) => [n, definitions()[n]]));
  const schemas = Object.fromEntries(Object.entries({ ...found, ...own }).map(([n, s]) => [n, exportSchema(s, V3_REF) as Schema]));
  const paths = Object.assign({}, ...kinds.map((k) => kindPaths(k, true)));
  return { openapi: '3.0.0', info: { title: 'svc-apiserver', version: SERVED_RELEASE.gitVersion }, paths, components: { schemas } };
}

/** The v3 document of a renamed group version under its upstream name, from the document of ours. */
export function upstreamV3Document(own: V3Document): V3Document {
  return { ...own, paths: upstreamPaths(own.paths), components: mapMarkers(own.components, toUpstream) };
}

/** The v3 index: one entry per served group version, with a hash that changes with its content. */
export function openapiV3Index(registry: Registry, views: GroupView[], documentOf: (group: string, version: string) => unknown): unknown {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const view of views) {
    for (const version of registry.groups().get(view.own) ?? []) {
      const key = groupVersionPath(view.name, version);
      const hash = createHash('sha512').update(JSON.stringify(documentOf(view.name, version))).digest('hex').slice(0, 128).toUpperCase();
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${hash}` };
    }
  }
  return { paths };
}

/** Parses `/openapi/v3/api/v1` or `/openapi/v3/apis/{group}/{version}`. */
export function parseV3Path(path: string): { group: string; version: string } | undefined {
  const parts = path.split('/').filter(Boolean).slice(2);
  if (parts[0] === 'api' && parts.length === 2) return { group: '', version: parts[1] };
  if (parts[0] === 'apis' && parts.length === 3) return { group: parts[1], version: parts[2] };
  return undefined;
}

