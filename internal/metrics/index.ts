// Metrics of the services behind the gateway: a service serves its prom-client
// registry over gRPC (svc.metrics.v1.Metrics) and the gateway appends what each
// one answers to its own /metrics.
import type { Registry } from 'prom-client';
import { api, replicated, unary, type Handlers } from '../rpc/index.js';
import type { MetricsClient } from '../rpc/gen/svc/metrics/v1/Metrics.js';
import type { ScrapeResponse__Output } from '../rpc/gen/svc/metrics/v1/ScrapeResponse.js';

export const METRICS_SERVICE_NAME = 'svc.metrics.v1.Metrics';

/** The service entry for serve(): answers Scrape with the registry's text.
 * Keep process-wide metrics out of the registry: the gateway already has them. */
export function metricsService(registry: Registry) {
  const handlers: Handlers = { Scrape: async () => ({ text: await registry.metrics() }) };
  return { name: METRICS_SERVICE_NAME, definition: api.svc.metrics.v1.Metrics.service, handlers };
}

const SCRAPE_TIMEOUT_MS = 2_000;

export const endWithNewline = (text: string) => (text === '' || text.endsWith('\n') ? text : `${text}\n`);

/** Collects the metrics of several services (each at one address or a comma list of its replicas', of which the one
 * calls go to answers); one that is down or serves no Metrics API adds nothing, so /metrics never fails because of
 * another service. */
export class MetricsScraper {
  private readonly clients: MetricsClient[];

  constructor(addresses: string[]) {
    this.clients = addresses.map((a) => replicated(api.svc.metrics.v1.Metrics, a));
  }

  async scrape(): Promise<string> {
    const texts = await Promise.all(this.clients.map((client) =>
      unary<ScrapeResponse__Output>(client, client.Scrape, {}, SCRAPE_TIMEOUT_MS).then((r) => r.text, () => '')));
    return texts.map(endWithNewline).join('');
  }

  close(): void {
    for (const client of this.clients) client.close();
  }
}
