import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AuthenticationError, CachedTokenAuthenticator, SPACE_BEFORE_TOKEN_WARNING, WebhookTokenAuthenticator, credentialHeaderNames, newUser, parseBearer,
  type Authenticated, type TokenAuthenticator,
} from '../../internal/authn/index.js';
import { KubeconfigError, parseWebhookKubeconfig } from '../../internal/webhook/kubeconfig.js';
import { AuthnConfigError, RequestHeaderAuthenticator, buildAuthenticationChain, parseCaBundle } from '../../internal/authn/index.js';
import { createCa, issueLeaf, loadCa } from '../../internal/pki/certs.js';

const der = (pem: string): Buffer => parseCaBundle(pem)[0].der;

const headers = (authorization: string) => new Map([['authorization', [authorization]]]);

describe('authn edge', () => {
  describe('the Authorization header', () => {
    it('reads the token as upstream splits it: on single spaces, the second field', () => {
      expect(parseBearer(headers('Bearer abc'))).to.deep.equal({ token: 'abc' });
      expect(parseBearer(headers('bearer abc'))).to.deep.equal({ token: 'abc' });
      expect(parseBearer(headers('  Bearer abc  '))).to.deep.equal({ token: 'abc' });
      expect(parseBearer(headers('Bearer abc def'))).to.deep.equal({ token: 'abc' });
    });

    it('carries no token without one, and warns about a space before it', () => {
      for (const value of ['', 'Bearer', 'Bearer ', 'Basic abc', 'Bearer   abc']) expect(parseBearer(headers(value)), value).to.deep.equal({});
      expect(parseBearer(headers('Bearer  abc'))).to.deep.equal({ warning: SPACE_BEFORE_TOKEN_WARNING });
    });
  });

  describe('credential headers', () => {
    it('names Authorization and the standard and configured proxy headers present', () => {
      const present = ['authorization', 'x-remote-user', 'x-remote-extra-a', 'x-proxy-user', 'x-proxy-extra-b', 'accept', 'impersonate-user'];
      expect(credentialHeaderNames(present, { usernameHeaders: ['x-proxy-user'], groupHeaders: [], extraHeaderPrefixes: ['x-proxy-extra-'], allowedNames: [] }))
        .to.deep.equal(['authorization', 'x-remote-user', 'x-remote-extra-a', 'x-proxy-user', 'x-proxy-extra-b']);
    });
  });

  describe('request headers', () => {
    const config = { usernameHeaders: ['x-remote-user'], groupHeaders: ['x-remote-group'], extraHeaderPrefixes: ['x-remote-extra-'], allowedNames: ['front-proxy'] };
    let authenticator: RequestHeaderAuthenticator;
    let proxy: Buffer;
    let other: Buffer;
    before(async () => {
      const caPem = await createCa('front-proxy-ca', 1);
      const ca = await loadCa(caPem.certPem, caPem.keyPem);
      proxy = der((await issueLeaf(ca, { commonName: 'front-proxy', usage: 'client', validityDays: 1 })).certPem);
      other = der((await issueLeaf(ca, { commonName: 'intruder', usage: 'client', validityDays: 1 })).certPem);
      authenticator = new RequestHeaderAuthenticator(parseCaBundle(caPem.certPem), config);
    });
    const credentials = (peerCertificates: Buffer[]) => ({
      peerCertificates, remoteAddress: '', audiences: [], path: '/',
      headers: new Map([['x-remote-user', ['jane']], ['x-remote-group', ['a,b', 'c']], ['x-remote-extra-bad%zz', ['1']], ['x-remote-extra-acme.com%2fk', ['2']]]),
    });

    it('reads the headers behind an allowed certificate; a key that does not decode is kept as sent', async () => {
      const found = await authenticator.authenticate(credentials([proxy]));
      expect(found?.user).to.deep.equal(newUser('jane', { groups: ['a,b', 'c'], extra: { 'bad%zz': ['1'], 'acme.com/k': ['2'] } }));
    });

    it('has no opinion without a certificate and refuses a common name not allowed', async () => {
      expect(await authenticator.authenticate(credentials([]))).to.equal(undefined);
      await authenticator.authenticate(credentials([other])).then(() => expect.fail('accepted'), (err) => expect(err.message).to.contain('cn=intruder is not in the allowed list'));
    });
  });

  describe('webhook configuration', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-kubeconfig-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'ca.crt'), 'CA');
    const doc = (server: string, user: Record<string, string>, current = 'w') => JSON.stringify({
      clusters: [{ name: 'c', cluster: { server, 'certificate-authority': 'ca.crt' } }],
      users: [{ name: 'u', user }], contexts: [{ name: 'w', context: { cluster: 'c', user: 'u' } }], 'current-context': current,
    });

    it('reads the current context: server, files relative to the configuration, embedded data', () => {
      const endpoint = parseWebhookKubeconfig(doc('https://127.0.0.1:9443/review', {
        'client-certificate-data': Buffer.from('CERT').toString('base64'), 'client-key-data': Buffer.from('KEY').toString('base64'),
      }), dir);
      expect(endpoint.url.href).to.equal('https://127.0.0.1:9443/review');
      expect(String(endpoint.ca)).to.equal('CA');
      expect(String(endpoint.cert)).to.equal('CERT');
      expect(String(endpoint.key)).to.equal('KEY');
    });

    it('refuses http, an unknown context, a certificate without its key, and a missing file', () => {
      expect(() => parseWebhookKubeconfig(doc('http://127.0.0.1/', {}), dir)).to.throw(KubeconfigError, 'must use https');
      expect(() => parseWebhookKubeconfig(doc('https://127.0.0.1/', {}, 'other'), dir)).to.throw(KubeconfigError, 'context "other" not found');
      expect(() => parseWebhookKubeconfig(doc('https://127.0.0.1/', { 'client-certificate-data': 'Q0VSVA==' }), dir)).to.throw(KubeconfigError, 'together');
      expect(() => parseWebhookKubeconfig(doc('https://127.0.0.1/', { 'client-key': 'missing.key' }), dir)).to.throw(KubeconfigError, 'client-key');
    });
  });

  describe('webhook answers', () => {
    const poster = (status: unknown, apiVersion = 'authentication.svc.io/v1beta1') => {
      const sent: any[] = [];
      return { sent, post: async (body: any) => { sent.push(body); return { apiVersion, kind: 'TokenReview', status }; } };
    };

    it('asks for the API audiences by default and takes an answer without audiences as valid for them', async () => {
      const p = poster({ authenticated: true, user: { username: 'u', groups: ['g'] } });
      const found = await new WebhookTokenAuthenticator(p, 'v1beta1', ['api']).authenticateToken('t', []);
      expect(p.sent[0].spec).to.deep.equal({ token: 't', audiences: ['api'] });
      expect(found).to.deep.equal({ user: newUser('u', { groups: ['g'] }), audiences: ['api'], authenticator: 'webhook' });
      expect(await new WebhookTokenAuthenticator(p, 'v1beta1', ['api']).authenticateToken('t', ['other'])).to.equal(undefined);
    });

    it('surfaces status.error and refuses an answer of another version', async () => {
      const refused = new WebhookTokenAuthenticator(poster({ authenticated: false, error: 'expired' }), 'v1beta1');
      await refused.authenticateToken('t', []).then(() => expect.fail('accepted'), (err) => expect(err).to.be.instanceOf(AuthenticationError).with.property('message', 'expired'));
      expect(await new WebhookTokenAuthenticator(poster({ authenticated: false }), 'v1beta1').authenticateToken('t', [])).to.equal(undefined);
      const other = new WebhookTokenAuthenticator(poster({ authenticated: true, user: { username: 'u' } }, 'authentication.svc.io/v1'), 'v1beta1');
      await other.authenticateToken('t', []).then(() => expect.fail('accepted'), (err) => expect(err.message).to.contain('did not answer a TokenReview'));
    });
  });

  describe('configuration errors', () => {
    it('name the flag: an unknown webhook version, a missing webhook file, a missing proxy CA', () => {
      const build = (extra: object) => () => buildAuthenticationChain({ anonymousAuth: false, ...extra });
      expect(build({ webhook: { configFile: '/nonexistent', version: 'v2', cacheTtlMs: 0 } }))
        .to.throw(AuthnConfigError, '--authentication-token-webhook-config-file: unsupported --authentication-token-webhook-version "v2"');
      expect(build({ webhook: { configFile: '/nonexistent/webhook.kubeconfig', version: 'v1', cacheTtlMs: 0 } }))
        .to.throw(AuthnConfigError, "cannot read webhook configuration '/nonexistent/webhook.kubeconfig'");
      expect(build({ requestHeader: { clientCaFile: '/nonexistent/ca.crt', usernameHeaders: [], groupHeaders: [], extraHeaderPrefixes: [], allowedNames: [] } }))
        .to.throw(AuthnConfigError, '--requestheader-client-ca-file');
    });
  });

  describe('token cache', () => {
    const counting = (answer: () => Promise<Authenticated | undefined>) => {
      const calls: string[] = [];
      const inner: TokenAuthenticator = { authenticateToken: async (token, audiences) => { calls.push(`${token}|${audiences.join(',')}`); return answer(); } };
      return { calls, inner };
    };
    const alice: Authenticated = { user: newUser('alice'), audiences: [], authenticator: 'webhook' };

    it('answers from the cache until the TTL passes, per token and audiences, one call for concurrent lookups', async () => {
      let now = 1000;
      const { calls, inner } = counting(async () => alice);
      const cache = new CachedTokenAuthenticator(inner, 100, () => now);
      await Promise.all([cache.authenticateToken('t', []), cache.authenticateToken('t', [])]);
      await cache.authenticateToken('t', []);
      await cache.authenticateToken('t', ['a']);
      expect(calls).to.deep.equal(['t|', 't|a']);
      now += 101;
      expect((await cache.authenticateToken('t', []))?.user.username).to.equal('alice');
      expect(calls).to.have.length(3);
    });

    it('keeps "unknown token" answers but not errors', async () => {
      const unknown = counting(async () => undefined);
      const cache = new CachedTokenAuthenticator(unknown.inner, 1000);
      await cache.authenticateToken('x', []);
      await cache.authenticateToken('x', []);
      expect(unknown.calls).to.have.length(1);
      const failing = counting(async () => { throw new AuthenticationError('down'); });
      const errors = new CachedTokenAuthenticator(failing.inner, 1000);
      for (let i = 0; i < 2; i++) await errors.authenticateToken('x', []).catch(() => undefined);
      expect(failing.calls).to.have.length(2);
    });
  });
});
