import { expect } from 'chai';
import { Cluster } from '../lib/cluster.js';

describe('/metrics', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('exposes request counts and latencies by verb, resource and code in the Prometheus text format', async () => {
    await c.request('GET', '/api/v1/namespaces/default/configmaps');
    await c.request('GET', '/api/v1/namespaces/default/configmaps/missing');
    const res = await c.request('GET', '/metrics');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.contain('text/plain');
    expect(res.text).to.match(/apiserver_request_total\{verb="LIST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="namespace",component="apiserver",code="200"\} [1-9]/);
    expect(res.text).to.match(/apiserver_request_total\{verb="GET",[^}]*resource="configmaps"[^}]*scope="resource"[^}]*code="404"\} 1/);
    expect(res.text).to.contain('apiserver_request_duration_seconds_bucket{');
    expect(res.text).to.contain('# TYPE apiserver_requested_deprecated_apis gauge');
    expect(res.text).to.contain('process_cpu_seconds_total');
  });

  it('is refused to anonymous users (no default role grants it)', async () => {
    const res = await c.request('GET', '/metrics', { anonymous: true });
    expect(res.status).to.equal(403);
    expect(res.body.message).to.equal('forbidden: User "system:anonymous" cannot get path "/metrics"');
  });
});
