// Authentication comes first on every path: health and metrics included, a bad
// credential is 401 everywhere, no credential is the anonymous user when
// anonymous access is on (health paths are then authorized like any other).
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { Cluster, type Response } from '../lib/cluster.js';
import { pkiPaths } from '../../internal/pki/index.js';

const HEALTH = ['/livez', '/readyz', '/healthz', '/livez/ping', '/readyz/ping'];
/** What system:public-info-viewer grants everyone (single checks are not among them). */
const PUBLIC = ['/livez', '/readyz', '/healthz', '/version'];
const SPACE_WARNING = '299 - "the provided Authorization header contains extra space before the bearer token, and is ignored"';

const asAnonymous = (c: Cluster, path: string, authorization?: string): Promise<Response> =>
  c.request('GET', path, { anonymous: true, headers: authorization === undefined ? {} : { Authorization: authorization } });

function expectUnauthorized(res: Response, what: string): void {
  expect(res.status, what).to.equal(401);
  expect(res.body, what).to.deep.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
}

/** The status line of a raw HTTP/1.1 request over TLS, for headers Node's client will not send. */
function rawStatus(c: Cluster, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port: c.port, ca: readFileSync(pkiPaths(c.dataDir).caCert), servername: 'localhost' }, () => socket.end(head));
    let text = '';
    socket.setEncoding('latin1').on('data', (d: string) => { text += d; });
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
    socket.on('close', () => resolve(text.split('\r\n')[0]));
    // Node may reset the connection right after its answer to a bad request: the answer read counts.
    socket.on('error', (err) => (text ? resolve(text.split('\r\n')[0]) : reject(err)));
  });
}

describe('authentication before everything', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-authn-health-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'alice-token,alice,u-1\n');
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('anonymous access off (AlwaysAllow turns it off, as upstream)', () => {
    let c: Cluster;
    before(async () => {
      const allowAll = '--authorization-mode=AlwaysAllow';
      c = await new Cluster({ flags: { authn: [`--token-auth-file=${tokens}`, allowAll], authz: [allowAll] } }).start();
    });
    after(async () => { await c?.stop(); });

    it('health, metrics and API paths answer 401 with a Status to no credential and to an invalid token', async () => {
      for (const path of [...HEALTH, '/metrics', '/version', '/api/v1/namespaces']) {
        expectUnauthorized(await asAnonymous(c, path), `${path} without credentials`);
        expectUnauthorized(await asAnonymous(c, path, 'Bearer not-a-token'), `${path} with an invalid token`);
      }
    });

    it('the admin certificate and a valid token reach them', async () => {
      for (const path of HEALTH) expect((await c.request('GET', path)).status, path).to.equal(200);
      expect((await asAnonymous(c, '/livez', 'Bearer alice-token')).status).to.equal(200);
    });

    it('malformed Authorization headers are 401 (a space before the token also warns); Node refuses headers over 1 MiB (431) and a control character (400); nothing crashes', async () => {
      for (const header of ['Bearer', 'Bearer ', 'Basic YWxpY2U6c2VjcmV0', 'bearer', 'Bearer tökén']) {
        expectUnauthorized(await asAnonymous(c, '/livez', header), JSON.stringify(header));
      }
      const spaced = await asAnonymous(c, '/livez', 'Bearer  alice-token');
      expectUnauthorized(spaced, 'two spaces');
      expect(spaced.headers.warning).to.equal(SPACE_WARNING);
      expectUnauthorized(await asAnonymous(c, '/livez', `Bearer ${'a'.repeat(20_000)}`), 'a 20 kB token');
      // Node answers 431 and closes at once; the client may see the reset before it reads the answer.
      const huge = await asAnonymous(c, '/livez', `Bearer ${'a'.repeat(1_100_000)}`).then((r) => r.status, (err: NodeJS.ErrnoException) => err.code);
      expect(huge).to.be.oneOf([431, 'ECONNRESET', 'EPIPE']);
      expect(await rawStatus(c, 'GET /livez HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer a\u0001b\r\n\r\n')).to.equal('HTTP/1.1 400 Bad Request');
      expect((await c.request('GET', '/readyz')).status).to.equal(200);
      expect(c.procs.get('authn')?.exitCode).to.equal(null);
    });

    it('a token in the query string is not a credential', async () => {
      expectUnauthorized(await asAnonymous(c, '/api/v1/namespaces?access_token=alice-token'), 'access_token');
    });
  });

  describe('anonymous access on (RBAC)', () => {
    let c: Cluster;
    before(async () => {
      const rbac = '--authorization-mode=RBAC';
      c = await new Cluster({ flags: { authn: [rbac, `--token-auth-file=${tokens}`], authz: [rbac] } }).start();
    });
    after(async () => { await c?.stop(); });

    it('no credential is system:anonymous: health paths answer 200, as system:public-info-viewer allows', async () => {
      for (const path of PUBLIC) expect((await asAnonymous(c, path)).status, path).to.equal(200);
      expect((await asAnonymous(c, '/livez')).text).to.equal('ok');
      const single = await asAnonymous(c, '/livez/ping');
      expect(single.status).to.equal(403);
      expect(single.body.message).to.contain('User "system:anonymous" cannot get path "/livez/ping"');
    });

    it('the anonymous user is refused what it is not granted, by name', async () => {
      const res = await asAnonymous(c, '/api/v1/namespaces');
      expect(res.status).to.equal(403);
      expect(res.body.message).to.contain('User "system:anonymous" cannot list resource "namespaces"');
      expect((await asAnonymous(c, '/metrics')).status).to.equal(403);
    });

    it('an invalid token is 401 on health paths too, never anonymous', async () => {
      for (const path of HEALTH) expectUnauthorized(await asAnonymous(c, path, 'Bearer not-a-token'), path);
    });

    it('a header that carries no token leaves the request anonymous (with a warning for a space before the token)', async () => {
      const spaced = await asAnonymous(c, '/livez', 'Bearer  alice-token');
      expect(spaced.status).to.equal(200);
      expect(spaced.headers.warning).to.equal(SPACE_WARNING);
      expect((await asAnonymous(c, '/livez', 'Bearer')).status).to.equal(200);
    });

    it('a token in the query string is ignored: the request stays anonymous', async () => {
      const res = await asAnonymous(c, '/api/v1/namespaces?access_token=alice-token');
      expect(res.status).to.equal(403);
      expect(res.body.message).to.contain('User "system:anonymous"');
    });

    it('an authenticated user is in system:authenticated', async () => {
      const res = await c.request('POST', '/apis/authentication.svc.io/v1/selfsubjectreviews', { anonymous: true, headers: { Authorization: 'Bearer alice-token' }, body: {} });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.status.userInfo).to.deep.equal({ username: 'alice', uid: 'u-1', groups: ['system:authenticated'] });
    });
  });

  describe('--anonymous-auth=false with RBAC', () => {
    let c: Cluster;
    before(async () => {
      c = await new Cluster({ flags: { authn: ['--authorization-mode=RBAC', '--anonymous-auth=false'], authz: ['--authorization-mode=RBAC'] } }).start();
    });
    after(async () => { await c?.stop(); });

    it('health paths answer 401 to no credential', async () => {
      for (const path of HEALTH) expectUnauthorized(await asAnonymous(c, path), path);
      expect((await c.request('GET', '/livez')).status).to.equal(200);
    });
  });
});
