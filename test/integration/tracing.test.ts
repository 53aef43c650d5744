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

describe('tracing: one create is one trace across every service, NATS and watch delivery', function () {
  this.timeout(90_000);
  let collector: OtlpCollector;
  let c: Cluster;
  const traceId = randomBytes(16).toString('hex');
  const incomingSpanId = randomBytes(8).toString('hex');
  let spans: CollectedSpan[] = [];
  let watched: any[] = [];

  before(async () => {
    collector = await new OtlpCollector().start();
    c = await new Cluster({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint } }).start();
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
      return SERVICES.every((s) => services.has(s)) && spans.some((s) => s.name === 'watch deliver');
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
});
