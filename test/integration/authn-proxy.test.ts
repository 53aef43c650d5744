// The authenticating proxy: identity headers count only with a client
// certificate of the request-header CA whose common name is allowed.
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster } from '../lib/cluster.js';
import { pkiPaths } from '../../internal/pki/index.js';
import { TestCa, type PemFiles } from '../lib/testpki.js';

const WHOAMI = '/apis/authentication.svc.io/v1/selfsubjectreviews';

/** A POST of a SelfSubjectReview with a client certificate (or none) and headers given as lists, one line per value. */
function whoami(c: Cluster, client: PemFiles | undefined, headers: Record<string, string | string[]>): Promise<{ status: number; body: any }> {
  const body = '{}';
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1', port: c.port, method: 'POST', path: WHOAMI, ca: readFileSync(pkiPaths(c.dataDir).caCert), timeout: 15_000,
      ...(client ? { cert: client.certPem, key: client.keyPem } : {}),
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length), ...headers },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

describe('authenticating proxy (--requestheader-*)', function () {
  this.timeout(90_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-proxy-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'alice-token,alice,u-1\n');
  let c: Cluster;
  let proxy: PemFiles;
  let stranger: PemFiles;
  let admin: PemFiles;
  const identity = {
    'X-Remote-User': 'jane', 'X-Remote-Group': ['devs', 'ops,qa'], 'X-Remote-Extra-Acme.com%2FProject': ['apollo', 'gemini'], 'X-Remote-Extra-Scopes': 'view',
  };

  before(async () => {
    const ca = await TestCa.create(dir, 'front-proxy-ca');
    proxy = await ca.client('front-proxy');
    stranger = await ca.client('other-proxy');
    const rh = [`--requestheader-client-ca-file=${ca.files.cert}`];
    c = await new Cluster({ flags: {
      authn: [...rh, `--token-auth-file=${tokens}`, '--requestheader-username-headers=X-Remote-User',
        '--requestheader-group-headers=X-Remote-Group', '--requestheader-extra-headers-prefix=X-Remote-Extra-', '--requestheader-allowed-names=front-proxy'],
      gateway: rh,
    } }).start();
    const p = pkiPaths(c.dataDir);
    admin = { cert: p.adminCert, key: p.adminKey, certPem: readFileSync(p.adminCert, 'utf8'), keyPem: readFileSync(p.adminKey, 'utf8') };
  });
  after(async () => { await c?.stop(); rmSync(dir, { recursive: true, force: true }); });

  it('honours the headers of the allowed proxy: every group line, extra keys lower-cased and percent-decoded', async () => {
    const res = await whoami(c, proxy, identity);
    expect(res.status).to.equal(201);
    expect(res.body.status.userInfo).to.deep.equal({
      username: 'jane', groups: ['devs', 'ops,qa', 'system:authenticated'], extra: { 'acme.com/project': ['apollo', 'gemini'], scopes: ['view'] },
    });
  });

  it('refuses a certificate of the proxy CA whose common name is not allowed', async () => {
    const res = await whoami(c, stranger, identity);
    expect(res.status).to.equal(401);
    expect(res.body).to.deep.include({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('the proxy without a user header is not anyone', async () => {
    expect((await whoami(c, proxy, { 'X-Remote-Group': 'devs' })).status).to.equal(401);
  });

  it('ignores the headers from the admin certificate', async () => {
    const res = await whoami(c, admin, identity);
    expect(res.status).to.equal(201);
    expect(res.body.status.userInfo.username).to.equal('admin');
    expect(res.body.status.userInfo.groups).to.deep.equal(['system:masters', 'system:authenticated']);
    expect(res.body.status.userInfo).to.not.have.property('extra');
  });

  it('ignores the headers from a token holder', async () => {
    const res = await whoami(c, undefined, { ...identity, Authorization: 'Bearer alice-token' });
    expect(res.status).to.equal(201);
    expect(res.body.status.userInfo).to.deep.equal({ username: 'alice', uid: 'u-1', groups: ['system:authenticated'] });
  });
});
