// Webhook token authentication against a real HTTPS TokenReview webhook started
// here (its own CA; it requires the server's client certificate of another CA).
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster } from '../lib/cluster.js';
import { TokenWebhook, type Answer } from '../lib/tokenwebhook.js';

const WHOAMI = '/apis/authentication.svc.io/v1/selfsubjectreviews';
const TOKEN_REVIEWS = '/apis/authentication.svc.io/v1/tokenreviews';
const CACHE_TTL_MS = 3000;
const API_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';

/** The webhook's decisions, by token; the answer carries the version it was asked in. */
const answers: Answer = (review) => {
  const token: string = review.spec.token;
  const reply = (status: unknown) => ({ body: { apiVersion: review.apiVersion, kind: 'TokenReview', status } });
  if (token === 'wh-hang') return 'hang';
  if (token === 'wh-denied') return reply({ authenticated: false, error: 'token revoked' });
  if (token === 'wh-leaky') return reply({ authenticated: false, error: `cannot parse ${token}` });
  if (token === 'wh-other-version') return { body: { apiVersion: 'authentication.svc.io/v0', kind: 'TokenReview', status: { authenticated: true, user: { username: 'x' } } } };
  if (token === 'wh-aud') return reply({ authenticated: true, user: { username: 'aud-user' }, audiences: ['aud-a'] });
  if (token.startsWith('wh-')) {
    return reply({ authenticated: true, user: { username: token, uid: '42', groups: ['wh-devs'], extra: { 'example.com/team': ['blue'] } } });
  }
  return reply({ authenticated: false });
};

const bearer = (token: string) => ({ anonymous: true, headers: { Authorization: `Bearer ${token}` } });


