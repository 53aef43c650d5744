import { expect } from 'chai';
import { Cluster } from '../lib/cluster.js';

/** A gateway started while storage is down never finishes its bootstrap hook. */
async function gatewayWithoutStorage(grace: string): Promise<Cluster> {
  const c = await new Cluster({ flags: { gateway: [`--livez-grace-period=${grace}`] } }).start();
  await c.kill('gateway');
  await c.kill('storage');
  await c.startService('gateway', false);
  return c;
}

describe('--livez-grace-period', function () {
  this.timeout(90_000);
  const clusters: Cluster[] = [];
  after(async () => { for (const c of clusters) await c.stop(); });

  it('within the grace period, unfinished start-up work does not fail /livez (readyz still does)', async () => {
    const c = await gatewayWithoutStorage('60s');
    clusters.push(c);
    const livez = await c.request('GET', '/livez?verbose&exclude=store'); // storage is down on purpose
    expect(livez.status).to.equal(200);
    expect(livez.text).to.contain('[+]poststarthook/bootstrap-controller ok');
    const readyz = await c.request('GET', '/readyz?verbose');
    expect(readyz.status).to.equal(500);
    expect(readyz.text).to.contain('[-]poststarthook/bootstrap-controller failed');
  });

  it('without a grace period, the unfinished hook fails /livez', async () => {
    const c = await gatewayWithoutStorage('0s');
    clusters.push(c);
    const livez = await c.request('GET', '/livez?verbose&exclude=store'); // storage is down on purpose
    expect(livez.status).to.equal(500);
    expect(livez.text).to.contain('[-]poststarthook/bootstrap-controller failed');
  });
});
