import { expect } from 'chai';
import { Cluster, waitFor } from '../lib/cluster.js';

const CMS = '/api/v1/namespaces/default/configmaps';

describe('a NATS outage: watches end with an error, writes go on, the system heals without a restart', function () {
  this.timeout(90_000);
  let c: Cluster;
  before(async () => { c = await new Cluster().start(); });
  after(async () => { await c?.stop(); });

  it('ends open watches with an ERROR event, serves reads and writes meanwhile, and watches again once NATS is back', async () => {
    const rv = (await c.request('GET', CMS)).body.metadata.resourceVersion;
    const watching = c.watch(`${CMS}?watch=1&resourceVersion=${rv}`, { timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 300));
    await c.stopNats();
    const { events, ended } = await watching;
    expect(ended).to.equal(true);
    expect(events.at(-1)?.type).to.equal('ERROR');
    expect(events.at(-1)?.object).to.include({ kind: 'Status', code: 503 });

    const during = await c.request('POST', CMS, { body: { metadata: { name: 'during-outage' } } });
    expect(during.status).to.equal(201);
    // The gateway's cache cannot follow changes meanwhile: reads of any kind are storage's answers.
    for (const query of ['', '?resourceVersion=0', `?resourceVersion=${during.body.metadata.resourceVersion}`]) {
      const listed = await c.request('GET', `${CMS}${query}`);
      expect(listed.body.items.map((i: any) => i.metadata.name), query).to.include('during-outage');
    }
    expect((await c.request('GET', `${CMS}/during-outage?resourceVersion=0`)).status).to.equal(200);
    // Admission's namespaces come from storage's stream, not NATS: a namespace made now admits content at once.
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'made-in-outage' } } })).status).to.equal(201);
    expect((await c.request('POST', '/api/v1/namespaces/made-in-outage/configmaps', { body: { metadata: { name: 'x' } } })).status).to.equal(201);
    expect((await c.request('POST', '/api/v1/namespaces/nowhere/configmaps', { body: { metadata: { name: 'x' } } })).status).to.equal(404);
    const refused = await c.request('GET', `${CMS}?watch=1&resourceVersion=${rv}`);
    expect(refused.status).to.equal(503);

    await c.restartNats();
    // Healed once a watch is served without an ERROR event (the gateway may still be listing its cache again).
    const healed = async () => {
      const probe = await c.watch(`${CMS}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`);
      return probe.status === 200 && !probe.events.some((e) => e.type === 'ERROR');
    };
    expect(await waitFor(healed, 30_000, 500)).to.equal(true);
    // Resumed from the old version, the watch replays what happened during the outage, then goes live.
    const resumed = c.watch(`${CMS}?watch=1&resourceVersion=${rv}`, { until: (e) => e.length >= 2, timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 500));
    expect((await c.request('POST', CMS, { body: { metadata: { name: 'after-outage' } } })).status).to.equal(201);
    const { events: later } = await resumed;
    expect(later.map((e) => e.object.metadata.name)).to.deep.equal(['during-outage', 'after-outage']);
    // Healed: the cache is listed again and follows the stream.
    for (const query of ['', '?resourceVersion=0']) {
      const listed = await c.request('GET', `${CMS}${query}`);
      expect(listed.body.items.map((i: any) => i.metadata.name), query).to.include.members(['during-outage', 'after-outage']);
    }
    expect((await c.request('DELETE', `${CMS}/during-outage`)).status).to.equal(200);
    expect((await c.request('GET', `${CMS}/during-outage`)).status).to.equal(404);
 
    // The controllers' watches failed too: they listed afresh and act on what they missed, and follow again.
    const defaultAccount = (ns: string) => async () => (await c.request('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200;
    expect(await waitFor(defaultAccount('made-in-outage'), 20_000, 200), 'default ServiceAccount of a namespace made in the outage').to.equal(true);
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'made-after-outage' } } })).status).to.equal(201);
    expect(await waitFor(defaultAccount('made-after-outage'), 20_000, 200), 'default ServiceAccount of a namespace made after').to.equal(true);
  });
});
