// Prometheus metrics at /metrics, named as the upstream server names them so
// existing dashboards and alerts apply.
import type Koa from 'koa';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { endWithNewline } from '../internal/metrics/index.js';
import type { RequestInfo } from './requestinfo.js';

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
  readonly deprecated = new Gauge({
    name: 'apiserver_requested_deprecated_apis', help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
    labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'], registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Counts and times every request; watches are counted as long-running while open. */
  middleware() {
    return async (ctx: Koa.Context, next: Koa.Next): Promise<void> => {
      const started = process.hrtime.bigint();
      const kind = ctx.method === 'GET' || ctx.method === 'HEAD' ? 'readOnly' : 'mutating';
      this.inflight.inc({ request_kind: kind });
      try {
        await next();
      } finally {
        this.inflight.dec({ request_kind: kind });
        const labels = labelsOf(ctx.state.info as RequestInfo | undefined, ctx);
        this.requests.inc({ ...labels, code: String(ctx.status) });
        if (labels.verb !== 'WATCH') this.latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
      }
    };
  }

  /** The gateway's metrics followed by those of the services (`services` answers their text). */
  async serve(ctx: Koa.Context, services: () => Promise<string>): Promise<void> {
    const [own, others] = await Promise.all([this.registry.metrics(), services()]);
    ctx.set('Content-Type', this.registry.contentType);
    ctx.body = endWithNewline(own) + others;
  }
}

function labelsOf(info: RequestInfo | undefined, ctx: Koa.Context) {
  const verb = (info?.verb ?? ctx.method.toLowerCase()).toUpperCase();
  const scope = !info?.isResourceRequest ? '' : info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster';
  return {
    verb, dry_run: ctx.query.dryRun ? 'All' : '', group: info?.group ?? '', version: info?.version ?? '',
    resource: info?.resource ?? '', subresource: info?.subresource ?? '', scope, component: 'apiserver',
  };
}
