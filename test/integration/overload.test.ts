// Overload protection and timeouts of the gateway, in a whole cluster with small
// limits: in-flight limits (429 + Retry-After, system:masters exempt, watches
// free), the request timeout (504), slow and oversized requests sent over raw
// TLS, and metric series that junk requests cannot multiply. A real HTTPS
// authorization webhook that answers `slow-*` users late holds requests in flight.
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { pkiPaths } from '../../internal/pki/index.js';
import { Cluster, waitFor } from '../lib/cluster.js';
import { startSarWebhook, type SarWebhook } from '../lib/sarwebhook.js';

const CMS = '/api/v1/namespaces/default/configmaps';
const SLOW_MS = 5_000;
const REQUEST_TIMEOUT = 'Timeout: request did not complete within the allotted timeout';

interface RawAnswer { status: number; body: any; closed: boolean }

describe('overload protection and timeouts', function () {
  this.timeout(90_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-overload-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, ['slow-sam', 'allowed-bob'].map((u) => `${u}-token,${u},uid-${u}`).join('\n') + '\n');
  let hook: SarWebhook;
  let c: Cluster;
  const as = (user: string, method: string, path: string, body?: unknown) =>
    c.request(method, path, { body, anonymous: true, headers: { Authorization: `Bearer ${user}-token` } });

  before(async () => {
    hook = await startSarWebhook(dir, { slowMs: SLOW_MS });
    const webhook = ['--authorization-mode=Webhook,RBAC', `--authorization-webhook-config-file=${hook.kubeconfig}`, '--authorization-webhook-version=v1'];
    c = await new Cluster({
      dataDir: dir, withoutControllerManager: true,
      flags: {
        authn: [`--token-auth-file=${tokens}`, '--authorization-mode=Webhook,RBAC'], authz: webhook,
        gateway: ['--max-requests-inflight=2', '--max-mutating-requests-inflight=1', '--request-timeout=3s'],
      },
    }).start();
  });
  after(async () => {
    await c?.stop();
    await hook?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Sends `head` over a fresh TLS connection as the admin, then `dribble` every 300 ms; reads until the server closes. */
  function raw(head: string | Buffer, opts: { dribble?: string; timeoutMs?: number } = {}): Promise<RawAnswer> {
    const p = pkiPaths(c.dataDir);
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let timer: NodeJS.Timeout | undefined;
      const socket = tls.connect({ host: '127.0.0.1', port: c.port, ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) }, () => {
        socket.write(head);
        if (opts.dribble) timer = setInterval(() => socket.writable && socket.write(opts.dribble!), 300);
      });
      const finish = (closed: boolean) => {
        clearInterval(timer);
        clearTimeout(deadline);
        socket.destroy();
        const text = Buffer.concat(chunks).toString('utf8');
        const json = text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1);
        let body: any;
        try { body = JSON.parse(json); } catch { body = undefined; }
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), body, closed });
      };
      const deadline = setTimeout(() => finish(false), opts.timeoutMs ?? 15_000);
      socket.on('data', (d) => chunks.push(d));
      socket.on('close', () => finish(true));
      socket.on('error', () => undefined); // a reset after the answer: 'close' follows
    });
  }

  const metricsText = async () => (await c.request('GET', '/metrics')).text;

  it('answers 429 TooManyRequests with Retry-After past each in-flight limit, lets system:masters through, and counts the drops', async () => {
    const slowReads = [1, 2].map((i) => as('slow-sam', 'GET', `${CMS}/slow-read-${i}`));
    const slowWrite = as('slow-sam', 'POST', CMS, { metadata: { name: 'slow-write' } });
    expect(await waitFor(() => hook.count('slow-sam') >= 3, 10_000, 50)).to.equal(true);

    const read = await as('allowed-bob', 'GET', CMS);
    expect(read.status, read.text).to.equal(429);
    expect(read.headers['retry-after']).to.equal('1');
    expect(read.body).to.deep.include({ kind: 'Status', status: 'Failure', reason: 'TooManyRequests', code: 429, message: 'Too many requests, please try again later.' });
    expect(read.body.details).to.deep.equal({ retryAfterSeconds: 1 });
    const write = await as('allowed-bob', 'POST', CMS, { metadata: { name: 'refused' } });
    expect(write.status, write.text).to.equal(429);
    expect(write.body.reason).to.equal('TooManyRequests');
    expect((await c.request('GET', CMS)).status, 'system:masters is never refused').to.equal(200);

    const metrics = await metricsText();
    expect(metrics).to.match(/apiserver_dropped_requests_total\{request_kind="readOnly"\} [1-9]/);
    expect(metrics).to.match(/apiserver_dropped_requests_total\{request_kind="mutating"\} [1-9]/);
    expect(metrics).to.match(/apiserver_request_terminations_total\{verb="LIST",group="",version="v1",resource="configmaps",[^}]*code="429"\} [1-9]/);
    expect(await waitFor(async () => /apiserver_current_inflight_requests\{request_kind="readOnly"\} [2-9]/.test(await metricsText()), 5_000)).to.equal(true);

    // Past --request-timeout the client gets 504; the work behind keeps its slot until it ends.
    for (const res of [...await Promise.all(slowReads), await slowWrite]) {
      expect(res.status, res.text).to.equal(504);
      expect(res.body).to.deep.include({ kind: 'Status', reason: 'Timeout', code: 504, message: REQUEST_TIMEOUT });
    }
    expect(await waitFor(async () => (await as('allowed-bob', 'GET', CMS)).status === 200, 10_000, 200)).to.equal(true);
    expect(await waitFor(async () => (await as('allowed-bob', 'POST', CMS, { metadata: { name: 'later' } })).status === 201, 10_000, 200)).to.equal(true);
  });

  it('takes a shorter ?timeout= from the client and refuses one that is not a duration', async () => {
    const res = await as('slow-sam', 'GET', `${CMS}/short?timeout=1s`);
    expect(res.status, res.text).to.equal(504);
    expect(res.body.message).to.equal(REQUEST_TIMEOUT);
    const bad = await c.request('GET', `${CMS}?timeout=soon`);
    expect(bad.status).to.equal(400);
    expect(bad.body).to.deep.include({ reason: 'BadRequest', message: 'invalid timeout specified in the request URL - time: invalid duration "soon"' });
  });

  it('holds no slot and no request timeout for watches', async () => {
    let opened = 0;
    const watches = [1, 2, 3].map(() => c.watch(`${CMS}?watch=1&timeoutSeconds=10&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&labelSelector=w%3D1`, {
      until: (events) => { if (events.length === 1) opened++; return events.some((e) => e.object?.metadata?.name === 'after-timeout'); }, timeoutMs: 15_000,
    }));
    expect(await waitFor(() => opened === 3, 10_000, 50)).to.equal(true);
    expect((await as('allowed-bob', 'GET', CMS)).status, 'three open watches leave the read-only limit of 2 free').to.equal(200);
    await sleep(3_500); // past --request-timeout
    expect((await c.request('POST', CMS, { body: { metadata: { name: 'after-timeout', labels: { w: '1' } } } })).status).to.equal(201);
    for (const watch of await Promise.all(watches)) {
      expect(watch.status).to.equal(200);
      expect(watch.events.map((e) => e.type)).to.deep.equal(['BOOKMARK', 'ADDED']);
    }
  });

  it('ends a client that dribbles its headers with 408, and one whose body never completes with 504', async () => {
    const headers = await raw(`GET ${CMS} HTTP/1.1\r\nHost: 127.0.0.1\r\n`, { dribble: 'X-Slow: 1\r\n' });
    expect(headers.closed).to.equal(true);
    expect(headers.status).to.equal(408);
    expect(headers.body).to.deep.include({ kind: 'Status', reason: 'Timeout', code: 408 });

    const body = await raw(`POST ${CMS} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"metadata":`, { dribble: ' ' });
    expect(body.closed).to.equal(true);
    expect(body.status).to.equal(504);
    expect(body.body).to.deep.include({ kind: 'Status', reason: 'Timeout', code: 504, message: REQUEST_TIMEOUT });
  });

  it('answers headers over 1 MiB with 431 and a URL over 1 MiB with 414, as Status objects', async () => {
    const big = await raw(`GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat((1 << 20) + 10)}\r\n\r\n`);
    expect(big.status).to.equal(431);
    expect(big.body).to.deep.include({ kind: 'Status', reason: 'RequestHeaderFieldsTooLarge', code: 431 });
    const huge = await raw(`GET /api HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(3 << 20)}\r\n\r\n`);
    expect(huge.status, 'past what the parser buffers').to.equal(431);
    expect(huge.body).to.deep.include({ reason: 'RequestHeaderFieldsTooLarge', code: 431 });
    const long = await raw(`GET /api/v1/${'x'.repeat((1 << 20) + 10)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(long.status).to.equal(414);
    expect(long.body).to.deep.include({ kind: 'Status', reason: 'RequestURITooLong', code: 414 });
    expect((await c.request('GET', '/api')).status, 'the server serves on').to.equal(200);
  });

  it('answers a request line the parser refuses with 400: a Status for GET, no body for HEAD', async () => {
    const get = await raw('GET /api/v1/a\x01b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(get.status).to.equal(400);
    expect(get.body).to.deep.include({ kind: 'Status', reason: 'BadRequest', code: 400 });
    const head = await raw('HEAD /api/v1/a\x01b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(head.status).to.equal(400);
    expect(head.body, 'a HEAD answer carries no body').to.equal(undefined);
  });

  it('folds unknown paths, resources, verbs and content types into a fixed set of metric series', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 16 });
    const p = pkiPaths(c.dataDir);
    const creds = { ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) };
    const send = (i: number) => new Promise<number>((resolve, reject) => {
      const kinds: [string, string][] = [['GET', `/junk-${i}/x`], ['GET', `/api/v1/things${i}`], ['GET', `/apis/g${i}.example/v${i}/r${i}`],
        ['PROPFIND', `/junk/${i}`], ['PROPFIND', `/api/v1/namespaces/default/configmaps/c${i}`], ['POST', `/api/v1/namespaces/default/configmaps?dryRun=All&x=${i}`]];
      const [method, path] = kinds[i % kinds.length];
      const req = https.request({ host: '127.0.0.1', port: c.port, method, path, agent, ...creds, headers: { 'Content-Type': `application/x-odd-${i}`, 'Content-Length': '2' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end('{}');
    });
    const run = async (from: number, count: number) => {
      for (let i = from; i < from + count; i += 16) await Promise.all(Array.from({ length: Math.min(16, from + count - i) }, (_, k) => send(i + k)));
    };
    try {
      await run(0, 10); // every kind once: the folded series exist from here on
      // The runtime's own series (a first major GC) are left out: they come and go with the process, not with requests.
      const series = (text: string) => new Set(text.split('\n').filter((l) => !/^(# \w+ )?(nodejs|process)_/.test(l)).map((l) => l.replace(/ [^ ]+$/, '')));
      const before = series(await metricsText());
      await run(10, 2_000);
      const after = await metricsText();
      const added = [...series(after)].filter((l) => !before.has(l));
      expect(added.length, added.join('\n')).to.be.at.most(3);
      expect(after).to.not.match(/junk-|things1|\.example|odd-/);
      expect(after).to.match(/apiserver_request_total\{verb="other",dry_run="",group="",version="",resource="",subresource="",scope="",component="apiserver",code="\d+"\} [1-9]/);
    } finally {
      agent.destroy();
    }
  });

  it('ends a watcher that stops reading with an ERROR event of 410 Expired once its backlog passes the bound', async () => {
    const p = pkiPaths(c.dataDir);
    const socket = tls.connect({ host: '127.0.0.1', port: c.port, ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) });
    const chunks: Buffer[] = [];
    socket.on('error', () => undefined);
    socket.on('data', (d) => chunks.push(d));
    socket.write(`GET ${CMS}?watch=1&labelSelector=big%3Dyes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    try {
      expect(await waitFor(() => chunks.length > 0, 10_000, 20)).to.equal(true);
      expect(String(chunks[0])).to.match(/^HTTP\/1\.1 200/);
      socket.pause(); // the client reads no more
      const data = { blob: 'x'.repeat(900_000) };
      const terminated = /apiserver_terminated_watchers_total\{resource="configmaps"\} 1/;
      let cut = false;
      for (let i = 0; i < 80 && !cut; i++) {
        const res = await c.request('POST', CMS, { body: { metadata: { name: `big-${i}`, labels: { big: 'yes' } }, data } });
        expect(res.status, res.text).to.equal(201);
        cut = terminated.test(await metricsText());
      }
      expect(cut, 'the watcher is cut off before 80 events of 900 kB').to.equal(true);
      socket.resume();
      const ended = () => Buffer.concat(chunks).toString('utf8').endsWith('\r\n0\r\n\r\n');
      expect(await waitFor(ended, 15_000, 50), 'the server ends the stream').to.equal(true);
      const text = Buffer.concat(chunks).toString('utf8');
      const error = /\{"type":"ERROR","object":(\{.*?\})\}\n/.exec(text);
      expect(error, 'an ERROR event ends the stream').to.not.equal(null);
      expect(JSON.parse(error![1])).to.deep.include({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
      expect(text.slice(error!.index)).to.not.match(/"type":"ADDED"/);
    } finally {
      socket.destroy();
      await c.request('DELETE', `${CMS}?labelSelector=big%3Dyes`);
    }
  });
});
