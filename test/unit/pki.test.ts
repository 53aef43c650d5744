import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import type { AddressInfo } from 'node:net';
import YAML from 'yaml';
import { ensurePki, writeAdminKubeconfig, type PkiPaths } from '../../internal/pki/index.js';

const OID_SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const OID_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const cert = (path: string) => new X509Certificate(readFileSync(path));

/** Runs a command with a time limit; resolves with its exit code and output. */
function run(cmd: string, args: string[], timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, out }); });
  });
}

describe('pki', () => {
  let dataDir: string;
  let paths: PkiPaths;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'pki-test-'));
    paths = await ensurePki(dataDir);
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('creates a CA, a serving and an admin certificate under <dataDir>/pki', () => {
    expect(paths.dir).to.equal(join(dataDir, 'pki'));
    for (const p of [paths.caCert, paths.caKey, paths.servingCert, paths.servingKey, paths.adminCert, paths.adminKey]) {
      expect(existsSync(p), p).to.equal(true);
    }
    const ca = cert(paths.caCert);
    expect(ca.ca).to.equal(true);
    expect(Date.parse(ca.validTo) - Date.now()).to.be.greaterThan(9 * 365 * 24 * 3600 * 1000);
  });

  it('signs the serving certificate with the CA, for the loopback addresses and localhost', () => {
    const ca = cert(paths.caCert);
    const serving = cert(paths.servingCert);
    expect(serving.checkIssued(ca)).to.equal(true);
    expect(serving.verify(ca.publicKey)).to.equal(true);
    expect(serving.ca).to.equal(false);
    expect(serving.subjectAltName).to.include('IP Address:127.0.0.1').and.include('DNS:localhost');
    expect(serving.checkIP('::1')).to.equal('::1');
    expect(serving.keyUsage).to.deep.equal([OID_SERVER_AUTH]);
  });

  it('issues the admin client certificate as admin in system:masters', () => {
    const admin = cert(paths.adminCert);
    expect(admin.verify(cert(paths.caCert).publicKey)).to.equal(true);
    expect(admin.subject.split('\n')).to.have.members(['CN=admin', 'O=system:masters']);
    expect(admin.keyUsage).to.deep.equal([OID_CLIENT_AUTH]);
  });

  it('writes private keys readable by the owner only', () => {
    for (const key of [paths.caKey, paths.servingKey, paths.adminKey]) {
      expect(statSync(key).mode & 0o777, key).to.equal(0o600);
      expect(readFileSync(key, 'utf8')).to.match(/^-----BEGIN PRIVATE KEY-----/);
    }
  });

  it('reuses the files on later calls', async () => {
    const before = [paths.caCert, paths.servingCert, paths.adminCert].map((p) => readFileSync(p, 'utf8'));
    await ensurePki(dataDir);
    const after = [paths.caCert, paths.servingCert, paths.adminCert].map((p) => readFileSync(p, 'utf8'));
    expect(after).to.deep.equal(before);
  });

  it('agrees on one CA when called concurrently in a fresh directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pki-race-'));
    try {
      const [a, b] = await Promise.all([ensurePki(dir), ensurePki(dir)]);
      const ca = cert(a.caCert);
      expect(cert(b.servingCert).verify(ca.publicKey)).to.equal(true);
      expect(cert(b.adminCert).verify(ca.publicKey)).to.equal(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reissues the serving certificate under the same CA when a host is added', async () => {
    const caBefore = readFileSync(paths.caCert, 'utf8');
    await ensurePki(dataDir, { servingHosts: ['10.1.2.3', 'api.example.test'] });
    const serving = cert(paths.servingCert);
    expect(readFileSync(paths.caCert, 'utf8')).to.equal(caBefore);
    expect(serving.checkIP('10.1.2.3')).to.equal('10.1.2.3');
    expect(serving.checkHost('api.example.test')).to.equal('api.example.test');
    expect(serving.checkIP('127.0.0.1')).to.equal('127.0.0.1');
    expect(serving.verify(cert(paths.caCert).publicKey)).to.equal(true);
  });

  describe('over TLS', () => {
    let server: Server;
    let port: number;
    before(async () => {
      server = createServer({
        cert: readFileSync(paths.servingCert), key: readFileSync(paths.servingKey),
        ca: readFileSync(paths.caCert), requestCert: true, rejectUnauthorized: true,
      }, (req, res) => {
        const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate();
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ major: '1', minor: '34', gitVersion: `v1.34.0-${peer.subject.CN}` }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('lets a Node client with the admin certificate complete a mutual handshake', async () => {
      const authorized = await new Promise<boolean>((resolve, reject) => {
        const socket = connect({
          host: '127.0.0.1', port, servername: 'localhost',
          ca: readFileSync(paths.caCert), cert: readFileSync(paths.adminCert), key: readFileSync(paths.adminKey),
        }, () => { resolve(socket.authorized); socket.end(); });
        socket.on('error', reject);
        socket.setTimeout(5000, () => socket.destroy(new Error('handshake timed out')));
      });
      expect(authorized).to.equal(true);
    });

    it('writes an admin kubeconfig with embedded credentials that kubectl uses unchanged', async function () {
      const path = await writeAdminKubeconfig(dataDir, `https://127.0.0.1:${port}`, paths);
      expect(path).to.equal(join(dataDir, 'admin.kubeconfig'));
      expect(statSync(path).mode & 0o777).to.equal(0o600);
      const config = YAML.parse(readFileSync(path, 'utf8'));
      expect(config['current-context']).to.equal('svc-apiserver');
      expect(config.contexts[0].context).to.deep.equal({ cluster: 'svc-apiserver', user: 'admin' });
      const b64 = (p: string) => readFileSync(p).toString('base64');
      expect(config.clusters[0].cluster['certificate-authority-data']).to.equal(b64(paths.caCert));
      expect(config.users[0].user['client-certificate-data']).to.equal(b64(paths.adminCert));
      expect(config.users[0].user['client-key-data']).to.equal(b64(paths.adminKey));

      const kubectl = await run('kubectl', ['version', '--client'], 10_000).catch(() => undefined);
      if (!kubectl || kubectl.code !== 0) this.skip();
      const result = await run('kubectl', ['--kubeconfig', path, 'get', '--raw', '/version', '--request-timeout=10s'], 20_000);
      expect(result.out).to.include('v1.34.0-admin');
      expect(result.code).to.equal(0);
    });
  });
});
