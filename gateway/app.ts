// The gateway: an HTTPS Koa app that authenticates, authorizes and routes each
// request of the REST protocol to the other services.
import Koa from 'koa';
import { promisify } from 'node:util';
import { createGzip, gzip } from 'node:zlib';
import { Readable, pipeline } from 'node:stream';
import type { FeatureGates } from '../internal/config/features.js';
import { SpanKind, SpanStatusCode, beginSpan, extractContext, runIn } from '../internal/tracing/index.js';
import { StatusError, internalError, methodNotAllowed } from '../internal/apimachinery/status.js';
import type { KindDef, Registry } from '../internal/registry/index.js';
import { checkHealth } from '../internal/rpc/index.js';
import type { Backends, UserInfo } from './backends.js';
import type { ResourceRequest } from './context.js';
import { requestInfo, withoutUpstreamNames, type RequestInfo } from './requestinfo.js';
import { authorizeRequest } from './authorization.js';
import { authenticate } from './authentication.js';
import { COMPRESSION_THRESHOLD, plainFormatOf, presentedStatus, writeBody } from './respond.js';
import { Documents } from './documents.js';
import { serveHealth, type Check } from './health.js';
import { GatewayMetrics } from './metrics.js';
import { Objects } from './objects.js';
import * as verbs from './handlers.js';
import * as reads from './reads.js';
import { patchObject } from './patch.js';
import { serveSubresource } from './subresources.js';
import { serveWatch, type WatchOptions } from './watch.js';
import type { WatchHub } from './hub.js';
import type { Allocator } from './serviceallocator.js';
import { IssuerDiscovery } from './issuerdiscovery.js';
import { InflightLimiter, type InflightLimits } from './inflight.js';
import { requestDeadline } from './timeout.js';
import { requestScope } from './stray.js';
import { headerValue } from './headers.js';

export interface GatewayDeps {
  registry: Registry;
  backends: Backends;
  hub: WatchHub;
  /** The allocator of each kind whose writes draw from shared pools. */
  allocators: ReadonlyMap<KindDef, Allocator>;
  watch: WatchOptions;
  /** Named checks of post-start work (bootstrap); they fail until it is done. */
  startupChecks: Check[];
  isShuttingDown: () => boolean;
  features: FeatureGates;
  /** While the process is younger than this, unfinished start-up work does not fail /livez. */
  livezGracePeriodMs: number;
  /** `--max-requests-inflight` and `--max-mutating-requests-inflight`. */
  inflight: InflightLimits;
  /** `--request-timeout` in milliseconds (0: none). */
  requestTimeoutMs: number;
  /** `--serve-upstream-group-names`: renamed groups are served under their upstream spelling too. */
  upstreamGroupNames: boolean;
}

type State = { info: RequestInfo; user: UserInfo; cbor: boolean };
const gzipAsync = promisify(gzip);

/** Writes any failure as a Status object with its code. */
async function errors(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  try {
    await next();
  } catch (err) {
    const status = err instanceof StatusError ? err : internalError((err as Error).message);
    if (!(err instanceof StatusError)) console.error(`gateway: ${ctx.method} ${ctx.path}:`, err);
    if (ctx.res.headersSent) { ctx.res.destroy(); return; }
    ctx.respond = true;
    for (const [k, v] of Object.entries(status.headers)) ctx.set(k, headerValue(v));
    writeBody(ctx, status.code, presentedStatus(ctx, status.toStatus()), plainFormatOf(ctx));
  }
}

/** gzip for large bodies when the client accepts it (gate APIResponseCompression). */
function compression(enabled: boolean) {
  return async (ctx: Koa.Context, next: Koa.Next): Promise<void> => {
    await next();
    const body = ctx.body;
    // A streamed body (a large list) is compressed as it is written.
    const streamed = body instanceof Readable;
    if (!enabled || ctx.respond === false || !(typeof body === 'string' || Buffer.isBuffer(body) || streamed)) return;
    if ((!streamed && Buffer.byteLength(body) < COMPRESSION_THRESHOLD) || !/\bgzip\b/.test(ctx.get('Accept-Encoding'))) return;
    const type = ctx.response.get('Content-Type');
    // pipeline: a stream that fails (or is destroyed) ends the gzip stream, and the response, with it.
    ctx.body = streamed ? pipeline(body, createGzip(), () => {}) : await gzipAsync(body);
    ctx.set('Content-Type', type);
    ctx.set('Content-Encoding', 'gzip');
    ctx.vary('Accept-Encoding');
  };
}

/** A server span per sampled request, continuing an incoming traceparent (forwarded as it is when not sampled). */
async function traced(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  const { span, context: traceContext } = beginSpan(() => `${ctx.method} ${ctx.path}`, SpanKind.SERVER,
    extractContext((k) => ctx.get(k) || undefined), () => ({ 'http.request.method': ctx.method, 'url.path': ctx.path }));
  if (!span) return runIn(traceContext, next);
  try {
    await runIn(traceContext, next);
  } finally {
    span.setAttribute('http.response.status_code', ctx.status);
    if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }
}

/** The request's info (the deadline may have resolved it already), in the group spellings served. */
function resolveInfo(upstreamGroupNames: boolean) {
  return async (ctx: Koa.ParameterizedContext<State>, next: Koa.Next): Promise<void> => {
    const info = ctx.state.info ?? requestInfo(ctx.method, ctx.path, new URLSearchParams(ctx.querystring));
    ctx.state.info = upstreamGroupNames ? info : withoutUpstreamNames(info);
    await next();
  };
}

function authorize(backends: Backends) {
  return async (ctx: Koa.ParameterizedContext<State>, next: Koa.Next) => {
    const q = ctx.query;
    await authorizeRequest(backends, ctx.state.user, ctx.state.info, { fieldSelector: String(q.fieldSelector ?? ''), labelSelector: String(q.labelSelector ?? '') });
    await next();
  };
}

