// Storage on etcd through the whole server: what only etcd brings (revisions moved by keys outside the objects,
// etcd going away and coming back).
import { expect } from 'chai';
import { EtcdClient } from '../../internal/storage/etcd/client.js';
import { Cluster, waitFor } from '../lib/cluster.js';

const cms = '/api/v1/namespaces/default/configmaps';

describe('storage on etcd', function () {
  this.timeout(120_000);
  let c: Cluster;
  let etcd: EtcdClient;
  before(async () => {
    c = await new Cluster({ storageBackend: 'etcd3', withoutControllerManager: true }).start();
    etcd = new EtcdClient({ servers: c.etcd!.servers });
  });
  after(async () => {
    etcd?.close();
    await c?.stop();
  });

  it('stores objects under the prefix, with etcd revisions as resourceVersions', async () => {
    const res = await c.request('POST', cms, { body: { metadata: { name: 'stored' }, data: { a: '1' } } });
    expect(res.status, res.text).to.equal(201);
    const got = await etcd.range({ key: Buffer.from('/registry/core/configmaps/default/stored') });
    expect(got.kvs).to.have.length(1);
    expect(String(got.kvs[0].modRevision)).to.equal(res.body.metadata.resourceVersion);
  });

  it('answers a consistent read from the cache at once after etcd revisions taken by keys outside the objects', async () => {
    // Lists start the gateway's cache of the collection; once live, consistent reads wait for the change stream to
    // reach etcd's revision (1 s at most, then they read storage instead).
    expect(await waitFor(async () => (await c.request('GET', cms)).status === 200 && (await c.request('GET', cms)).status === 200, 10_000)).to.equal(true);
    const times: number[] = [];
    for (let round = 0; round < 3; round++) {
      await etcd.put(Buffer.from(`/elsewhere/k${round}`), Buffer.from('x'));
      const { header } = await etcd.range({ key: Buffer.from('/elsewhere/k0') });
      const started = Date.now();
      const list = await c.request('GET', cms);
      times.push(Date.now() - started);
      expect(list.status, list.text).to.equal(200);
      expect(Number(list.body.metadata.resourceVersion)).to.be.at.least(header.revision);
    }
    expect(Math.min(...times), `ms for a consistent list after a foreign revision (${times.join(', ')})`).to.be.lessThan(900);
    const made = await c.request('POST', cms, { body: { metadata: { name: 'after-foreign' } } });
    expect(made.status, made.text).to.equal(201);
    expect((await c.request('GET', `${cms}/after-foreign`)).status).to.equal(200);
  });

  it('answers 503 while etcd is down, never hangs, and serves again once it is back', async () => {
    const member = c.etcd!.members[0];
    await member.kill();
    try {
      const started = Date.now();
      const res = await c.request('POST', cms, { body: { metadata: { name: 'while-down' } }, timeoutMs: 30_000 });
      expect(res.status, res.text).to.equal(503);
      expect(Date.now() - started, 'ms until the 503').to.be.lessThan(15_000);
    } finally {
      await member.start();
    }
    let last = 0;
    const served = await waitFor(async () => {
      last = (await c.request('POST', cms, { body: { metadata: { name: 'back' } } })).status;
      return last === 201;
    }, 30_000, 500);
    expect(served, `still ${last} after etcd came back`).to.equal(true);
    const watched = await c.watch(`${cms}?watch=1&resourceVersion=0`, { until: (evs) => evs.some((e) => e.object?.metadata?.name === 'back'), timeoutMs: 10_000 });
    expect(watched.events.some((e) => e.object?.metadata?.name === 'back')).to.equal(true);
  });
});
