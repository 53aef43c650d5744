// Prometheus metrics at /metrics, named as the upstream server names them so
// existing dashboards and alerts apply.
import type Koa from 'koa';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { endWithNewline } from '../internal/metrics/index.js';
import type { RequestInfo } from './requestinfo.js';
import { requestQuery } from './context.js';

/** How often the event-loop delay is sampled: each sample wakes an idle process, so it wakes once in 5 s for it. */
const EVENT_LOOP_PRECISION_MS = 5000;

export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'apiserver_request_total', help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'], registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'apiserver_request_duration_seconds', help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    labelNames: ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
    buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60], registers: [this.registry],
  });
  readonly inflight = new Gauge({
    name: 'apiserver_current_inflight_requests', help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
    labelNames: ['request_kind'], registers: [this.registry],
  });
  readonly dropped = new Counter({
    name: 'apiserver_dropped_requests_total', help: "Number of requests dropped with 'Try again later' response",
    labelNames: ['request_kind'], registers: [this.registry],
  });
  private readonly terminations = new Counter({
    name: 'apiserver_request_terminations_total', help: 'Number of requests which apiserver terminated in self-defense.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'], registers: [this.registry],
  });
  readonly terminatedWatchers = new Counter({
    name: 'apiserver_terminated_watchers_total', help: 'Counter of watchers closed due to unresponsiveness broken by resource type.',
    labelNames: ['resource'], registers: [this.registry],
  });
  readonly deprecated = new Gauge({
    name: 'apiserver_requested_deprecated_apis', help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
    labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'], registers: [this.registry],
  });

  /** `served` tells whether a request names a resource (and sub-resource) the server has: only those get their own series. */
  constructor(private readonly served: (info: RequestInfo) => boolean) {
    // The event-loop delay monitor samples at this precision with a timer of its own; prom-client's
    // 10 ms default wakes an idle gateway 100 times a second.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_PRECISION_MS });
    for (const kind of ['readOnly', 'mutating']) this.dropped.inc({ request_kind: kind }, 0);
  }

  /** Counts and times a request that began at `started` (performance.now()); requests the server cut short
   * (429, 504) count as terminations too. */
  record(ctx: Koa.Context, started: number): void {
    const labels = this.labelsOf(ctx.state.info as RequestInfo | undefined, ctx);
    const code = String(ctx.status);
    this.requests.inc({ ...labels, code });
    if (ctx.state.terminated) {
      const { dry_run: _dryRun, ...termination } = labels;
      this.terminations.inc({ ...termination, code });
    }
    if (labels.verb !== 'WATCH') this.latency.observe(labels, (performance.now() - started) / 1000);
  }

  /** The gateway's metrics followed by those of the services (`services` answers their text). */
  async serve(ctx: Koa.Context, services: () => Promise<string>): Promise<void> {
    const [own, others] = await Promise.all([this.registry.metrics(), services()]);
    ctx.set('Content-Type', this.registry.contentType);
    ctx.body = endWithNewline(own) + others;
  }

  /** Labels from a bounded set: a path that names no served resource (any junk URL) shares the empty ones. */
  private labelsOf(info: RequestInfo | undefined, ctx: Koa.Context) {
    const known = info?.isResourceRequest === true && this.served(info);
    const scope = !known ? '' : info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster';
    return {
      verb: verbOf(info, ctx), dry_run: requestQuery(ctx).get('dryRun') ? 'All' : '', group: known ? info.group : '', version: known ? info.version : '',
      resource: known ? info.resource : '', subresource: known ? info.subresource : '', scope, component: 'apiserver',
    };
  }
}

/** The verbs upstream reports; any other method is `other`, so odd methods add no series. */
const VERBS = new Set(['APPLY', 'CONNECT', 'CREATE', 'DELETE', 'DELETECOLLECTION', 'GET', 'LIST', 'PATCH', 'POST', 'PROXY', 'PUT', 'UPDATE', 'WATCH']);

function verbOf(info: RequestInfo | undefined, ctx: Koa.Context): string {
  let verb = (info?.verb ?? ctx.method).toUpperCase();
  if (verb === 'HEAD') verb = 'GET';
  if (verb === 'PATCH' && ctx.get('Content-Type').startsWith('application/apply-patch')) verb = 'APPLY';
  return VERBS.has(verb) ? verb : 'other';
}
