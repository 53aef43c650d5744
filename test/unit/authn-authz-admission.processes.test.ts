// The three service programs as processes: each starts on a free port, answers
// its health check and one real call over gRPC, and stops on SIGTERM.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, checkHealth, clientOptions, grpc, RpcError, serve, unary, type RunningServer } from '../../internal/rpc/index.js';
import { ensurePki } from '../../internal/pki/index.js';
import type { AuthenticateResponse__Output as AuthenticateResponse } from '../../internal/rpc/gen/svc/authn/v1/AuthenticateResponse.js';
import type { AuthorizeResponse__Output as AuthorizeResponse } from '../../internal/rpc/gen/svc/authz/v1/AuthorizeResponse.js';
import type { AdmitResponse__Output as AdmitResponse } from '../../internal/rpc/gen/svc/admission/v1/AdmitResponse.js';

type Service = 'authn' | 'authz' | 'admission';
const mainOf = (service: Service) => fileURLToPath(new URL(`../../cmd/${service}/main.js`, import.meta.url));
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;

interface Running {
  child: ChildProcess;
  address: string;
  stderr: () => string;
}

/** Starts a service program on a free port; resolves once it logs its address. */
function start(service: Service, args: string[]): Promise<Running> {
  const child = spawn(process.execPath, [mainOf(service), '--listen=127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${service} did not start: ${stderr}`)); }, START_TIMEOUT_MS);
    child.stdout!.on('data', (d) => {
      stdout += d;
      const match = stdout.match(new RegExp(`^${service} listening on (\\S+)$`, 'm'));
      if (match) { clearTimeout(timer); resolve({ child, address: match[1], stderr: () => stderr }); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${service} exited with ${code}: ${stderr}`)); });
  });
}

/** Sends SIGTERM to the process by PID; resolves with its exit code (SIGKILL after a while). */
function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => process.kill(child.pid!, 'SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', (code) => { clearTimeout(timer); resolve(code); });
    process.kill(child.pid!, 'SIGTERM');
  });
}

/** Runs a program expected to refuse its configuration; resolves with its exit code and stderr. */
function runToExit(service: Service, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [mainOf(service), '--listen=127.0.0.1:0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => process.kill(child.pid!, 'SIGKILL'), START_TIMEOUT_MS);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stderr }); });
  });
}

describe('service processes', () => {
  let dir: string;
  before(() => { dir = mkdtempSync(join(tmpdir(), 'svc-processes-')); });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('authn', () => {
    let running: Running | undefined;
    afterEach(async () => { if (running) await stop(running.child); running = undefined; });

    it('serves Authenticate for client certificates and static tokens', async () => {
      const pki = await ensurePki(join(dir, 'data'));
      const tokenFile = join(dir, 'tokens.csv');
      writeFileSync(tokenFile, 'tok-1,alice,uid-1,"devs,ops"\n');
      running = await start('authn', [`--client-ca-file=${pki.caCert}`, `--token-auth-file=${tokenFile}`, '--authorization-mode=AlwaysAllow']);
      expect(await checkHealth(running.address, 'svc.authn.v1.Authentication')).to.equal(true);

      const client = new api.svc.authn.v1.Authentication(running.address, grpc.credentials.createInsecure(), clientOptions);
      try {
        const adminDer = Buffer.from(readFileSync(pki.adminCert, 'utf8').replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
        const admin = await unary<AuthenticateResponse>(client, client.Authenticate, { peerCertificates: [adminDer], remoteAddress: '127.0.0.1:1' });
        expect(admin).to.deep.include({ authenticated: true, authenticator: 'x509' });
        expect(admin.user?.username).to.equal('admin');
        expect(admin.user?.groups).to.deep.equal(['system:masters', 'system:authenticated']);

        const alice = await unary<AuthenticateResponse>(client, client.Authenticate, { headers: [{ name: 'authorization', values: ['Bearer tok-1'] }] });
        expect(alice.user?.groups).to.deep.equal(['devs', 'ops', 'system:authenticated']);

        const refused = await unary<AuthenticateResponse>(client, client.Authenticate, { headers: [{ name: 'authorization', values: ['Bearer wrong'] }] });
        expect(refused).to.deep.include({ authenticated: false, error: 'invalid bearer token' });

        // AlwaysAllow among the authorization modes turns anonymous access off.
        const nobody = await unary<AuthenticateResponse>(client, client.Authenticate, {});
        expect(nobody.authenticated).to.equal(false);
      } finally {
        client.close();
      }
      expect(await stop(running.child)).to.equal(0);
    });

    it('lets a request without credentials in as system:anonymous with another authorization mode', async () => {
      running = await start('authn', ['--authorization-mode=AlwaysDeny']);
      const client = new api.svc.authn.v1.Authentication(running.address, grpc.credentials.createInsecure(), clientOptions);
      try {
        const res = await unary<AuthenticateResponse>(client, client.Authenticate, { remoteAddress: '127.0.0.1:1' });
        expect(res.user).to.deep.include({ username: 'system:anonymous', groups: ['system:unauthenticated'] });
      } finally {
        client.close();
      }
    });

    it('exits non-zero on a malformed token file', async () => {
      const tokenFile = join(dir, 'bad.csv');
      writeFileSync(tokenFile, 'tok,"unterminated\n');
      const res = await runToExit('authn', [`--token-auth-file=${tokenFile}`]);
      expect(res.code).to.not.equal(0);
      expect(res.stderr).to.include(`token file '${tokenFile}'`);
    });
  });

  describe('authz', () => {
    let running: Running | undefined;
    afterEach(async () => { if (running) await stop(running.child); running = undefined; });

    it('serves Authorize with the configured modes behind the masters group', async () => {
      running = await start('authz', ['--authorization-mode=AlwaysDeny']);
      expect(await checkHealth(running.address, 'svc.authz.v1.Authorization')).to.equal(true);
      const client = new api.svc.authz.v1.Authorization(running.address, grpc.credentials.createInsecure(), clientOptions);
      try {
        const nonResource = { path: '/version', verb: 'get' };
        const jane = await unary<AuthorizeResponse>(client, client.Authorize, { user: { username: 'jane', groups: ['system:authenticated'] }, nonResource });
        expect(jane).to.deep.include({ decision: 'NO_OPINION', reason: 'Everything is forbidden.' });
        const admin = await unary<AuthorizeResponse>(client, client.Authorize, { user: { username: 'admin', groups: ['system:masters'] }, nonResource });
        expect(admin.decision).to.equal('ALLOW');
      } finally {
        client.close();
      }
    });

    it('exits non-zero on an unknown mode', async () => {
      const res = await runToExit('authz', ['--authorization-mode=AlwaysAllow,Magic']);
      expect(res.code).to.not.equal(0);
      expect(res.stderr).to.include('authorization-mode "Magic" is not a valid mode');
    });
  });

  describe('admission', () => {
    let running: Running | undefined;
    let storage: RunningServer;
    before(async () => {
      // A storage service that knows the namespace `default` only.
      storage = await serve('127.0.0.1:0', [{
        name: 'svc.storage.v1.Storage',
        definition: api.svc.storage.v1.Storage.service,
        handlers: {
          Get: async ({ key }: { key: string }) => {
            if (key !== 'core/namespaces//default') throw new RpcError(grpc.status.NOT_FOUND, `key ${key} not found`);
            const value = Buffer.from(JSON.stringify({ metadata: { name: 'default' }, status: { phase: 'Active' } }));
            return { kv: { key, value, modRevision: 1, createRevision: 1, uid: 'ns-uid' }, revision: 1 };
          },
          // Nothing else is stored (plugins that list, e.g. ResourceQuota, find no quota).
          List: async () => ({ items: [], revision: 1, more: false }),
        },
      }]);
    });
    after(() => storage.stop());
    afterEach(async () => { if (running) await stop(running.child); running = undefined; });

    it('serves Admit, reading namespaces from the storage service', async () => {
      running = await start('admission', [`--storage-address=127.0.0.1:${storage.port}`]);
      expect(await checkHealth(running.address, 'svc.admission.v1.Admission')).to.equal(true);
      const client = new api.svc.admission.v1.Admission(running.address, grpc.credentials.createInsecure(), clientOptions);
      const create = (namespace: string) => ({
        kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' },
        name: 'cm', namespace, operation: 'CREATE' as const,
        object: Buffer.from(JSON.stringify({ metadata: { name: 'cm', namespace } })),
      });
      try {
        expect((await unary<AdmitResponse>(client, client.Admit, create('default'))).allowed).to.equal(true);
        const missing = await unary<AdmitResponse>(client, client.Admit, create('missing'));
        expect(missing).to.deep.include({ allowed: false, code: 404, reason: 'NotFound', message: 'namespaces "missing" not found' });
      } finally {
        client.close();
      }
    });

    it('exits non-zero on an unknown plugin', async () => {
      const res = await runToExit('admission', ['--enable-admission-plugins=NamespaceLifecycle,NoSuchPlugin']);
      expect(res.code).to.not.equal(0);
      expect(res.stderr).to.include('enable-admission-plugins plugin "NoSuchPlugin" is unknown');
    });
  });
});