/** Authentication is under test: every authenticated user may do everything. */
const ALLOW_ALL = '--authorization-mode=AlwaysAllow';
describe('webhook token authentication', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-tokenwebhook-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, 'static-token,static-user,s-1\n');
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('v1beta1 (the default), certificate files named by path', () => {
    let webhook: TokenWebhook;
    let c: Cluster;
    before(async () => {
      webhook = await TokenWebhook.create(dir, answers);
      await webhook.start();
      c = await new Cluster({ flags: { authn: [`--token-auth-file=${tokens}`, ALLOW_ALL,
        `--authentication-token-webhook-config-file=${webhook.writeKubeconfig()}`, `--authentication-token-webhook-cache-ttl=${CACHE_TTL_MS}ms`], authz: [ALLOW_ALL] } }).start();
    });
    after(async () => { await c?.stop(); await webhook?.stop(); });

    it('authenticates a token the webhook accepts: a TokenReview of v1beta1 with the token, the user as answered, system:authenticated added', async () => {
      const res = await c.request('POST', WHOAMI, { ...bearer('wh-alice'), body: {} });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.status.userInfo).to.deep.equal({ username: 'wh-alice', uid: '42', groups: ['wh-devs', 'system:authenticated'], extra: { 'example.com/team': ['blue'] } });
      const review = webhook.reviews.find((r) => r.spec.token === 'wh-alice');
      // Asked for the API's own audiences (here the default issuer), as upstream asks.
      expect(review).to.deep.equal({ apiVersion: 'authentication.svc.io/v1beta1', kind: 'TokenReview', spec: { token: 'wh-alice', audiences: [API_AUDIENCE] } });
    });

    it('caches an answer: the webhook is asked once while the TTL lasts, again after it', async () => {
      for (let i = 0; i < 3; i++) expect((await c.request('GET', '/api/v1/namespaces', bearer('wh-cached'))).status).to.equal(200);
      expect(webhook.count('wh-cached')).to.equal(1);
      await sleep(CACHE_TTL_MS + 500);
      expect((await c.request('GET', '/api/v1/namespaces', bearer('wh-cached'))).status).to.equal(200);
      expect(webhook.count('wh-cached')).to.equal(2);
    });

    it('a token the webhook refuses is 401 with a Status body; its error shows in a TokenReview', async () => {
      const res = await c.request('GET', '/api/v1/namespaces', bearer('wh-denied'));
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.include({ kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 });
      const review = await c.request('POST', TOKEN_REVIEWS, { body: { spec: { token: 'wh-denied' } } });
      expect(review.status).to.equal(201);
      expect(review.body.status).to.deep.equal({ authenticated: false, user: {}, error: 'token revoked' });
    });

    it('an answer of another version than the one asked is refused', async () => {
      expect((await c.request('GET', '/api/v1/namespaces', bearer('wh-other-version'))).status).to.equal(401);
      const review = await c.request('POST', TOKEN_REVIEWS, { body: { spec: { token: 'wh-other-version' } } });
      expect(review.body.status.error).to.contain('did not answer a TokenReview of authentication.svc.io/v1beta1');
    });

    it('TokenReview passes spec.audiences on and keeps only the audiences both name; the cache tells audiences apart', async () => {
      const both = await c.request('POST', TOKEN_REVIEWS, { body: { spec: { token: 'wh-aud', audiences: ['aud-a', 'aud-b'] } } });
      expect(both.body.status).to.deep.include({ authenticated: true, audiences: ['aud-a'] });
      expect(both.body.spec).to.deep.equal({ audiences: ['aud-a', 'aud-b'] });
      const sent = webhook.reviews.filter((r) => r.spec.token === 'wh-aud');
      expect(sent.map((r) => r.spec.audiences)).to.deep.equal([['aud-a', 'aud-b']]);
      const none = await c.request('POST', TOKEN_REVIEWS, { body: { spec: { token: 'wh-aud', audiences: ['aud-c'] } } });
      expect(none.body.status.authenticated).to.equal(false);
      expect(webhook.count('wh-aud')).to.equal(2);
    });

    it('static tokens are valid for the API audiences only', async () => {
      const own = await c.request('POST', TOKEN_REVIEWS, { body: { spec: { token: 'static-token', audiences: [API_AUDIENCE, 'other'] } } });
      expect(own.body.status).to.deep.include({ authenticated: true, audiences: [API_AUDIENCE] });
      const other = await c.request('POST', TOKEN_REVIEWS, { body: { spec: { token: 'static-token', audiences: ['other'] } } });
      expect(other.body.status.authenticated).to.equal(false);
    });

    it('a webhook that does not answer costs that token a 401 after a bounded time, and holds up no one else', async () => {
      const hung = c.request('GET', '/api/v1/namespaces', { ...bearer('wh-hang'), timeoutMs: 20_000 });
      const other = await c.request('GET', '/api/v1/namespaces', bearer('static-token'));
      expect(other.status).to.equal(200);
      const res = await hung;
      expect(res.status).to.equal(401);
      expect(res.body.reason).to.equal('Unauthorized');
    });

    it('never logs a token, and blots one out of an error that quotes it', async () => {
      await c.request('GET', '/api/v1/namespaces', bearer('wh-leaky'));
      await c.request('GET', '/api/v1/namespaces', bearer('not-a-known-token'));
      const review = await c.request('POST', TOKEN_REVIEWS, { body: { spec: { token: 'wh-leaky' } } });
      expect(review.body.status.error).to.equal('cannot parse [redacted]');
      const logs = [...c.logs.values()].flat().join('');
      expect(logs).to.contain('unable to authenticate the request');
      for (const token of ['wh-leaky', 'not-a-known-token', 'wh-denied']) expect(logs).to.not.contain(token);
    });
  });

  describe('v1, certificates embedded in the configuration', () => {
    let webhook: TokenWebhook;
    let c: Cluster;
    before(async () => {
      webhook = await TokenWebhook.create(dir, answers);
      await webhook.start();
      c = await new Cluster({ flags: { authn: [`--token-auth-file=${tokens}`, '--authentication-token-webhook-version=v1', ALLOW_ALL,
        `--authentication-token-webhook-config-file=${webhook.writeKubeconfig('v1.kubeconfig', true)}`], authz: [ALLOW_ALL] } }).start();
    });
    after(async () => { await c?.stop(); await webhook?.stop(); });

    it('sends and expects TokenReviews of v1', async () => {
      const res = await c.request('POST', WHOAMI, { ...bearer('wh-bob'), body: {} });
      expect(res.status, res.text).to.equal(201);
      expect(res.body.status.userInfo.username).to.equal('wh-bob');
      expect(webhook.reviews.find((r) => r.spec.token === 'wh-bob').apiVersion).to.equal('authentication.svc.io/v1');
    });

    it('with the webhook gone: its tokens are 401 (cached answers still hold), static tokens still work', async () => {
      await webhook.stop();
      const res = await c.request('GET', '/api/v1/namespaces', bearer('wh-new'));
      expect(res.status).to.equal(401);
      expect(res.body.reason).to.equal('Unauthorized');
      expect((await c.request('GET', '/api/v1/namespaces', bearer('wh-bob'))).status).to.equal(200);
      expect((await c.request('GET', '/api/v1/namespaces', bearer('static-token'))).status).to.equal(200);
    });
  });
});
