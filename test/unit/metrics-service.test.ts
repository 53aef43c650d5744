import { expect } from 'chai';
import { Counter, Registry } from 'prom-client';
import { MetricsScraper, metricsService } from '../../internal/metrics/index.js';
import { serve, type RunningServer } from '../../internal/rpc/index.js';
import { unusedPort } from '../lib/ports.js';

describe('Metrics API (svc.metrics.v1)', () => {
  let server: RunningServer;
  const registry = new Registry();
  const counter = new Counter({ name: 'test_things_total', help: 'Things.', labelNames: ['kind'], registers: [registry] });

  before(async () => { server = await serve('127.0.0.1:0', [metricsService(registry)]); });
  after(async () => { await server?.stop(); });

  it('answers Scrape with the registry in the Prometheus text format', async () => {
    counter.inc({ kind: 'a' }, 3);
    const scraper = new MetricsScraper([`127.0.0.1:${server.port}`]);
    try {
      const text = await scraper.scrape();
      expect(text).to.contain('# TYPE test_things_total counter');
      expect(text).to.match(/^test_things_total\{kind="a"\} 3$/m);
      expect(text.endsWith('\n')).to.equal(true);
    } finally {
      scraper.close();
    }
  });

  it('leaves out a service that is down or serves no Metrics API', async () => {
    const silent = await serve('127.0.0.1:0', []);
    const down = await unusedPort();
    const scraper = new MetricsScraper([`127.0.0.1:${down}`, `127.0.0.1:${silent.port}`, `127.0.0.1:${server.port}`]);
    try {
      const text = await scraper.scrape();
      expect(text.match(/# TYPE test_things_total counter/g)).to.have.length(1);
    } finally {
      scraper.close();
      await silent.stop();
    }
  });
});
