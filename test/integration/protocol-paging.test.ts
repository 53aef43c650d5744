// Document 1, "Watching and paging behavior" 6: limit / continue as a consistent snapshot.
import { expect } from 'chai';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';
import { StorageClient } from '../../internal/storage/client.js';

const NS = 'paging';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const NAMES = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
const names = (res: Response) => res.body.items.map((i: any) => i.metadata.name);
const cont = (token: string) => `continue=${encodeURIComponent(token)}`;

function expectStatus(res: Response, code: number, reason: string): void {
  expect(res.status, res.text).to.equal(code);
  expect(res.body, res.text).to.include({ kind: 'Status', status: 'Failure', code, reason });
}

/** Follows continue tokens to the end; every chunk is checked to be at most `limit` long. */
async function pageAll(c: Cluster, path: string, limit: number): Promise<Response[]> {
  const chunks: Response[] = [];
  let token = '';
  for (let i = 0; i < 50; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await c.request('GET', `${path}${sep}limit=${limit}${token ? `&${cont(token)}` : ''}`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.items.length).to.be.at.most(limit);
    chunks.push(res);
    token = res.body.metadata.continue ?? '';
    if (!token) return chunks;
  }
  throw new Error('paging did not end');
}

describe('protocol: paging with limit and continue', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => {
    c = await new Cluster().start();
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).to.equal(201);
    for (const [i, name] of NAMES.entries()) {
      const res = await c.request('POST', CMS, { body: { metadata: { name, labels: { parity: i % 2 ? 'odd' : 'even' } }, data: { v: '1' } } });
      expect(res.status).to.equal(201);
    }
  });
  after(async () => { await c?.stop(); });

  it('every chunk carries the same metadata.resourceVersion, the exact remainingItemCount, and the last an empty continue', async () => {
    const chunks = await pageAll(c, CMS, 3);
    expect(chunks.map(names)).to.deep.equal([['p0', 'p1', 'p2'], ['p3', 'p4', 'p5'], ['p6']]);
    const rvs = chunks.map((r) => r.body.metadata.resourceVersion);
    expect(new Set(rvs).size, `versions ${rvs}`).to.equal(1);
    expect(chunks[0].body.metadata.remainingItemCount).to.equal(4);
    expect(chunks[1].body.metadata.remainingItemCount).to.equal(1);
    expect(chunks[2].body.metadata).not.to.have.property('remainingItemCount');
    expect(chunks[2].body.metadata.continue ?? '').to.equal('');
  });

  it('changes made between chunks do not appear in later chunks', async () => {
    const first = await c.request('GET', `${CMS}?limit=3`);
    expect(names(first)).to.deep.equal(['p0', 'p1', 'p2']);
    const snapshot = first.body.metadata.resourceVersion;
    // Meanwhile: a new object after the cursor, one deleted and one changed ahead of it.
    expect((await c.request('POST', CMS, { body: { metadata: { name: 'p9' }, data: { v: 'new' } } })).status).to.equal(201);
    const p4 = (await c.request('GET', `${CMS}/p4`)).body;
    expect((await c.request('PUT', `${CMS}/p4`, { body: { ...p4, data: { v: 'changed' } } })).status).to.equal(200);
    expect((await c.request('DELETE', `${CMS}/p5`)).status).to.equal(200);

    const second = await c.request('GET', `${CMS}?limit=3&${cont(first.body.metadata.continue)}`);
    expect(second.status, second.text).to.equal(200);
    expect(second.body.metadata.resourceVersion).to.equal(snapshot);
    expect(names(second)).to.deep.equal(['p3', 'p4', 'p5']);
    expect(second.body.items[1].data).to.deep.equal({ v: '1' });
    for (const item of second.body.items) expect(Number(item.metadata.resourceVersion)).to.be.at.most(Number(snapshot));
    const third = await c.request('GET', `${CMS}?limit=3&${cont(second.body.metadata.continue)}`);
    expect(names(third)).to.deep.equal(['p6']);
    expect(third.body.metadata.resourceVersion).to.equal(snapshot);
    expect(third.body.metadata.continue ?? '').to.equal('');

    // A new listing sees the changes.
    const fresh = await c.request('GET', CMS);
    expect(names(fresh)).to.deep.equal(['p0', 'p1', 'p2', 'p3', 'p4', 'p6', 'p9']);
    expect(Number(fresh.body.metadata.resourceVersion)).to.be.greaterThan(Number(snapshot));
  });

  it('a limit of at least the collection size answers everything, without continue or remainingItemCount', async () => {
    const res = await c.request('GET', `${CMS}?limit=100`);
    expect(names(res)).to.deep.equal(['p0', 'p1', 'p2', 'p3', 'p4', 'p6', 'p9']);
    expect(res.body.metadata.continue ?? '').to.equal('');
    expect(res.body.metadata).not.to.have.property('remainingItemCount');
  });

  it('with a label or field selector remainingItemCount is omitted and the chunks hold only matches', async () => {
    for (const selector of ['labelSelector=parity%3Deven', 'fieldSelector=metadata.name%21%3Dp1']) {
      const chunks = await pageAll(c, `${CMS}?${selector}`, 2);
      for (const chunk of chunks) expect(chunk.body.metadata, selector).not.to.have.property('remainingItemCount');
      expect(chunks.length, selector).to.be.greaterThan(1);
      const all = chunks.flatMap(names);
      if (selector.startsWith('label')) expect(all).to.deep.equal(['p0', 'p2', 'p4', 'p6']);
      else expect(all).to.deep.equal(['p0', 'p2', 'p3', 'p4', 'p6', 'p9']);
    }
  });

  it('pages through a collection across all namespaces', async () => {
    const whole = await c.request('GET', '/api/v1/configmaps');
    const expected = whole.body.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`);
    const chunks = await pageAll(c, '/api/v1/configmaps', 2);
    expect(chunks.flatMap((r) => r.body.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`))).to.deep.equal(expected);
    expect(chunks[0].body.metadata.remainingItemCount).to.equal(expected.length - 2);
  });

  it('continue with a non-zero resourceVersion: 400', async () => {
    const first = await c.request('GET', `${CMS}?limit=2`);
    const res = await c.request('GET', `${CMS}?limit=2&resourceVersion=${first.body.metadata.resourceVersion}&${cont(first.body.metadata.continue)}`);
    expectStatus(res, 400, 'BadRequest');
    expect(res.body.message).to.match(/continue/i);
  });

  it('a tampered or garbage continue token: 400', async () => {
    const first = await c.request('GET', `${CMS}?limit=2`);
    const token: string = first.body.metadata.continue;
    for (const bad of ['not-a-token', token.slice(0, Math.floor(token.length / 2)), [...token].reverse().join(''), Buffer.from('{"rv":"x"}').toString('base64')]) {
      const res = await c.request('GET', `${CMS}?limit=2&${cont(bad)}`);
      expectStatus(res, 400, 'BadRequest');
    }
  });

  it('a token older than the compacted history: 410 Gone, reason Expired', async () => {
    const first = await c.request('GET', `${CMS}?limit=2`);
    const token = first.body.metadata.continue;
    expect((await c.request('POST', CMS, { body: { metadata: { name: 'after-token' } } })).status).to.equal(201);
    const storage = new StorageClient(c.addresses.storage);
    try {
      await storage.compact((await storage.currentRevision()).revision);
    } finally {
      storage.close();
    }
    expectStatus(await c.request('GET', `${CMS}?limit=2&${cont(token)}`), 410, 'Expired');
    // A new listing works.
    const again = await pageAll(c, CMS, 4);
    expect(again.flatMap(names)).to.include.members(['p0', 'after-token']);
  });
});

describe('protocol: continue tokens expire with the history window', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => {
    c = await new Cluster({ flags: { storage: ['--history-window=2s'] } }).start();
    for (const name of ['x0', 'x1', 'x2']) {
      expect((await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name } } })).status).to.equal(201);
    }
  });
  after(async () => { await c?.stop(); });

  it('a token is good at first and answers 410 Expired once older than --history-window', async () => {
    const path = '/api/v1/namespaces/default/configmaps?limit=1';
    const first = await c.request('GET', path);
    const token = first.body.metadata.continue;
    const soon = await c.request('GET', `${path}&${cont(token)}`);
    expect(soon.status, soon.text).to.equal(200);
    expect(names(soon)).to.deep.equal(['x1']);
    // A later write, so that the token's version is no longer the newest.
    expect((await c.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'x3' } } })).status).to.equal(201);
    let last: Response | undefined;
    const expired = await waitFor(async () => {
      last = await c.request('GET', `${path}&${cont(token)}`);
      return last.status !== 200;
    }, 15_000, 500);
    expect(expired, 'token still accepted 15 s after a 2 s window').to.equal(true);
    expectStatus(last!, 410, 'Expired');
  });
});
