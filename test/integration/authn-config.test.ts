// --authentication-config end to end: CEL claim rules and mappings, user
// validation rules, the anonymous section, reloads and their metrics, and
// start-up failures of the real process.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';
import { CLIENT_ID, OidcProvider } from '../lib/oidc.js';

const SELF_REVIEW = '/apis/authentication.svc.io/v1/selfsubjectreviews';
const AUTHN_MAIN = fileURLToPath(new URL('../../cmd/authn/main.js', import.meta.url));
const RELOADS = 'apiserver_authentication_config_controller_automatic_reloads_total';
const LAST_RELOAD = 'apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds';

function configFor(provider: OidcProvider, usernamePrefix: string, extra: Record<string, unknown> = {}): string {
  return stringify({
    apiVersion: 'apiserver.config.svc.io/v1',
    kind: 'AuthenticationConfiguration',
    jwt: [{
      issuer: { url: provider.issuer, certificateAuthority: provider.caPem, audiences: [CLIENT_ID, 'other'], audienceMatchPolicy: 'MatchAny' },
      claimValidationRules: [
        { expression: "claims.hd == 'example.com'", message: 'the hosted domain must be example.com' },
        { claim: 'tier', requiredValue: 'gold' },
      ],
      claimMappings: {
        username: { expression: `claims.email_verified ? '${usernamePrefix}' + claims.email : ''` },
        groups: { expression: "claims.roles.map(r, 'role:' + r)" },
        uid: { claim: 'sub' },
        extra: [{ key: 'example.org/team', valueExpression: 'claims.team' }],
      },
      userValidationRules: [{ expression: "!user.username.contains(':system')", message: 'no system users' }],
    }],
    anonymous: { enabled: true, conditions: [{ path: '/version' }] },
    ...extra,
  });
}

/** Runs the authn program until it exits; its code and error output. */
function runAuthn(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [AUTHN_MAIN, '--listen=127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    proc.on('close', (code) => { clearTimeout(timer); resolve({ code, stderr }); });
  });
}

