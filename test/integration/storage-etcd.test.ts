// Storage on etcd through the whole server: what only etcd brings (revisions moved by keys outside the objects,
// etcd going away and coming back, several storage processes of which one publishes, killed or frozen).
import { expect } from 'chai';
import { connect } from '@nats-io/transport-node';
import { EtcdClient } from '../../internal/storage/etcd/client.js';
import { EtcdKeys } from '../../internal/storage/etcd/values.js';
import { PREV_REVISION_HEADER, REVISION_HEADER, subscriptionSubject } from '../../internal/storage/events.js';
import { Cluster, waitFor } from '../lib/cluster.js';

const cms = '/api/v1/namespaces/default/configmaps';

describe('storage on etcd', function () {
  this.timeout(120_000);
  let c: Cluster;
  let etcd: EtcdClient;
  before(async () => {
    // Two storage processes, every client given both: the first publishes (it starts alone).
    c = await new Cluster({ storageBackend: 'etcd3', replicas: { storage: 1 }, withoutControllerManager: true }).start();
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

  it('a publishing replica killed: the other takes over within the lease and watchers miss nothing', async function () {
    this.timeout(90_000);
    expect(c.logs.get('storage')!.join(''), 'the first storage process publishes').to.match(/ publishes \(lease/);
    const first = await c.request('POST', cms, { body: { metadata: { name: 'ha-start' } } });
    expect(first.status, first.text).to.equal(201);
    const arrived = new Map<string, number>();
    let seen = 0;
    const acked: Array<{ name: string; rv: number; at: number }> = [];
    let failed = false;
    const done = new AbortController();
    const watching = c.watch(`${cms}?watch=1&resourceVersion=${first.body.metadata.resourceVersion}`, {
      timeoutMs: 60_000, signal: done.signal,
      until: (evs) => {
        for (; seen < evs.length; seen++) if (evs[seen].object?.metadata?.name) arrived.set(evs[seen].object.metadata.name, Date.now());
        failed ||= evs.some((e) => e.type === 'ERROR');
        return failed;
      },
    });
    let writing = true;
    const failures: number[] = [];
    let killedAt = 0;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const res = await c.request('POST', cms, { body: { metadata: { name: `ha-${i}` } }, timeoutMs: 30_000 });
        if (res.status === 201) acked.push({ name: `ha-${i}`, rv: Number(res.body.metadata.resourceVersion), at: Date.now() });
        else failures.push(res.status);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await waitFor(() => acked.length >= 10, 20_000);
    killedAt = Date.now();
    await c.kill('storage');
    // Writes go on through the other process; their events come once it publishes.
    const resumed = await waitFor(() => acked.some((a) => a.at > killedAt && arrived.has(a.name)), 30_000);
    await waitFor(() => acked.filter((a) => a.at > killedAt).length >= 5 + acked.filter((a) => a.at <= killedAt).length, 10_000);
    writing = false;
    await writer;
    await waitFor(() => failed || acked.every((a) => arrived.has(a.name)), 10_000, 20);
    done.abort();
    const { events } = await watching;
    expect(resumed, 'events again after the publisher was killed').to.equal(true);
    expect(failures.filter((s) => ![429, 500, 503, 504].includes(s)), 'write failures that are not retryable').to.deep.equal([]);
    const changes = events.filter((e) => e.type !== 'ERROR' && e.type !== 'BOOKMARK');
    const rvs = changes.map((e) => Number(e.object.metadata.resourceVersion));
    expect(rvs, 'in revision order, without duplicate').to.deep.equal([...new Set(rvs)].sort((a, b) => a - b));
    if (events.some((e) => e.type === 'ERROR')) {
      // Told: a relist has every acknowledged write.
      const list = await c.request('GET', cms);
      const names = new Set(list.body.items.map((o: any) => o.metadata.name));
      expect(acked.filter((a) => !names.has(a.name)).map((a) => a.name)).to.deep.equal([]);
    } else {
      expect(acked.filter((a) => !arrived.has(a.name)).map((a) => a.name), 'acknowledged writes the watcher missed').to.deep.equal([]);
    }
    const takeover = Math.max(...acked.filter((a) => a.at > killedAt).map((a) => arrived.get(a.name)! - a.at));
    console.log(`      takeover: events of writes acknowledged after the kill arrived at most ${takeover} ms late (${acked.length} writes, watch ${events.some((e) => e.type === 'ERROR') ? 'ended with an error' : 'complete'})`);
    expect(takeover, 'ms until the other replica published').to.be.lessThan(8000);
  });

  it('a publisher frozen past its lease: the other takes over, and the thawed one publishes nothing', async function () {
    this.timeout(120_000);
    const publisherPid = async () => Number(String((await etcd.range({ key: new EtcdKeys('/registry').publisherKey })).kvs[0]?.value ?? '').split('/').pop());
    // The second process publishes and the first serves the gateway (it comes first in its list): SIGTERM hands
    // publishing over at once, and the first starts again as a standby (the test before may have killed it).
    const second = c.replicas.get('storage-2')!;
    await c.kill('storage', 'SIGTERM');
    expect(await waitFor(async () => (await publisherPid()) === second.proc.pid, 15_000), 'the second process publishes').to.equal(true);
    await c.startService('storage');
    const first = c.procs.get('storage')!.pid;

    // Every message on the event stream, as it arrives.
    const nc = await connect({ servers: c.natsUrl });
    const stream: Array<{ revision: number; prev: number; at: number }> = [];
    nc.subscribe(subscriptionSubject(''), {
      callback: (_err, msg) => { stream.push({ revision: Number(msg.headers?.get(REVISION_HEADER)), prev: Number(msg.headers?.get(PREV_REVISION_HEADER)), at: Date.now() }); },
    });
    await nc.flush();

    const start = await c.request('POST', cms, { body: { metadata: { name: 'frozen-start' } } });
    expect(start.status, start.text).to.equal(201);
    const arrived = new Map<string, number>();
    let seen = 0;
    let told = false;
    const done = new AbortController();
    const watching = c.watch(`${cms}?watch=1&resourceVersion=${start.body.metadata.resourceVersion}`, {
      timeoutMs: 90_000, signal: done.signal,
      until: (evs) => {
        for (; seen < evs.length; seen++) if (evs[seen].object?.metadata?.name) arrived.set(evs[seen].object.metadata.name, Date.now());
        told ||= evs.some((e) => e.type === 'ERROR');
        return told;
      },
    });
    // A write in flight on the frozen process would wait for it: the writer gives up on one after 3 s and goes on.
    const acked: Array<{ name: string; at: number }> = [];
    const failures: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const res = await c.request('POST', cms, { body: { metadata: { name: `frozen-${i}` } }, timeoutMs: 3000 }).catch((err: Error) => err);
        if (!(res instanceof Error) && res.status === 201) acked.push({ name: `frozen-${i}`, at: Date.now() });
        else failures.push(res instanceof Error ? res.message : String(res.status));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    let thawedAt = 0;
    try {
      expect(await waitFor(() => acked.length >= 10, 20_000), 'writes before the freeze').to.equal(true);
      second.proc.kill('SIGSTOP');
      // Past its lease (5 s) the first process publishes, and events of writes acknowledged since arrive.
      expect(await waitFor(async () => (await publisherPid()) === first, 20_000), 'the first process publishes').to.equal(true);
      const tookOver = Date.now();
      expect(await waitFor(() => acked.some((a) => a.at > tookOver && arrived.has(a.name)), 10_000), 'events after the takeover').to.equal(true);
    } finally {
      thawedAt = Date.now();
      second.proc.kill('SIGCONT');
    }
    expect(await waitFor(() => /stops publishing/.test(second.log.join('')), 10_000), `the thawed process stops publishing:\n${second.log.join('')}`).to.equal(true);
    expect(await waitFor(() => acked.filter((a) => a.at > thawedAt + 1000).length >= 10, 20_000), 'writes after the thaw').to.equal(true);
    writing = false;
    await writer;
    await waitFor(() => told || acked.every((a) => arrived.has(a.name)), 10_000, 20);
    done.abort();
    const { events } = await watching;
    await nc.close();

    // Once thawed, the stream only moves forward: every message is past every revision published before it.
    const late = stream.map((m, i) => ({ ...m, before: Math.max(0, ...stream.slice(0, i).map((p) => p.revision)) }))
      .filter((m) => m.at > thawedAt && m.revision <= m.before);
    expect(late.map((m) => `${m.revision} (prev ${m.prev}) after ${m.before}`), 'messages out of order after the thaw').to.deep.equal([]);
    expect(await publisherPid(), 'the first process still publishes').to.equal(first);
    const rvs = events.filter((e) => e.type !== 'ERROR' && e.type !== 'BOOKMARK').map((e) => Number(e.object.metadata.resourceVersion));
    expect(rvs, 'in revision order, without duplicate').to.deep.equal([...new Set(rvs)].sort((a, b) => a - b));
    if (told) {
      const list = await c.request('GET', cms);
      const names = new Set(list.body.items.map((o: any) => o.metadata.name));
      expect(acked.filter((a) => !names.has(a.name)).map((a) => a.name), 'acknowledged writes missing from a relist').to.deep.equal([]);
    } else {
      expect(acked.filter((a) => !arrived.has(a.name)).map((a) => a.name), 'acknowledged writes the watcher missed').to.deep.equal([]);
    }
    expect(failures.filter((f) => !/^(429|500|503|504)$|timed out/.test(f)), 'write failures that are not retryable').to.deep.equal([]);
    console.log(`      frozen publisher: ${acked.length} writes acknowledged, ${failures.length} failed (${failures.join(', ')}), watch ${told ? 'ended with an error' : 'complete'}`);
  });
});
