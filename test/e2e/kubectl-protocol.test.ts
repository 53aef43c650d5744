// Unmodified kubectl 1.33 over the resource protocol: watch, chunked lists, delete
// --wait, explain and wide output.
import { expect } from 'chai';
import { Cluster } from '../lib/cluster.js';
import { kubectl, type KubectlResult } from '../lib/kubectl.js';

const NS = 'kp';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

describe('kubectl 1.33: watch, chunking, delete --wait, explain, wide output', function () {
  this.timeout(120_000);
  let c: Cluster;
  const k = (args: string[], timeoutMs = 30_000): Promise<KubectlResult> => kubectl(c.kubeconfig, args, { timeoutMs });
  const ok = (r: KubectlResult) => expect(r.code, `stdout: ${r.stdout}\nstderr: ${r.stderr}`).to.equal(0);
  const rows = (out: string) => out.trim().split('\n');

  before(async () => {
    c = await new Cluster().start();
    expect((await c.request('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } })).status).to.equal(201);
    for (let i = 0; i < 5; i++) {
      const data = Object.fromEntries(Array.from({ length: i }, (_, j) => [`k${j}`, 'v']));
      expect((await c.request('POST', CMS, { body: { metadata: { name: `cm-${i}` }, data } })).status).to.equal(201);
    }
    const secret = await c.request('POST', `/api/v1/namespaces/${NS}/secrets`, { body: { metadata: { name: 'tls-like' }, type: 'example.com/custom', stringData: { a: 'b', c: 'd' } } });
    expect(secret.status).to.equal(201);
  });
  after(async () => { await c?.stop(); });

  it('get -w --output-watch-events prints ADDED, MODIFIED and DELETED and ends at --request-timeout', async () => {
    const started = Date.now();
    const watching = k(['get', 'cm', '-n', NS, '--watch-only', '--output-watch-events', '--request-timeout=6s'], 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await c.request('POST', CMS, { body: { metadata: { name: 'watched' }, data: { a: '1' } } })).status).to.equal(201);
    const obj = (await c.request('GET', `${CMS}/watched`)).body;
    expect((await c.request('PUT', `${CMS}/watched`, { body: { ...obj, data: { a: '1', b: '2' } } })).status).to.equal(200);
    expect((await c.request('DELETE', `${CMS}/watched`)).status).to.equal(200);
    const r = await watching;
    expect(Date.now() - started, 'ended by --request-timeout').to.be.lessThan(25_000);
    const out = rows(r.stdout);
    expect(out[0], r.stderr).to.match(/^EVENT\s+NAME\s+DATA\s+AGE$/);
    const events = out.slice(1).filter((l) => /\swatched\s/.test(` ${l} `)).map((l) => l.split(/\s+/).slice(0, 3).join(' '));
    expect(events, r.stdout + r.stderr).to.deep.equal(['ADDED watched 1', 'MODIFIED watched 2', 'DELETED watched 2']);
  });

  it('get --chunk-size=2 pages through more than 2 objects with limit and continue', async () => {
    const r = await k(['get', 'cm', '-n', NS, '--chunk-size=2', '-v=6']);
    ok(r);
    const out = rows(r.stdout);
    expect(out[0]).to.match(/^NAME\s+DATA\s+AGE$/);
    expect(out.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join(' '))).to.deep.equal(['cm-0 0', 'cm-1 1', 'cm-2 2', 'cm-3 3', 'cm-4 4']);
    const requests = r.stderr.split('\n').filter((l) => l.includes('/configmaps?') && l.includes('limit=2'));
    expect(requests.length, r.stderr).to.be.at.least(3);
    expect(requests.filter((l) => l.includes('continue=')).length, 'follow-up chunks carry continue').to.be.at.least(2);
    for (const l of requests) expect(l).to.contain('200 OK');
  });

  it('get --chunk-size=2 -o name across all namespaces lists every object once', async () => {
    const r = await k(['get', 'cm', '-A', '--chunk-size=2', '-o', 'name']);
    ok(r);
    const names = rows(r.stdout);
    expect(names.filter((n) => n.startsWith('configmap/cm-'))).to.deep.equal(['configmap/cm-0', 'configmap/cm-1', 'configmap/cm-2', 'configmap/cm-3', 'configmap/cm-4']);
    expect(new Set(names).size).to.equal(names.length);
  });

  it('delete --wait waits until the last finalizer is removed', async () => {
    const created = await c.request('POST', CMS, { body: { metadata: { name: 'held', finalizers: ['example.com/hold'] } } });
    expect(created.status).to.equal(201);
    const started = Date.now();
    const deleting = k(['delete', 'cm', 'held', '-n', NS, '--wait=true', '--timeout=30s'], 45_000);
    await new Promise((r) => setTimeout(r, 2500));
    const marked = await c.request('GET', `${CMS}/held`);
    expect(marked.status).to.equal(200);
    expect(marked.body.metadata.deletionTimestamp).to.be.a('string');
    const released = await c.request('PATCH', `${CMS}/held`, { body: { metadata: { finalizers: null } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(released.status).to.equal(200);
    const r = await deleting;
    ok(r);
    expect(r.stdout).to.contain('configmap "held" deleted');
    expect(Date.now() - started, 'kubectl waited for the finalizer').to.be.at.least(2500);
    expect((await c.request('GET', `${CMS}/held`)).status).to.equal(404);
  });

  it('delete --wait with a short --timeout fails while a finalizer holds the object', async () => {
    expect((await c.request('POST', CMS, { body: { metadata: { name: 'stuck', finalizers: ['example.com/hold'] } } })).status).to.equal(201);
    const r = await k(['delete', 'cm', 'stuck', '-n', NS, '--wait=true', '--timeout=3s'], 30_000);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.match(/timed out waiting/);
    expect((await c.request('GET', `${CMS}/stuck`)).status).to.equal(200);
    await c.request('PATCH', `${CMS}/stuck`, { body: { metadata: { finalizers: null } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
  });

  it('explain configmap and its fields', async () => {
    const kind = await k(['explain', 'configmap']);
    ok(kind);
    expect(kind.stdout).to.match(/KIND:\s+ConfigMap/).and.match(/VERSION:\s+v1/);
    for (const field of ['apiVersion', 'binaryData', 'data', 'immutable', 'kind', 'metadata']) expect(kind.stdout).to.match(new RegExp(`^\\s+${field}\\s+<`, 'm'));
    const data = await k(['explain', 'configmap.data']);
    ok(data);
    expect(data.stdout).to.match(/FIELD:\s+data\s+<map\[string\]string>/);
    const name = await k(['explain', 'cm.metadata.name']);
    ok(name);
    expect(name.stdout).to.match(/FIELD:\s+name\s+<string>/);
    const missing = await k(['explain', 'configmap.nosuchfield']);
    expect(missing.code).to.not.equal(0);
    expect(missing.stderr).to.contain('nosuchfield');
  });

  it('get -o wide prints the kind\'s columns', async () => {
    const cms = await k(['get', 'cm', 'cm-3', '-n', NS, '-o', 'wide']);
    ok(cms);
    expect(rows(cms.stdout)[0]).to.match(/^NAME\s+DATA\s+AGE$/);
    expect(rows(cms.stdout)[1]).to.match(/^cm-3\s+3\s+\S+$/);
    const secrets = await k(['get', 'secrets', '-n', NS, '-o', 'wide']);
    ok(secrets);
    expect(rows(secrets.stdout)[0]).to.match(/^NAME\s+TYPE\s+DATA\s+AGE$/);
    expect(secrets.stdout).to.match(/^tls-like\s+example\.com\/custom\s+2\s+\S+$/m);
    const nss = await k(['get', 'ns', NS, '-o', 'wide']);
    ok(nss);
    expect(rows(nss.stdout)[0]).to.match(/^NAME\s+STATUS\s+AGE$/);
    expect(rows(nss.stdout)[1]).to.match(new RegExp(`^${NS}\\s+Active\\s+\\S+$`));
  });
});
