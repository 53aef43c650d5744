// The gateway: an HTTPS Koa app that authenticates, authorizes and routes each
// request of the REST protocol to the other services.
import Koa from 'koa';
import type { FeatureGates } from '../internal/config/features.js';
import { StatusError, methodNotAllowed } from '../internal/apimachinery/status.js';
import type { KindDef, Registry } from '../internal/registry/index.js';
import { checkHealth } from '../internal/rpc/index.js';
import type { Backends } from './backends.js';
import { requestQuery, type ResourceRequest } from './context.js';
import type { RequestInfo } from './requestinfo.js';
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
import { requestPipeline, type State } from './pipeline.js';

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
  const documents = new Documents(deps.registry, deps.upstreamGroupNames);
  const issuerDiscovery = new IssuerDiscovery(deps.backends);
  const scrapeServices = () => deps.backends.serviceMetrics.scrape();
  // Health and metrics are authenticated and authorized like any other path.
  const serve = (ctx: Koa.ParameterizedContext<State>): Promise<void> => {
    const root = ctx.path.split('/')[1];
    if (root === 'livez') return serveHealth(ctx, root, livezChecks);
    if (root === 'healthz') return serveHealth(ctx, root, [...healthChecks, ...deps.startupChecks]);
    if (root === 'readyz') return serveHealth(ctx, root, readyChecks);
    if (ctx.method === 'GET' && IssuerDiscovery.serves(ctx.path)) return issuerDiscovery.serve(ctx, serverAddress());
    if (ctx.method === 'GET' && ctx.path === '/metrics') return metrics.serve(ctx, scrapeServices);
    return route(ctx, served, documents, serverAddress());
  };
  app.use(requestPipeline({
    backends: deps.backends, metrics, inflight, requestTimeoutMs: deps.requestTimeoutMs, compression: deps.features('APIResponseCompression'),
    cbor: () => deps.features('CBORServingAndStorage'), upstreamGroupNames: deps.upstreamGroupNames,
    servesGroup: (group) => deps.registry.groups().has(group), serve,
  }));
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
    ctx, info, user: ctx.state.user, def, objects: new Objects(deps.backends.storage, def), query: requestQuery(ctx),
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
