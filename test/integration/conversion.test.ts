import { expect } from 'chai';
import { Cluster } from '../lib/cluster.js';

const V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
const V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';

describe('one resource served in two versions (autoscaling v1 and v2)', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('an object written through v1 reads back through v2 converted, and through v1 unchanged', async () => {
    const hpa = {
      apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h1' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 70 },
    };
    expect((await c.request('POST', V1, { body: hpa })).status).to.equal(201);
    const v2 = (await c.request('GET', `${V2}/h1`)).body;
    expect(v2.apiVersion).to.equal('autoscaling/v2');
    expect(v2.spec.metrics).to.deep.equal([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }]);
    const v1 = (await c.request('GET', `${V1}/h1`)).body;
    expect(v1.apiVersion).to.equal('autoscaling/v1');
    expect(v1.spec.targetCPUUtilizationPercentage).to.equal(70);
  });

  it('a watch through v1 sees objects written through v2 in the v1 shape', async () => {
    const rv = (await c.request('GET', V1)).body.metadata.resourceVersion;
    const watching = c.watch(`${V1}?watch=1&resourceVersion=${rv}`, { until: (e) => e.length >= 1 });
    await new Promise((r) => setTimeout(r, 200));
    const hpa = {
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'h2' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, maxReplicas: 3,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] },
    };
    expect((await c.request('POST', V2, { body: hpa })).status).to.equal(201);
    const { events } = await watching;
    expect(events[0].object.apiVersion).to.equal('autoscaling/v1');
    expect(events[0].object.spec.targetCPUUtilizationPercentage).to.equal(50);
  });
});
