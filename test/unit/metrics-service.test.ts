import { expect } from 'chai';
import { Counter, Histogram, Registry } from 'prom-client';
import { MetricsScraper, metricsService } from '../../internal/metrics/index.js';
import { BoundHistogram } from '../../internal/metrics/histogram.js';
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

describe('BoundHistogram', () => {
  const bounds = [0.005, 0.025, 0.1];
  const observations: Array<[Record<'name' | 'rejected', string>, number]> = [
    [{ name: 'A', rejected: 'false' }, 0.001], [{ name: 'B', rejected: 'true' }, 0.03], [{ name: 'A', rejected: 'false' }, 0.2],
    [{ name: 'A', rejected: 'false' }, 0.025], [{ name: 'B', rejected: 'true' }, 5],
  ];

  it('writes the text prom-client\'s Histogram writes for the same observations', async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const reference = new Histogram({ name: 'h_seconds', help: 'Help "quoted".', labelNames: ['name', 'rejected'], buckets: bounds, registers: [theirs] });
    const bound = new BoundHistogram('h_seconds', 'Help "quoted".', ['name', 'rejected'], bounds, ours);
    for (const [labels, value] of observations) {
      reference.observe(labels, value);
      bound.labels(labels).observe(value);
    }
    const text = await ours.metrics();
    expect(text).to.equal(await theirs.metrics());
    expect(text).to.match(/^h_seconds_bucket\{le="0.025",name="A",rejected="false"\} 2$/m);
    expect(text).to.match(/^h_seconds_count\{name="B",rejected="true"\} 2$/m);
  });

  it('keeps a bound series valid across a reset, counting from zero', async () => {
    const registry = new Registry();
    const bound = new BoundHistogram('r_seconds', 'R.', ['name'], bounds, registry);
    const series = bound.labels({ name: 'x' });
    series.observe(0.01);
    registry.resetMetrics();
    series.observe(0.05);
    const text = await registry.metrics();
    expect(text).to.match(/^r_seconds_count\{name="x"\} 1$/m);
    expect(text).to.match(/^r_seconds_sum\{name="x"\} 0.05$/m);
    expect(text).to.match(/^r_seconds_bucket\{le="0.025",name="x"\} 0$/m);
  });
});

describe('BoundHistogram values', () => {
  it('answers get() as prom-client\'s Histogram does: each value with all of its labels', async () => {
    const bounds = [0.1];
    const reference = new Histogram({ name: 'g_seconds', help: 'G.', labelNames: ['name'], buckets: bounds, registers: [] });
    const bound = new BoundHistogram('g_seconds', 'G.', ['name'], bounds, new Registry());
    reference.observe({ name: 'x' }, 0.05);
    bound.labels({ name: 'x' }).observe(0.05);
    // Exemplars are not kept: prom-client's values carry an empty one.
    const theirs = await reference.get();
    expect(bound.get()).to.deep.equal({ ...theirs, values: theirs.values.map((v) => { const { exemplar: _e, ...rest } = v as typeof v & { exemplar?: unknown }; return rest; }) });
  });
});
