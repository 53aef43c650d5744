import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { Cluster, waitFor } from '../lib/cluster.js';
import { OtlpCollector } from '../lib/otlp.js';
import { kubectl } from '../lib/kubectl.js';
import { asToken, writeTokenKubeconfig } from '../lib/tokens.js';
import { authCounts } from '../lib/metrics.js';
import { pkiPaths } from '../../internal/pki/index.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const SA_PATH = '/api/v1/namespaces/default/serviceaccounts';

describe('service-account tokens: TokenRequest, verification, revocation, issuer discovery', function () {
  this.timeout(90_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-satokens-'));
  let c: Cluster;
  let collector: OtlpCollector;
  /** Every token issued or made here, to be looked for where none may appear. */
  const seen: string[] = [];
  before(async () => {
    collector = await new OtlpCollector().start();
    c = await new Cluster({ flags: { authn: ['--service-account-max-token-expiration=2h'] }, env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint } }).start();
  });
  after(async () => { await c?.stop(); await collector?.stop(); rmSync(dir, { recursive: true, force: true }); });

  const createSa = async (name: string) => {
    const res = await c.request('POST', SA_PATH, { body: { metadata: { name } } });
    expect(res.status, res.text).to.equal(201);
    return res.body;
  };
  const requestToken = async (name: string, spec: Record<string, unknown> = {}) => {
    const res = await c.request('POST', `${SA_PATH}/${name}/token`, { body: { apiVersion: 'authentication.svc.io/v1', kind: 'TokenRequest', spec } });
    if (res.body?.status?.token) seen.push(res.body.status.token);
    return res;
  };
  const review = (token: string, audiences?: string[]) =>
    c.request('POST', '/apis/authentication.svc.io/v1/tokenreviews', { body: { spec: { token, ...(audiences ? { audiences } : {}) } } });
  const refused = async (token: string) => (await asToken(c, token)).status === 401;

  it('kubectl create token prints a token kubectl then authenticates with', async () => {
    await createSa('builder');
    const created = await kubectl(c.kubeconfig, ['create', 'token', 'builder']);
    expect(created.code, created.stderr).to.equal(0);
    const token = created.stdout.trim();
    expect(token.split('.')).to.have.length(3);
    const config = writeTokenKubeconfig(c, join(dir, 'builder.kubeconfig'), token);
    const who = await kubectl(config, ['auth', 'whoami', '-o', 'json']);
    expect(who.code, who.stderr).to.equal(0);
    const info = JSON.parse(who.stdout).status.userInfo;
    expect(info.username).to.equal('system:serviceaccount:default:builder');
    expect(info.groups).to.include.members(['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
    expect(info.extra['authentication.svc.io/credential-id'][0]).to.match(/^JTI=[0-9a-f-]{36}$/);
    const bound = await kubectl(c.kubeconfig, ['create', 'clusterrolebinding', 'builder-view', '--clusterrole=view', '--serviceaccount=default:builder']);
    expect(bound.code, bound.stderr).to.equal(0);
    const list = await kubectl(config, ['get', 'namespaces', '-o', 'name']);
    expect(list.code, list.stderr).to.equal(0);
    expect(list.stdout).to.include('namespace/default');
  });

  it('a TokenRequest is defaulted as upstream and its token carries the claims', async () => {
    const sa = await createSa('claims');
    const res = await requestToken('claims');
    expect(res.status, res.text).to.equal(201);
    expect(res.body.kind).to.equal('TokenRequest');
    expect(res.body.spec.expirationSeconds).to.equal(3600);
    expect(res.body.spec.audiences).to.deep.equal([ISSUER]);
    const token = res.body.status.token;
    const expiry = Date.parse(res.body.status.expirationTimestamp);
    expect(expiry - Date.now()).to.be.within(3500_000, 3601_000);
    const jwks = await c.request('GET', '/openid/v1/jwks');
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(JSON.parse(jwks.text)), { issuer: ISSUER, audience: ISSUER });
    expect(protectedHeader.alg).to.equal('ES256');
    expect(payload.sub).to.equal('system:serviceaccount:default:claims');
    expect(payload['svc.io']).to.deep.equal({ namespace: 'default', serviceaccount: { name: 'claims', uid: sa.metadata.uid } });
    expect(payload.exp! - payload.iat!).to.equal(3600);
  });

  it('a lifetime above --service-account-max-token-expiration is shortened, with a warning', async () => {
    const res = await requestToken('claims', { expirationSeconds: 36_000 });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.spec.expirationSeconds).to.equal(7200);
    expect(res.headers.warning).to.equal('299 - "requested expiration of 36000 seconds shortened to 7200 seconds"');
    const claims = JSON.parse(Buffer.from(res.body.status.token.split('.')[1], 'base64url').toString());
    expect(claims.exp - claims.iat).to.equal(7200);
  });

  it('a TokenRequest is refused when its lifetime, service account or bound object is wrong', async () => {
    await createSa('strict');
    const short = await requestToken('strict', { expirationSeconds: 10 });
    expect(short.status).to.equal(422);
    expect(short.body.reason).to.equal('Invalid');
    expect(short.body.message).to.include('may not specify a duration less than 10 minutes');
    const missing = await requestToken('nobody');
    expect(missing.status).to.equal(404);
    expect(missing.body.message).to.equal('serviceaccounts "nobody" not found');
    const noPod = await requestToken('strict', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'ghost' } });
    expect(noPod.status).to.equal(404);
    await c.request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: 'other-sa' }, spec: { serviceAccountName: 'builder', containers: [{ name: 'c', image: 'nginx' }] } } });
    const otherSa = await requestToken('strict', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'other-sa' } });
    expect(otherSa.status).to.equal(400);
    const wrongUid = await requestToken('builder', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'other-sa', uid: 'not-the-uid' } });
    expect(wrongUid.status).to.equal(409);
    expect(wrongUid.body.reason).to.equal('Conflict');
    const kind = await requestToken('strict', { boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } });
    expect(kind.status).to.equal(400);
    const otherName = await c.request('POST', `${SA_PATH}/strict/token`, { body: { apiVersion: 'authentication.svc.io/v1', kind: 'TokenRequest', metadata: { name: 'builder' }, spec: {} } });
    expect(otherName.status).to.equal(422);
    expect(otherName.body.details.causes[0].field).to.equal('metadata.name');
  });

  it('a token stops working once its service account is deleted', async () => {
    await createSa('short-lived');
    const token = (await requestToken('short-lived')).body.status.token;
    expect((await asToken(c, token)).status).to.equal(200);
    expect((await c.request('DELETE', `${SA_PATH}/short-lived`)).status).to.equal(200);
    expect(await waitFor(() => refused(token), 5000, 50)).to.equal(true);
    const res = await asToken(c, token);
    expect(res.body).to.deep.include({ kind: 'Status', code: 401, reason: 'Unauthorized' });
  });

  it('a repeated request makes no call to the authentication or authorization service; a kept token is refused within 2 s of its ServiceAccount or Secret being deleted', async () => {
    await createSa('kept');
    const anchor = await c.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 'kept-anchor' }, stringData: { a: 'b' } } });
    expect(anchor.status, anchor.text).to.equal(201);
    const plain = (await requestToken('kept')).body.status.token;
    const toSecret = (await requestToken('kept', { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'kept-anchor' } })).body.status.token;
    expect((await asToken(c, plain)).status).to.equal(200);
    expect((await asToken(c, toSecret)).status).to.equal(200);
    const before = await authCounts(c);
    for (let i = 0; i < 20; i++) expect((await asToken(c, i % 2 ? plain : toSecret)).status).to.equal(200);
    const after = await authCounts(c);
    expect(after.hits - before.hits).to.be.at.least(20);
    // Only other clients' entries running out (the admin's, the controller-manager's) may have asked.
    expect(after.authn - before.authn).to.be.below(5);
    expect(after.authz - before.authz).to.be.below(5);

    expect((await c.request('DELETE', '/api/v1/namespaces/default/secrets/kept-anchor')).status).to.equal(200);
    expect(await waitFor(() => refused(toSecret), 2000, 20)).to.equal(true);
    expect((await asToken(c, plain)).status).to.equal(200);
    expect((await c.request('DELETE', `${SA_PATH}/kept`)).status).to.equal(200);
    expect(await waitFor(() => refused(plain), 2000, 20)).to.equal(true);
  });

  it('a token bound to a Pod names the pod and its node, and stops working when the pod is deleted', async () => {
    await createSa('runner');
    await c.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'node-a' } } });
    const pod = await c.request('POST', '/api/v1/namespaces/default/pods', { body: { metadata: { name: 'worker' }, spec: { serviceAccountName: 'runner', nodeName: 'node-a', containers: [{ name: 'c', image: 'nginx' }] } } });
    expect(pod.status, pod.text).to.equal(201);
    const res = await requestToken('runner', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'worker', uid: pod.body.metadata.uid } });
    expect(res.status, res.text).to.equal(201);
    const reviewed = await review(res.body.status.token);
    expect(reviewed.body.status.authenticated).to.equal(true);
    const extra = reviewed.body.status.user.extra;
    expect(extra['authentication.svc.io/pod-name']).to.deep.equal(['worker']);
    expect(extra['authentication.svc.io/pod-uid']).to.deep.equal([pod.body.metadata.uid]);
    expect(extra['authentication.svc.io/node-name']).to.deep.equal(['node-a']);
    expect(extra['authentication.svc.io/node-uid']).to.have.length(1);
    expect((await c.request('DELETE', '/api/v1/namespaces/default/pods/worker?gracePeriodSeconds=0')).status).to.be.oneOf([200, 202]);
    expect(await waitFor(() => refused(res.body.status.token), 5000, 50)).to.equal(true);
  });

  it('tokens bound to a Secret or a Node stop working when it is deleted', async () => {
    await createSa('binder');
    const secret = await c.request('POST', '/api/v1/namespaces/default/secrets', { body: { metadata: { name: 'anchor' }, stringData: { a: 'b' } } });
    const node = await c.request('POST', '/api/v1/nodes', { body: { metadata: { name: 'node-b' } } });
    expect(node.status, node.text).to.equal(201);
    const toSecret = await requestToken('binder', { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'anchor' } });
    const toNode = await requestToken('binder', { boundObjectRef: { kind: 'Node', apiVersion: 'v1', name: 'node-b', uid: node.body.metadata.uid } });
    expect(toSecret.status, toSecret.text).to.equal(201);
    expect(toSecret.body.spec.boundObjectRef).to.deep.equal({ kind: 'Secret', apiVersion: 'v1', name: 'anchor' }); // as asked, like upstream
    const claims = JSON.parse(Buffer.from(toSecret.body.status.token.split('.')[1], 'base64url').toString());
    expect(claims['svc.io'].secret).to.deep.equal({ name: 'anchor', uid: secret.body.metadata.uid });
    expect(toNode.status, toNode.text).to.equal(201);
    const reviewed = await review(toNode.body.status.token);
    expect(reviewed.body.status.user.extra['authentication.svc.io/node-name']).to.deep.equal(['node-b']);
    expect(reviewed.body.status.user.extra['authentication.svc.io/node-uid']).to.deep.equal([node.body.metadata.uid]);
    expect((await asToken(c, toSecret.body.status.token)).status).to.equal(200);
    await c.request('DELETE', '/api/v1/namespaces/default/secrets/anchor');
    await c.request('DELETE', '/api/v1/nodes/node-b');
    expect(await waitFor(() => refused(toSecret.body.status.token), 5000, 50)).to.equal(true);
    expect(await waitFor(() => refused(toNode.body.status.token), 5000, 50)).to.equal(true);
  });

  it('TokenReview audiences: a token is valid only for the audiences it names', async () => {
    await createSa('aud');
    const token = (await requestToken('aud', { audiences: ['vault'] })).body.status.token;
    const ok = await review(token, ['vault', 'other']);
    expect(ok.body.status.authenticated).to.equal(true);
    expect(ok.body.status.audiences).to.deep.equal(['vault']);
    expect((await review(token, ['other'])).body.status.authenticated).to.equal(false);
    expect((await asToken(c, token)).status).to.equal(401); // not for the API
  });

  it('serves the issuer discovery documents', async () => {
    const config = await c.request('GET', '/.well-known/openid-configuration');
    expect(config.status).to.equal(200);
    expect(config.headers['content-type']).to.match(/^application\/json/);
    expect(config.headers['cache-control']).to.equal('public, max-age=3600');
    expect(config.body).to.deep.equal({
      issuer: ISSUER, jwks_uri: `https://127.0.0.1:${c.port}/openid/v1/jwks`,
      response_types_supported: ['id_token'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['ES256'],
    });
    const jwks = await c.request('GET', '/openid/v1/jwks');
    expect(jwks.status).to.equal(200);
    expect(jwks.headers['content-type']).to.match(/^application\/jwk-set\+json/);
    const keys = JSON.parse(jwks.text).keys;
    expect(keys).to.have.length(1);
    expect(keys[0]).to.include({ use: 'sig', kty: 'EC', alg: 'ES256', crv: 'P-256' });
    expect(keys[0]).to.not.have.property('d');
    const token = (await requestToken('builder')).body.status.token;
    expect(decodeProtectedHeader(token).kid).to.equal(keys[0].kid);
  });

  describe('malformed and foreign tokens are a 401 Status and nothing else', () => {
    const servingKey = () => createPrivateKey(readFileSync(pkiPaths(c.dataDir).servingKey));
    let sa: any;
    before(async () => { sa = (await c.request('GET', `${SA_PATH}/builder`)).body; });
    const claims = () => ({ 'svc.io': { namespace: 'default', serviceaccount: { name: 'builder', uid: sa.metadata.uid } } });
    const sign = (key = servingKey(), alg = 'ES256', edit: (j: SignJWT) => SignJWT = (j) => j) => {
      const now = Math.floor(Date.now() / 1000);
      return edit(new SignJWT(claims()).setProtectedHeader({ alg }).setIssuer(ISSUER).setSubject('system:serviceaccount:default:builder')
        .setAudience(ISSUER).setIssuedAt(now).setNotBefore(now).setExpirationTime(now + 600)).sign(key);
    };
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

    it('a well-made token signed with the serving key is accepted (the control case)', async () => {
      expect((await asToken(c, await sign())).status).to.equal(200);
    });

    const cases: Array<[string, () => Promise<string>]> = [
      ['alg none', async () => `${b64({ alg: 'none' })}.${b64({ ...claims(), iss: ISSUER, aud: ISSUER, exp: Math.floor(Date.now() / 1000) + 600 })}.`],
      ['a wrong key', async () => sign(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey)],
      ['an expired token', async () => sign(undefined, undefined, (j) => j.setIssuedAt(Math.floor(Date.now() / 1000) - 7200).setNotBefore(Math.floor(Date.now() / 1000) - 7200).setExpirationTime(Math.floor(Date.now() / 1000) - 3600))],
      ['a future nbf', async () => sign(undefined, undefined, (j) => j.setNotBefore(Math.floor(Date.now() / 1000) + 3600).setExpirationTime(Math.floor(Date.now() / 1000) + 7200))],
      ['a wrong audience', async () => sign(undefined, undefined, (j) => j.setAudience('someone-else'))],
      ['a huge token', async () => `${b64({ alg: 'ES256' })}.${b64({ iss: ISSUER, pad: 'x'.repeat(200_000) })}.${'A'.repeat(86)}`],
      ['a non-ASCII token', async () => `${(await sign()).slice(0, -4)}é\u00ffé`],
      ['not a JWT at all', async () => 'garbage'],
    ];
    for (const [what, make] of cases) {
      it(`refuses ${what}`, async () => {
        const token = await make();
        seen.push(token);
        const res = await asToken(c, token);
        expect(res.status).to.equal(401);
        expect(res.body).to.deep.equal({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
        expect(c.logs.get('authn')!.join('')).to.not.include(token.slice(-20));
      });
    }

    it('never takes a token from the query string', async () => {
      const token = await sign();
      const res = await c.request('GET', `/api/v1/namespaces?access_token=${token}&token=${token}`, { anonymous: true });
      // The request stays anonymous, which RBAC does not let list namespaces.
      expect(res.status).to.equal(403);
      expect(res.body.message).to.contain('User "system:anonymous" cannot list resource "namespaces"');
    });
  });

  for (const domain of ['svc.io', 'kubernetes.io']) {
    it(`a Secret-based (legacy) token authenticates while its Secret (type ${domain}/service-account-token) holds it unmarked`, async () => {
      const name = `builder-token-${domain.split('.')[0]}`;
      const sa = (await c.request('GET', `${SA_PATH}/builder`)).body;
      const legacy = await new SignJWT({
        'svc.io/serviceaccount/namespace': 'default', 'svc.io/serviceaccount/secret.name': name,
        'svc.io/serviceaccount/service-account.name': 'builder', 'svc.io/serviceaccount/service-account.uid': sa.metadata.uid,
      }).setProtectedHeader({ alg: 'ES256' }).setIssuer('svc/serviceaccount').setSubject('system:serviceaccount:default:builder')
        .sign(createPrivateKey(readFileSync(pkiPaths(c.dataDir).servingKey)));
      expect((await asToken(c, legacy)).status).to.equal(401); // no Secret holds it yet
      const secret = await c.request('POST', '/api/v1/namespaces/default/secrets', { body: {
        metadata: { name, annotations: { [`${domain}/service-account.name`]: 'builder' } },
        type: `${domain}/service-account-token`, stringData: { token: legacy },
      } });
      expect(secret.status, secret.text).to.equal(201);
      expect(secret.body.type).to.equal(`${domain}/service-account-token`);
      expect(await waitFor(async () => (await asToken(c, legacy)).status === 200, 5000, 50)).to.equal(true);
      const reviewed = await review(legacy);
      expect(reviewed.body.status.user.username).to.equal('system:serviceaccount:default:builder');
      // Marked invalid with the label in the same spelling: refused, and the review names the label to remove.
      const label = `${domain}/legacy-token-invalid-since`;
      const marked = await c.request('PATCH', `/api/v1/namespaces/default/secrets/${name}`, {
        body: { metadata: { labels: { [label]: '2025-01-01' } } }, headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      expect(marked.status, marked.text).to.equal(200);
      expect(await waitFor(() => refused(legacy), 5000, 50)).to.equal(true);
      expect((await review(legacy)).body.status.error).to.contain(`remove the '${label}' label`);
      await c.request('DELETE', `/api/v1/namespaces/default/secrets/${name}`);
      expect(await waitFor(() => refused(legacy), 5000, 50)).to.equal(true);
    });
  }

  it('no token appears in spans, metrics or logs', async () => {
    const signatures = seen.map((t) => t.split('.')[2]).filter((sig) => sig && sig.length > 20);
    expect(signatures.length).to.be.greaterThan(5);
    const exported = () => collector.exports.join('');
    expect(await waitFor(() => exported().includes('IssueServiceAccountToken') && exported().includes('/token'), 20_000, 200)).to.equal(true);
    const metrics = (await c.request('GET', '/metrics')).text;
    expect(metrics).to.include('apiserver_request_total');
    const logs = [...c.logs.values()].flat().join('');
    for (const sig of signatures) {
      expect(exported(), 'spans').to.not.include(sig);
      expect(metrics, 'metrics').to.not.include(sig);
      expect(logs, 'logs').to.not.include(sig);
    }
  });
});

describe('service-account tokens under RBAC', function () {
  this.timeout(60_000);
  let c: Cluster;
  before(async () => {
    c = await new Cluster({ flags: { authn: ['--authorization-mode=RBAC'], authz: ['--authorization-mode=RBAC'] } }).start();
  });
  after(async () => { await c?.stop(); });

  it('the issuer discovery documents are readable with a service-account token (system:service-account-issuer-discovery), not anonymously', async () => {
    expect((await c.request('POST', SA_PATH, { body: { metadata: { name: 'reader' } } })).status).to.equal(201);
    const token = (await c.request('POST', `${SA_PATH}/reader/token`, { body: { apiVersion: 'authentication.svc.io/v1', kind: 'TokenRequest', spec: {} } })).body.status.token;
    for (const path of ['/.well-known/openid-configuration', '/openid/v1/jwks']) {
      expect((await asToken(c, token, 'GET', path)).status, path).to.equal(200);
      const anonymous = await c.request('GET', path, { anonymous: true });
      expect(anonymous.status, path).to.equal(403);
      expect(anonymous.body.reason).to.equal('Forbidden');
    }
    expect((await asToken(c, token, 'GET', '/api/v1/namespaces/default/secrets')).status).to.equal(403);
  });
});
