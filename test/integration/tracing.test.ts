import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Cluster, waitFor } from '../lib/cluster.js';
import { OtlpCollector, type CollectedSpan } from '../lib/otlp.js';

const SERVICES = ['gateway', 'authn', 'authz', 'admission', 'storage'];
const CMS = '/api/v1/namespaces/default/configmaps';
// The traced create goes to another namespace: the warm-up's authorization decision is kept by the gateway, this one is asked of authz.
const TRACED_CMS = '/api/v1/namespaces/svc-public/configmaps';
const SERVER = 2;
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

/** The chain of spans from span up to the root of what the trace holds, span first. */
function ancestry(span: CollectedSpan, spans: CollectedSpan[]): CollectedSpan[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain = [span];
  for (let s = byId.get(span.parentSpanId); s && chain.length <= spans.length; s = byId.get(s.parentSpanId)) chain.push(s);
  return chain;
}

/** A traceparent of a new trace, sampled or not, and its ids. */
function traceparent(sampled: boolean) {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, header: `00-${traceId}-${spanId}-${sampled ? '01' : '00'}` };
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('tracing: one create is one trace across every service, NATS and watch delivery', function () {
  this.timeout(240_000);
  let collector: OtlpCollector;
  let c: Cluster;
  const traceId = randomBytes(16).toString('hex');
  const incomingSpanId = randomBytes(8).toString('hex');
  let spans: CollectedSpan[] = [];
  let watched: any[] = [];
  /** The services' environment: the sampler phases below change it and restart them. */
  const env: Record<string, string> = {};

  before(async () => {
    collector = await new OtlpCollector().start();
    env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
    c = await new Cluster({ env }).start();
    // A first create seen on the watch proves it is registered with the hub, so the traced one arrives live over NATS.
    let registered!: () => void;
    const live = new Promise<void>((resolve) => { registered = resolve; });
    const named = (events: any[], name: string) => events.some((e) => e.object?.metadata?.name === name);
    const watching = c.watch('/api/v1/configmaps?watch=1', {
      until: (events) => { if (named(events, 'warm-up')) registered(); return named(events, 'traced'); }, timeoutMs: 30_000,
    });
    expect((await c.request('POST', CMS, { body: cm('warm-up') })).status).to.equal(201);
    await Promise.race([live, watching]);
    const created = await c.request('POST', TRACED_CMS, { body: cm('traced'), headers: { traceparent: `00-${traceId}-${incomingSpanId}-01` } });
    expect(created.status).to.equal(201);
    watched = (await watching).events;
    const complete = () => {
      spans = collector.trace(traceId);
      const services = new Set(spans.map((s) => s.service));
      // The gateway's request span ends after its response, so it may be exported in a later batch than its children.
      return SERVICES.every((s) => services.has(s)) && spans.some((s) => s.name === 'watch deliver')
        && spans.some((s) => s.parentSpanId === incomingSpanId);
    };
    await waitFor(complete, 15_000, 200);
  });

  after(async () => {
    await c?.stop();
    await collector?.stop();
  });

  it('receives the create on the open watch', () => {
    expect(watched.map((e) => `${e.type} ${e.object?.metadata?.name}`)).to.include('ADDED traced');
  });

  it('collects spans of all five services under the incoming trace id', () => {
    expect(collector.rejected).to.deep.equal([]);
    expect([...new Set(spans.map((s) => s.service))]).to.have.members(SERVICES);
  });

  it('makes the gateway request span a child of the incoming traceparent', () => {
    const roots = spans.filter((s) => s.parentSpanId === incomingSpanId);
    expect(roots.map((s) => `${s.service} ${s.name}`)).to.deep.equal([`gateway POST ${TRACED_CMS}`]);
    expect(roots[0].kind).to.equal(SERVER);
  });

  it('places every span of the trace, and a server span of each service, under the gateway span', () => {
    const gateway = spans.find((s) => s.parentSpanId === incomingSpanId)!;
    for (const span of spans.filter((s) => s !== gateway)) {
      expect(ancestry(span, spans).map((s) => s.spanId), `${span.service} ${span.name}`).to.include(gateway.spanId);
    }
    for (const service of SERVICES.filter((s) => s !== 'gateway')) {
      expect(spans.some((s) => s.service === service && s.kind === SERVER), `a server span of ${service}`).to.equal(true);
    }
  });

  it('carries the trace through the NATS publish to the watch delivery', () => {
    const publish = spans.filter((s) => s.service === 'storage' && s.name === 'nats publish');
    const deliver = spans.filter((s) => s.service === 'gateway' && s.name === 'watch deliver');
    expect(publish).to.have.length(1);
    expect(deliver).to.have.length(1);
    expect(deliver[0].parentSpanId).to.equal(publish[0].spanId);
  });
  /** Restarts the services under another sampler (without the controller-manager) and forgets the spans collected so far;
   * the gateway exports nothing unless gatewayExports. */
  async function restartWith(sampler: string, arg?: string, gatewayExports = true): Promise<void> {
    for (const s of ['controller-manager', 'gateway', 'admission', 'authz', 'authn', 'storage'] as const) await c.kill(s, 'SIGTERM');
    Object.assign(env, { OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: arg ?? '' });
    for (const s of ['storage', 'authn', 'authz', 'admission'] as const) c.addresses[s] = '127.0.0.1:0';
    // Each once the peers it is given the (announced) address of serve: storage, then authn and authz side by side, then admission.
    await c.startService('storage');
    await Promise.all((['authn', 'authz'] as const).map((s) => c.startService(s)));
    await c.startService('admission');
    if (!gatewayExports) delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
    await c.startService('gateway');
    env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
    collector.spans.length = 0;
  }

  /** Creates a ConfigMap, with the traceparent given. The gateway keeps authorization decisions: only the first create of
   * a phase in each namespace (path) asks authz. */
  async function create(name: string, traceparentHeader?: string, path = CMS): Promise<void> {
    const headers: Record<string, string> = traceparentHeader ? { traceparent: traceparentHeader } : {};
    expect((await c.request('POST', path, { body: cm(name), headers })).status).to.equal(201);
  }

  /** Waits until the trace holds a server span of every service; returns its spans. */
  async function traced(traceId: string): Promise<CollectedSpan[]> {
    const servers = () => new Set(collector.trace(traceId).filter((s) => s.kind === SERVER).map((s) => s.service));
    await waitFor(() => SERVICES.every((s) => servers().has(s)), 15_000, 100);
    expect([...servers()]).to.have.members(SERVICES);
    return collector.trace(traceId);
  }

  /** Time enough for any span to be exported (the processors export every 200 ms). */
  const EXPORT_SETTLE_MS = 1500;

  describe('with OTEL_TRACES_SAMPLER=always_off', () => {
    before(() => restartWith('always_off'));

    it('exports no span at all, not even for a request with a sampled traceparent', async () => {
      await create('off-sampled', traceparent(true).header);
      await create('off-untraced');
      await settle(EXPORT_SETTLE_MS);
      expect(collector.spans).to.deep.equal([]);
      expect(collector.rejected).to.deep.equal([]);
    });
  });

  describe('with OTEL_TRACES_SAMPLER=parentbased_always_off', () => {
    before(() => restartWith('parentbased_always_off'));

    it('traces a request with a sampled traceparent across every service, and no other', async () => {
      const sampled = traceparent(true);
      await create('pb-sampled', sampled.header);
      await create('pb-unsampled', traceparent(false).header);
      await create('pb-untraced');
      const spans = await traced(sampled.traceId);
      expect(spans.filter((s) => s.parentSpanId === sampled.spanId).map((s) => `${s.service} ${s.name}`)).to.deep.equal([`gateway POST ${CMS}`]);
      await settle(EXPORT_SETTLE_MS);
      expect(new Set(collector.spans.map((s) => s.traceId))).to.deep.equal(new Set([sampled.traceId]));
    });
  });

  describe('with OTEL_TRACES_SAMPLER=traceidratio', () => {
    it('at OTEL_TRACES_SAMPLER_ARG=0 exports nothing, whatever the traceparent says', async () => {
      await restartWith('traceidratio', '0');
      await create('ratio0-sampled', traceparent(true).header);
      await create('ratio0-untraced');
      await settle(EXPORT_SETTLE_MS);
      expect(collector.spans).to.deep.equal([]);
    });

    it('at OTEL_TRACES_SAMPLER_ARG=1 traces every request across every service, even one whose traceparent is not sampled', async () => {
      await restartWith('traceidratio', '1');
      await create('ratio1-untraced');
      const unsampled = traceparent(false);
      await create('ratio1-unsampled', unsampled.header, TRACED_CMS);
      const roots = () => collector.spans.filter((s) => s.service === 'gateway' && s.name === `POST ${CMS}` && s.parentSpanId === '');
      expect(await waitFor(() => roots().length === 1, 15_000, 100)).to.equal(true);
      await traced(roots()[0].traceId);
      const continued = await traced(unsampled.traceId);
      expect(continued.filter((s) => s.parentSpanId === unsampled.spanId).map((s) => s.service)).to.deep.equal(['gateway']);
    });
  });
  describe('with a gateway that exports nothing', () => {
    before(() => restartWith('parentbased_always_on', undefined, false));

    it('builds no span in the gateway and passes the incoming traceparent on unchanged to every service it calls', async () => {
      const sampled = traceparent(true);
      await create('unexported', sampled.header);
      const called = SERVICES.filter((s) => s !== 'gateway');
      const children = () => collector.trace(sampled.traceId).filter((s) => s.parentSpanId === sampled.spanId && s.kind === SERVER);
      await waitFor(() => called.every((s) => children().some((span) => span.service === s)), 15_000, 100);
      expect([...new Set(children().map((s) => s.service))]).to.have.members(called);
      await settle(EXPORT_SETTLE_MS);
      expect(collector.spans.filter((s) => s.service === 'gateway')).to.deep.equal([]);
    });
  });
});
