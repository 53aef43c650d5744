// The non-resource documents of the API: /version, legacy and aggregated discovery,
// OpenAPI v2 and v3. Each document is built and serialized once (again after the
// registry's kinds change, as CustomResourceDefinitions come and go), and answered
// with an ETag (304 when the client already holds it).
import type Koa from 'koa';
import { createHash } from 'node:crypto';
import type { Registry } from '../internal/registry/index.js';
import { GROUP_APIDISCOVERY, UPSTREAM_GROUP_APIDISCOVERY } from '../internal/names/index.js';
import {
  aggregatedDiscovery, apiGroupDoc, apiGroupList, apiResourceList, apiVersions, groupView, groupViews, versionInfo,
} from './discovery.js';
import { openapiV2, openapiV3Document, openapiV3Index, parseV3Path, upstreamV3Document } from './openapi.js';
import { encodeJson, parseAccept } from './negotiation.js';
import { writeBody } from './respond.js';

/** As the Koa type of JSON documents has always been written. */
const JSON_TYPE = 'application/json; charset=utf-8';

interface Serialized {
  body: Buffer;
  etag: string;
  type: string;
}

export class Documents {
  private readonly cache = new Map<string, Serialized>();
  private readonly built = new Map<string, unknown>();

  /** `upstreamNames`: renamed groups are listed under their upstream spelling too. */
  constructor(private readonly registry: Registry, private readonly upstreamNames: boolean) {
    registry.onChange(() => {
      this.cache.clear();
      this.built.clear();
    });
  }

  /** Answers a GET of a non-resource path; false when no document lives there. */
  serve(ctx: Koa.Context, serverAddress: string): boolean {
    const path = ctx.path;
    const aggregated = aggregatedGroup(ctx);
    if (path === '/version' || path === '/version/') { writeBody(ctx, 200, versionInfo()); return true; }
    if (!aggregated && (path === '/api' || path === '/api/')) { writeBody(ctx, 200, apiVersions(serverAddress)); return true; }
    // One key per document however the path is written (`/apis/`, `//apis`).
    const canonical = `/${path.split('/').filter(Boolean).join('/')}`;
    const key = aggregated ? `aggregated ${aggregated} ${canonical}` : canonical;
    const doc = this.serialized(key, () => (aggregated ? this.aggregated(canonical, aggregated) : this.build(canonical)));
    if (!doc) return false;
    ctx.set('ETag', doc.etag);
    ctx.status = 200;
    if (ctx.get('If-None-Match') === doc.etag) { ctx.status = 304; return true; }
    ctx.body = doc.body;
    ctx.set('Content-Type', doc.type);
    return true;
  }

  private serialized(key: string, make: () => { body: unknown; type?: string } | undefined): Serialized | undefined {
    const known = this.cache.get(key);
    if (known) return known;
    // Only documents that exist are kept: the keys of misses are whatever paths clients send.
    const doc = make();
    if (!doc) return undefined;
    // Discovery is written by the platform's object encoder (a final newline), OpenAPI as marshalled bytes.
    const body = Buffer.from(key.startsWith('/openapi') ? JSON.stringify(doc.body) : encodeJson(doc.body), 'utf8');
    const serialized = { body, type: doc.type ?? JSON_TYPE, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 32).toUpperCase()}"` };
    this.cache.set(key, serialized);
    return serialized;
  }

  private aggregated(path: string, group: string) {
    return {
      body: aggregatedDiscovery(this.registry, path === '/api', group, this.upstreamNames),
      type: `application/json;g=${group};v=v2;as=APIGroupDiscoveryList`,
    };
  }

  private build(path: string): { body: unknown } | undefined {
    const parts = path.split('/').filter(Boolean);
    const wrap = (body: unknown) => (body === undefined ? undefined : { body });
    if (parts[0] === 'api' && parts.length === 2) return wrap(apiResourceList(this.registry, groupView(this.registry, '', false)!, parts[1]));
    if (parts[0] === 'apis' && parts.length === 1) return wrap(apiGroupList(this.registry, this.upstreamNames));
    if (parts[0] === 'apis' && (parts.length === 2 || parts.length === 3)) {
      const view = groupView(this.registry, parts[1], this.upstreamNames);
      if (!view) return undefined;
      return wrap(parts.length === 2 ? apiGroupDoc(this.registry, view) : apiResourceList(this.registry, view, parts[2]));
    }
    if (parts[0] === 'openapi' && parts[1] === 'v2' && parts.length === 2) return wrap(openapiV2(this.registry, this.upstreamNames));
    if (parts[0] === 'openapi' && parts[1] === 'v3' && parts.length === 2) {
      return wrap(openapiV3Index(this.registry, groupViews(this.registry, this.upstreamNames), (g, v) => this.v3(g, v)));
    }
    const gv = parts[0] === 'openapi' && parts[1] === 'v3' ? parseV3Path(path) : undefined;
    return gv && wrap(this.v3(gv.group, gv.version));
  }

  /** The v3 document of a group version by the name asked for; an alias' is derived from ours. */
  private v3(group: string, version: string): unknown {
    const key = `${group}/${version}`;
    if (this.built.has(key)) return this.built.get(key);
    const view = groupView(this.registry, group, this.upstreamNames);
    const own = view && openapiV3Document(this.registry, view.own, version);
    const doc = view?.alias && own ? upstreamV3Document(own) : own;
    if (doc) this.built.set(key, doc);
    return doc;
  }
}

/** `/api` or `/apis` asked for in the aggregated form: the discovery group the client named. */
function aggregatedGroup(ctx: Koa.Context): string | undefined {
  const trimmed = ctx.path.replace(/\/$/, '');
  if (trimmed !== '/api' && trimmed !== '/apis') return undefined;
  for (const r of parseAccept(ctx.get('Accept') || undefined)) {
    if (r.type !== 'application/json' && r.type !== '*/*') continue;
    if (r.params.as === 'APIGroupDiscoveryList' && r.params.v === 'v2'
      && (r.params.g === GROUP_APIDISCOVERY || r.params.g === UPSTREAM_GROUP_APIDISCOVERY)) return r.params.g;
    if (!r.params.as) return undefined;
  }
  return undefined;
}
