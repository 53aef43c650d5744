// OpenID Connect through the --oidc-* flags, against a real provider over HTTPS.
import { expect } from 'chai';
import { generateKeyPair, UnsecuredJWT } from 'jose';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authCounts } from '../lib/metrics.js';
import { Cluster, waitFor, type Response } from '../lib/cluster.js';
import { CLIENT_ID, OidcProvider } from '../lib/oidc.js';

const SELF_REVIEW = '/apis/authentication.svc.io/v1/selfsubjectreviews';

describe('OIDC authentication (--oidc-* flags)', function () {
  this.timeout(120_000);
  let provider: OidcProvider;
  let cluster: Cluster;
  let dir: string;

  const whoami = (token: string): Promise<Response> => cluster.request('POST', SELF_REVIEW, {
    anonymous: true, headers: { Authorization: `Bearer ${token}` }, body: { apiVersion: 'authentication.svc.io/v1', kind: 'SelfSubjectReview' },
  });
  const expectUnauthorized = (res: Response) => {
    expect(res.status).to.equal(401);
    expect(res.body).to.include({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
  };
  const claims = (extra: Record<string, unknown> = {}) =>
    ({ sub: 'u-1', email: 'alice@example.com', email_verified: true, groups: ['dev', 'ops'], hd: 'example.com', tier: 'gold,silver', ...extra });

  before(async () => {
    provider = await new OidcProvider().start();
    dir = mkdtempSync(join(tmpdir(), 'svc-oidc-'));
    writeFileSync(join(dir, 'ca.pem'), provider.caPem);
    // The provider is down while the server starts: start-up must not wait for it.
    await provider.stop();
    cluster = await new Cluster({
      flags: {
        authn: [`--oidc-issuer-url=${provider.issuer}`, `--oidc-client-id=${CLIENT_ID}`, `--oidc-ca-file=${join(dir, 'ca.pem')}`,
          '--oidc-username-claim=email', '--oidc-groups-claim=groups', '--oidc-groups-prefix=oidc:',
          '--oidc-required-claim=hd=example.com', '--oidc-required-claim=tier=gold,silver'],
      },
    }).start();
  });
  after(async () => {
    await cluster?.stop();
    await provider?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts while the provider is down and accepts its tokens once the keys are fetched', async () => {
    await provider.resume();
    const token = await provider.idToken(claims());
    let res: Response | undefined;
    expect(await waitFor(async () => (res = await whoami(token)).status === 201, 40_000, 500)).to.equal(true, res?.text);
    expect(res!.body.status.userInfo).to.deep.equal({
      username: 'alice@example.com', groups: ['oidc:dev', 'oidc:ops', 'system:authenticated'],
    });
  });

  it('takes a single string as the only group', async () => {
    const res = await whoami(await provider.idToken(claims({ groups: 'admins' })));
    expect(res.status).to.equal(201);
    expect(res.body.status.userInfo.groups).to.deep.equal(['oidc:admins', 'system:authenticated']);
  });

  it('refuses an email that is not verified and a missing or different required claim', async () => {
    expectUnauthorized(await whoami(await provider.idToken(claims({ email_verified: false }))));
    expectUnauthorized(await whoami(await provider.idToken(claims({ hd: undefined }))));
    expectUnauthorized(await whoami(await provider.idToken(claims({ tier: 'gold' }))));
    // Without email_verified the email counts (the provider did not say otherwise).
    expect((await whoami(await provider.idToken(claims({ email_verified: undefined })))).status).to.equal(201);
  });

  it('answers 401 for alg none, another key, expiry, a future nbf, another audience or issuer', async () => {
    const now = Math.floor(Date.now() / 1000);
    const none = new UnsecuredJWT({ ...claims(), aud: CLIENT_ID, exp: now + 600 }).setIssuer(provider.issuer).encode();
    const { privateKey: otherKey } = await generateKeyPair('RS256');
    const bad = [
      none,
      await provider.sign(claims(), { key: otherKey as never }),
      await provider.sign(claims({ iat: now - 7200, exp: now - 3600 })),
      await provider.sign(claims({ nbf: now + 3600 })),
      await provider.sign(claims({ aud: 'someone-else' })),
      await provider.sign(claims({ iss: 'https://127.0.0.1:1' })),
      await provider.sign(claims({ exp: undefined })),
    ];
    for (const token of bad) expectUnauthorized(await whoami(token));
    // The same signing path with nothing wrong is accepted, so each refusal is about its one defect.
    expect((await whoami(await provider.sign(claims()))).status).to.equal(201);
  });

  it('a token the gateway keeps is refused once its exp passes', async () => {
    const exp = Math.floor(Date.now() / 1000) + 3;
    const token = await provider.sign(claims({ exp }));
    expect((await whoami(token)).status).to.equal(201);
    const before = await authCounts(cluster);
    expect((await whoami(token)).status).to.equal(201);
    expect((await authCounts(cluster)).hits).to.be.above(before.hits);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp * 1000 + 50 - Date.now())));
    expectUnauthorized(await whoami(token));
  });

  it('in a TokenReview, stands for the API audiences only', async () => {
    const review = (audiences: string[]) => cluster.request('POST', '/apis/authentication.svc.io/v1/tokenreviews', {
      body: { apiVersion: 'authentication.svc.io/v1', kind: 'TokenReview', spec: { token: idToken, audiences } },
    });
    const idToken = await provider.idToken(claims());
    const own = await review(['https://kubernetes.default.svc.cluster.local']);
    expect(own.status).to.equal(201);
    expect(own.body.status).to.deep.include({ authenticated: true, audiences: ['https://kubernetes.default.svc.cluster.local'] });
    expect(own.body.status.user.username).to.equal('alice@example.com');
    const other = await review(['vault']);
    expect(other.status).to.equal(201);
    expect(other.body.status.authenticated).to.not.equal(true);
  });

  it('follows a key rotation: the new key is fetched, the old one is gone', async () => {
    const old = provider.currentKey;
    const oldToken = await provider.sign(claims(), { key: old.privateKey, kid: old.kid });
    expect((await whoami(oldToken)).status).to.equal(201);
    await provider.rotate();
    const fresh = await provider.idToken(claims());
    let res: Response | undefined;
    expect(await waitFor(async () => (res = await whoami(fresh)).status === 201, 40_000, 500)).to.equal(true, res?.text);
    expectUnauthorized(await whoami(oldToken));
  });
});