/** Whether a request names a resource (and sub-resource) the registry serves. */
function servedBy(registry: Registry) {
  return (info: RequestInfo): boolean => {
    const def = registry.lookup(info.group, info.version, info.resource);
    return Boolean(def) && (!info.subresource || Boolean(def!.subresources?.includes(info.subresource)));
  };
}

export function createApp(deps: GatewayDeps, serverAddress: () => string): Koa {
  const app = new Koa<State>();
  app.proxy = false;
  const healthChecks: Check[] = [
    { name: 'ping', run: () => undefined },
    { name: 'log', run: () => undefined },
    { name: 'store', run: async () => { if (!(await checkHealth(deps.backends.addresses.storage))) throw new Error('storage is not serving'); } },
  ];
  const started = Date.now();
  const livezChecks: Check[] = [...healthChecks, ...deps.startupChecks.map((c) => ({
    name: c.name, run: () => (Date.now() - started < deps.livezGracePeriodMs ? undefined : c.run()),
  }))];
  const readyChecks: Check[] = [...healthChecks, ...deps.startupChecks,
    { name: 'shutdown', run: () => { if (deps.isShuttingDown()) throw new Error('shutting down'); } }];
  const metrics = new GatewayMetrics(servedBy(deps.registry));
  const inflight = new InflightLimiter(deps.inflight, metrics);
  const served: GatewayDeps = { ...deps, watch: { ...deps.watch, onTooSlow: (resource) => metrics.terminatedWatchers.inc({ resource }) } };
  deps.backends.decisions?.registerMetrics(metrics.registry);
  deps.backends.authentications?.registerMetrics(metrics.registry);
  app.use(requestScope);
  app.use(compression(deps.features('APIResponseCompression')));
  app.use(metrics.middleware());
  app.use(errors);
  app.use(requestDeadline(deps.requestTimeoutMs));
  app.use(async (ctx, next) => { ctx.state.cbor = deps.features('CBORServingAndStorage'); await next(); });
  app.use(traced);
  // Health and metrics are authenticated and authorized like any other path.
  app.use(authenticate(deps.backends));
  app.use(resolveInfo(deps.upstreamGroupNames));
  app.use(inflight.middleware());
  app.use(authorize(deps.backends));
  app.use(async (ctx, next) => {
    const root = ctx.path.split('/')[1];
    if (root === 'livez') return serveHealth(ctx, root, livezChecks);
    if (root === 'healthz') return serveHealth(ctx, root, [...healthChecks, ...deps.startupChecks]);
    if (root === 'readyz') return serveHealth(ctx, root, readyChecks);
    return next();
  });
  const documents = new Documents(deps.registry, deps.upstreamGroupNames);
  const issuerDiscovery = new IssuerDiscovery(deps.backends);
  app.use(async (ctx, next) => (IssuerDiscovery.serves(ctx.path) && ctx.method === 'GET' ? issuerDiscovery.serve(ctx, serverAddress()) : next()));
  app.use(async (ctx) => (ctx.path === '/metrics' && ctx.method === 'GET' ? metrics.serve(ctx, () => deps.backends.serviceMetrics.scrape()) : route(ctx, served, documents, serverAddress())));
  return app;
}

async function route(ctx: Koa.ParameterizedContext<State>, deps: GatewayDeps, documents: Documents, serverAddress: string): Promise<void> {
  const { info } = ctx.state;
  if (info.isResourceRequest) return serveResource(ctx, deps, info);
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw methodNotAllowed(ctx.method, ctx.path);
  if (!documents.serve(ctx, serverAddress)) throw notFoundPath();
}

/** A path nothing is served at: the platform's NotFound of no resource, whose details are empty but present. */
const notFoundPath = () => new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});

async function serveResource(ctx: Koa.ParameterizedContext<State>, deps: GatewayDeps, info: RequestInfo): Promise<void> {
  const def = deps.registry.lookup(info.group, info.version, info.resource);
  // `/namespaces/{name}` names its own namespace; any other cluster-scoped kind under a namespace is not served.
  const clusterInNamespace = def && !def.namespaced && Boolean(info.namespace) && info.resource !== 'namespaces';
  const scopeMismatch = clusterInNamespace || (def && info.subresource && !def.subresources?.includes(info.subresource));
  if (!def || scopeMismatch) throw notFoundPath();
  const needsNamespace = def.namespaced && !info.namespace && ['create', 'get', 'update', 'patch', 'delete', 'deletecollection'].includes(info.verb);
  if ((!info.subresource && !def.verbs.includes(info.verb)) || (needsNamespace && !info.name)) throw methodNotAllowed(ctx.method, ctx.path);
  if (needsNamespace) throw notFoundPath();
  const r: ResourceRequest = {
    ctx, info, user: ctx.state.user, def, objects: new Objects(deps.backends.storage, def), query: new URLSearchParams(ctx.querystring),
    registry: deps.registry, allocator: deps.allocators.get(def),
  };
  if (info.subresource) return serveSubresource(r, deps.backends);
  switch (info.verb) {
    case 'get': return reads.getObject(r, deps.backends);
    case 'list': return reads.listCollection(r, deps.backends);
    case 'watch': return serveWatch(r, deps.backends, deps.hub, deps.watch);
    case 'create': return verbs.createObject(r, deps.backends);
    case 'update': return verbs.updateObject(r, deps.backends);
    case 'patch': return patchObject(r, deps.backends);
    case 'delete': return verbs.deleteObject(r, deps.backends);
    case 'deletecollection': return verbs.deleteCollection(r, deps.backends);
    default: throw methodNotAllowed(ctx.method, ctx.path);
  }
}