/** The value of a metric sample with the given status label. */
function sample(text: string, name: string, status: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(`status="${status}"`) && /apiserver_id_hash="sha256:[0-9a-f]{64}"/.test(l));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('authentication configuration file', function () {
  this.timeout(120_000);
  let provider: OidcProvider;
  let dir: string;
  let file: string;

  before(async () => {
    provider = await new OidcProvider().start();
    dir = mkdtempSync(join(tmpdir(), 'svc-authn-config-'));
    file = join(dir, 'authentication.yaml');
  });
  after(async () => {
    await provider?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('at start-up, the authn process', () => {
    it('exits listing every error of an invalid file', async () => {
      const bad = join(dir, 'bad.yaml');
      writeFileSync(bad, stringify({
        apiVersion: 'apiserver.config.svc.io/v1', kind: 'AuthenticationConfiguration',
        jwt: [
          { issuer: { url: 'http://a.example', audiences: ['x', 'y'] }, claimMappings: { username: { claim: 'sub' } } },
          { issuer: { url: 'http://a.example', audiences: [] }, claimMappings: { username: { expression: 'claims.email' } }, claimValidationRules: [{ expression: '1' }] },
        ],
      }));
      const { code, stderr } = await runAuthn([`--authentication-config=${bad}`]);
      expect(code).to.equal(1);
      for (const error of [
        'jwt[0].issuer.url: Invalid value: "http://a.example": URL scheme must be https',
        'jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences',
        'jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set',
        'jwt[1].issuer.url: Invalid value: "http://a.example": URL scheme must be https',
        'jwt[1].issuer.audiences: Required value: at least one jwt[1].issuer.audiences is required',
        'jwt[1].claimValidationRules[0].expression: Invalid value: "1": must evaluate to bool',
        'jwt[1].claimMappings.username.expression: Invalid value: "claims.email": claims.email_verified must be used',
        'jwt[1].issuer.url: Duplicate value: "http://a.example"',
      ]) expect(stderr).to.contain(error);
      expect(stderr).to.contain('authn: invalid authentication configuration: [');
    });

    it('exits when the file comes with --oidc-* flags or its anonymous section with --anonymous-auth', async () => {
      writeFileSync(file, configFor(provider, 'user:'));
      const withOidc = await runAuthn([`--authentication-config=${file}`, '--oidc-issuer-url=https://issuer.example']);
      expect(withOidc.code).to.equal(1);
      expect(withOidc.stderr).to.contain('authentication-config file and oidc-* flags are mutually exclusive');
      const withAnonymous = await runAuthn([`--authentication-config=${file}`, '--anonymous-auth=false']);
      expect(withAnonymous.code).to.equal(1);
      expect(withAnonymous.stderr).to.contain('--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file');
    });

    it('exits when --oidc-* flags lack the issuer or client id, or name an unsupported algorithm', async () => {
      const partial = await runAuthn(['--oidc-client-id=x']);
      expect(partial.code).to.equal(1);
      expect(partial.stderr).to.contain('oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set');
      const http = await runAuthn(['--oidc-issuer-url=http://issuer.example', '--oidc-client-id=x']);
      expect(http.stderr).to.contain('jwt[0].issuer.url: Invalid value: "http://issuer.example": URL scheme must be https');
      const alg = await runAuthn(['--oidc-issuer-url=https://issuer.example', '--oidc-client-id=x', '--oidc-signing-algs=RS256,HS256']);
      expect(alg.code).to.equal(1);
      expect(alg.stderr).to.contain('oidc: unsupported signing alg: "HS256"');
    });
  });

  describe('in a running server', () => {
    let cluster: Cluster;
    const whoami = (token: string): Promise<Response> => cluster.request('POST', SELF_REVIEW, {
      anonymous: true, headers: { Authorization: `Bearer ${token}` }, body: { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' },
    });
    const token = (extra: Record<string, unknown> = {}) => provider.idToken({
      sub: 'u-1', email: 'alice@example.com', email_verified: true, hd: 'example.com', tier: 'gold', roles: ['a', 'b'], team: 'blue', ...extra,
    });
    const usernameOf = async (t: string) => (await whoami(t)).body?.status?.userInfo?.username;
    const metrics = async () => (await cluster.request('GET', '/metrics')).text;
    const expect401 = (res: Response) => {
      expect(res.status).to.equal(401);
      expect(res.body).to.include({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    };

    before(async () => {
      writeFileSync(file, configFor(provider, 'user:'));
      cluster = await new Cluster({ flags: { authn: [`--authentication-config=${file}`] } }).start();
    });
    after(async () => { await cluster?.stop(); });

    it('maps claims through CEL: username, groups, uid and extra', async () => {
      let res: Response | undefined;
      const t = await token();
      expect(await waitFor(async () => (res = await whoami(t)).status === 201, 30_000, 300)).to.equal(true, res?.text);
      expect(res!.body.status.userInfo).to.deep.equal({
        username: 'user:alice@example.com', uid: 'u-1', groups: ['role:a', 'role:b', 'system:authenticated'], extra: { 'example.org/team': ['blue'] },
      });
    });

    it('answers 401 when a claim rule, a required claim or a user rule fails, or the username is empty', async () => {
      expect401(await whoami(await token({ hd: 'other.com' })));
      expect401(await whoami(await token({ tier: undefined })));
      expect401(await whoami(await token({ email: 'x:system@example.com' })));
      expect401(await whoami(await token({ email_verified: false })));
      expect((await whoami(await token({ roles: [] }))).body.status.userInfo.groups).to.deep.equal(['system:authenticated']);
    });

    it('lets anonymous requests reach only the paths of the anonymous section', async () => {
      expect((await cluster.request('GET', '/version', { anonymous: true })).status).to.equal(200);
      // Asked again: the answer the gateway keeps is for this path only.
      const version = await cluster.request('GET', '/version', { anonymous: true });
      expect(version.status).to.equal(200);
      expect(version.body).to.have.property('gitVersion');
      expect401(await cluster.request('GET', '/api', { anonymous: true }));
      expect401(await cluster.request('GET', '/api/v1/namespaces', { anonymous: true }));
    });

    it('reloads a changed file: good, then bad (kept and counted), then good again', async () => {
      const t = await token();
      expect(await usernameOf(t)).to.equal('user:alice@example.com');
      expect(sample(await metrics(), RELOADS, 'success')).to.equal(undefined);

      expect(await usernameOf(t)).to.equal('user:alice@example.com'); // kept by the gateway

      writeFileSync(file, configFor(provider, 'person:'));
      // Once reloaded, the answer the gateway kept is dropped within a second.
      expect(await waitFor(async () => sample(await metrics(), RELOADS, 'success') === 1, 30_000, 100)).to.equal(true);
      expect(await waitFor(async () => (await usernameOf(t)) === 'person:alice@example.com', 1000, 20)).to.equal(true);
      let text = await metrics();
      expect(sample(text, RELOADS, 'success')).to.equal(1);
      expect(sample(text, LAST_RELOAD, 'success')).to.be.within(Date.now() / 1000 - 120, Date.now() / 1000 + 1);

      writeFileSync(file, configFor(provider, 'bad:').replace(`url: ${provider.issuer}`, 'url: http://insecure.example'));
      expect(await waitFor(async () => sample(await metrics(), RELOADS, 'failure') === 1, 30_000, 200)).to.equal(true);
      text = await metrics();
      expect(sample(text, LAST_RELOAD, 'failure')).to.be.greaterThan(0);
      expect(await usernameOf(t)).to.equal('person:alice@example.com');

      writeFileSync(file, configFor(provider, 'again:'));
      expect(await waitFor(async () => (await usernameOf(t)) === 'again:alice@example.com', 30_000, 200)).to.equal(true);
      text = await metrics();
      expect(sample(text, RELOADS, 'success')).to.equal(2);
      expect(sample(text, RELOADS, 'failure')).to.equal(1);
      expect(text).to.match(/apiserver_authentication_config_controller_last_config_info\{[^}]*hash="sha256:[0-9a-f]{64}"[^}]*\} 1/);
    });

    it('refuses a reload that changes the anonymous section', async () => {
      writeFileSync(file, configFor(provider, 'again:', { anonymous: { enabled: true } }));
      expect(await waitFor(async () => sample(await metrics(), RELOADS, 'failure') === 2, 30_000, 200)).to.equal(true);
      expect401(await cluster.request('GET', '/api', { anonymous: true }));
      expect(cluster.logs.get('authn')!.join('')).to.contain('anonymous: Forbidden: changed from initial configuration file');
    });
  });
});
