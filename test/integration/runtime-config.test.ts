import { expect } from 'chai';
import { Cluster } from '../lib/cluster.js';

describe('gateway --runtime-config', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => { c = await new Cluster({ flags: { gateway: ['--runtime-config=batch/v1=false,storage.svc.io/v1beta1=true'] } }).start(); });
  after(async () => { await c?.stop(); });

  it('stops serving a group version that is turned off, in paths and in discovery', async () => {
    expect((await c.request('GET', '/apis/batch/v1/namespaces/default/jobs')).status).to.equal(404);
    const groups = (await c.request('GET', '/apis')).body.groups.map((g: { name: string }) => g.name);
    expect(groups).not.to.include('batch');
  });

  it('serves a non-stable group version that is turned on', async () => {
    const res = await c.request('GET', '/apis/storage.svc.io/v1beta1');
    expect(res.status).to.equal(200);
    expect(res.body.kind).to.equal('APIResourceList');
  });
});
