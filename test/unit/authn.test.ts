import 'reflect-metadata';
import { expect } from 'chai';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AuthenticationChain, AuthnConfigError, BearerTokenAuthenticator, TokenFileAuthenticator, X509Authenticator, authenticateHandler,
  bearerToken, buildAuthenticationChain, parseCaBundle, parseCsv, parseTokenFile, type RequestAuthenticator,
} from '../../internal/authn/index.js';
import type { AuthenticateRequest__Output as AuthenticateRequest } from '../../internal/rpc/gen/svc/authn/v1/AuthenticateRequest.js';

const crypto = webcrypto;
x509.cryptoProvider.set(crypto);
const OID_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const OID_SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const DAY = 24 * 3600 * 1000;

interface Issued {
  cert: x509.X509Certificate;
  key: webcrypto.CryptoKey;
  der: Buffer;
  pem: string;
}

/** A certificate for the tests: a CA when ca is set, else a leaf. */
async function makeCert(opts: {
  cn: string; orgs?: string[]; issuer?: Issued; ca?: boolean; eku?: string[]; notBefore?: Date; notAfter?: Date;
}): Promise<Issued> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await crypto.subtle.generateKey(alg, true, ['sign', 'verify']) as webcrypto.CryptoKeyPair;
  const name: x509.JsonName = [...(opts.orgs ?? []).map((o) => ({ O: [o] })), ...(opts.cn ? [{ CN: [opts.cn] }] : [])];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(Boolean(opts.ca), undefined, true),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
  ];
  if (opts.ca) extensions.push(new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true));
  if (opts.eku) extensions.push(new x509.ExtendedKeyUsageExtension(opts.eku));
  if (opts.issuer) extensions.push(await x509.AuthorityKeyIdentifierExtension.create(opts.issuer.cert.publicKey));
  const cert = await x509.X509CertificateGenerator.create({
    subject: name.length ? name : 'O=none',
    issuer: opts.issuer ? opts.issuer.cert.subjectName : (name.length ? name : 'O=none'),
    notBefore: opts.notBefore ?? new Date(Date.now() - DAY),
    notAfter: opts.notAfter ?? new Date(Date.now() + 30 * DAY),
    publicKey: keys.publicKey,
    signingKey: opts.issuer ? opts.issuer.key : keys.privateKey,
    signingAlgorithm: alg,
    extensions,
  });
  return { cert, key: keys.privateKey, der: Buffer.from(cert.rawData), pem: cert.toString('pem') };
}

function request(opts: { authorization?: string; certs?: Buffer[]; headers?: Record<string, string[]>; path?: string } = {}): AuthenticateRequest {
  const headers = Object.entries(opts.headers ?? {}).map(([name, values]) => ({ name, values }));
  if (opts.authorization) headers.push({ name: 'Authorization', values: [opts.authorization] });
  return { headers, peerCertificates: opts.certs ?? [], remoteAddress: '127.0.0.1:5555', audiences: [], path: opts.path ?? '/api' };
}

const TOKENS = 'secret-token,alice,uid-alice,"devs,ops"\nbob-token,bob,uid-bob\n';

describe('authn', () => {
  let ca: Issued;
  let otherCa: Issued;
  let client: Issued;
  let tokens: TokenFileAuthenticator;
  let chain: (anonymous: boolean, authenticators?: RequestAuthenticator[]) => AuthenticationChain;

  before(async () => {
    ca = await makeCert({ cn: 'test-ca', ca: true, notAfter: new Date(Date.now() + 3650 * DAY) });
    otherCa = await makeCert({ cn: 'other-ca', ca: true });
    client = await makeCert({ cn: 'jane', orgs: ['system:masters', 'team-a'], issuer: ca, eku: [OID_CLIENT_AUTH] });
    tokens = new TokenFileAuthenticator(parseTokenFile(TOKENS, 'tokens.csv').tokens);
    chain = (anonymous, authenticators) => new AuthenticationChain(authenticators
      ?? [new X509Authenticator(parseCaBundle(ca.pem)), new BearerTokenAuthenticator([tokens])], anonymous);
  });

  describe('client certificates', () => {
    it('authenticates the common name with the organizations as groups', async () => {
      const res = await authenticateHandler(chain(true))(request({ certs: [client.der] }));
      expect(res.authenticated).to.equal(true);
      expect(res.authenticator).to.equal('x509');
      expect(res.user?.username).to.equal('jane');
      expect(res.user?.groups).to.deep.equal(['system:masters', 'team-a', 'system:authenticated']);
    });

    it('follows intermediates the client sends', async () => {
      const intermediate = await makeCert({ cn: 'intermediate', ca: true, issuer: ca });
      const leaf = await makeCert({ cn: 'carol', issuer: intermediate, eku: [OID_CLIENT_AUTH] });
      const res = await authenticateHandler(chain(true))(request({ certs: [leaf.der, intermediate.der] }));
      expect(res.user?.username).to.equal('carol');
      const missing = await authenticateHandler(chain(true))(request({ certs: [leaf.der] }));
      expect(missing.authenticated).to.equal(false);
    });

    it('refuses an intermediate that is not a CA', async () => {
      const notCa = await makeCert({ cn: 'not-a-ca', issuer: ca });
      const leaf = await makeCert({ cn: 'carol', issuer: notCa });
      const res = await authenticateHandler(chain(true))(request({ certs: [leaf.der, notCa.der] }));
      expect(res.authenticated).to.equal(false);
      expect(res.error).to.include('not authorized to sign other certificates');
    });

    it('refuses a certificate of another CA without falling back to anonymous', async () => {
      const stranger = await makeCert({ cn: 'mallory', orgs: ['system:masters'], issuer: otherCa, eku: [OID_CLIENT_AUTH] });
      const res = await authenticateHandler(chain(true))(request({ certs: [stranger.der] }));
      expect(res.authenticated).to.equal(false);
      expect(res.user).to.equal(null);
      expect(res.error).to.match(/^verifying certificate SN=\d+, SKID=[0-9A-F:]+, AKID=[0-9A-F:]+ failed: x509: certificate signed by unknown authority$/);
    });

    it('refuses a self-signed certificate', async () => {
      const self = await makeCert({ cn: 'selfie', eku: [OID_CLIENT_AUTH] });
      const res = await authenticateHandler(chain(true))(request({ certs: [self.der] }));
      expect(res.error).to.include('signed by unknown authority');
    });

    it('refuses an expired certificate and one not yet valid', async () => {
      const expired = await makeCert({ cn: 'old', issuer: ca, notBefore: new Date(Date.now() - 10 * DAY), notAfter: new Date(Date.now() - DAY) });
      const res = await authenticateHandler(chain(true))(request({ certs: [expired.der] }));
      expect(res.authenticated).to.equal(false);
      expect(res.error).to.match(/x509: certificate has expired or is not yet valid: current time \S+Z is after \S+Z$/);
      const future = await makeCert({ cn: 'new', issuer: ca, notBefore: new Date(Date.now() + DAY) });
      const early = await authenticateHandler(chain(true))(request({ certs: [future.der] }));
      expect(early.error).to.match(/is before/);
    });

    it('judges validity at the time of the request', async () => {
      const later = new X509Authenticator(parseCaBundle(ca.pem), () => new Date(Date.now() + 60 * DAY));
      const res = await authenticateHandler(new AuthenticationChain([later], true))(request({ certs: [client.der] }));
      expect(res.error).to.include('has expired');
    });

    it('refuses a certificate restricted to other usages than client authentication', async () => {
      const serverOnly = await makeCert({ cn: 'web', issuer: ca, eku: [OID_SERVER_AUTH] });
      const res = await authenticateHandler(chain(true))(request({ certs: [serverOnly.der] }));
      expect(res.error).to.include('x509: certificate specifies an incompatible key usage');
      const noUsage = await makeCert({ cn: 'plain', issuer: ca });
      expect((await authenticateHandler(chain(true))(request({ certs: [noUsage.der] }))).user?.username).to.equal('plain');
    });

    it('accepts any CA of the bundle', async () => {
      const second = await makeCert({ cn: 'dave', issuer: otherCa });
      const both = new X509Authenticator(parseCaBundle(ca.pem + otherCa.pem));
      const res = await authenticateHandler(new AuthenticationChain([both], false))(request({ certs: [second.der] }));
      expect(res.user?.username).to.equal('dave');
    });

    it('has no opinion on a certificate without a common name', async () => {
      const nameless = await makeCert({ cn: '', orgs: ['system:masters'], issuer: ca });
      const res = await authenticateHandler(chain(true))(request({ certs: [nameless.der] }));
      expect(res.user?.username).to.equal('system:anonymous');
    });

    it('rejects a bundle without certificates', () => {
      expect(() => parseCaBundle('not a pem')).to.throw(/does not contain any valid certificates/);
    });
  });

  describe('bearer tokens', () => {
    it('authenticates a known token with its groups, uid and system:authenticated', async () => {
      const res = await authenticateHandler(chain(true))(request({ authorization: 'Bearer secret-token' }));
      expect(res).to.deep.include({ authenticated: true, authenticator: 'token-file', error: '' });
      expect(res.user).to.deep.equal({ username: 'alice', uid: 'uid-alice', groups: ['devs', 'ops', 'system:authenticated'], extra: {} });
      const bob = await authenticateHandler(chain(true))(request({ authorization: 'bearer bob-token' }));
      expect(bob.user?.groups).to.deep.equal(['system:authenticated']);
    });

    it('refuses an unknown token without falling back to anonymous', async () => {
      const res = await authenticateHandler(chain(true))(request({ authorization: 'Bearer nope' }));
      expect(res).to.deep.include({ authenticated: false, error: 'invalid bearer token', user: null });
    });

    it('takes the token from the Authorization header only when it is a bearer token', () => {
      const h = (v: string) => new Map([['authorization', [v]]]);
      expect(bearerToken(h('Bearer abc'))).to.equal('abc');
      expect(bearerToken(h('  BEARER abc  '))).to.equal('abc');
      expect(bearerToken(h('Basic YWxpY2U6cHc='))).to.equal(undefined);
      expect(bearerToken(h('Bearer'))).to.equal(undefined);
      expect(bearerToken(h('Bearer  abc'))).to.equal(undefined);
      expect(bearerToken(new Map())).to.equal(undefined);
    });

    it('accepts a valid token even when an invalid certificate comes with it', async () => {
      const stranger = await makeCert({ cn: 'mallory', issuer: otherCa });
      const res = await authenticateHandler(chain(true))(request({ certs: [stranger.der], authorization: 'Bearer secret-token' }));
      expect(res.user?.username).to.equal('alice');
    });

    it('prefers the client certificate when both are valid', async () => {
      const res = await authenticateHandler(chain(true))(request({ certs: [client.der], authorization: 'Bearer secret-token' }));
      expect(res.user?.username).to.equal('jane');
    });

    it('tells the refusal logger about refused credentials only', async () => {
      const logged: string[] = [];
      const handler = authenticateHandler(chain(false), (remote, error) => logged.push(`${remote} ${error}`));
      await handler(request({ authorization: 'Bearer nope' }));
      await handler(request());
      expect(logged).to.deep.equal(['127.0.0.1:5555 invalid bearer token']);
    });

    it('reports every refusal when no authenticator accepts', async () => {
      const stranger = await makeCert({ cn: 'mallory', issuer: otherCa });
      const res = await authenticateHandler(chain(true))(request({ certs: [stranger.der], authorization: 'Bearer nope' }));
      expect(res.error).to.match(/^\[verifying certificate .* unknown authority, invalid bearer token\]$/);
    });
  });

  describe('anonymous', () => {
    it('makes a request without credentials system:anonymous in system:unauthenticated', async () => {
      const res = await authenticateHandler(chain(true))(request({ authorization: 'Basic YWxpY2U6cHc=' }));
      expect(res).to.deep.include({ authenticated: true, authenticator: 'anonymous' });
      expect(res.user).to.deep.equal({ username: 'system:anonymous', uid: '', groups: ['system:unauthenticated'], extra: {} });
    });

    it('refuses a request without credentials when disabled', async () => {
      const res = await authenticateHandler(chain(false))(request());
      expect(res.authenticated).to.equal(false);
      expect(res.error).to.not.equal('');
    });

    it('is turned off, with a warning, when AlwaysAllow is an authorization mode', async () => {
      const allowAll = buildAuthenticationChain({ anonymousAuth: true, authorizationModes: ['AlwaysDeny', 'AlwaysAllow'] });
      expect((await authenticateHandler(allowAll.chain)(request())).authenticated).to.equal(false);
      expect(allowAll.warnings.join()).to.include('AnonymousAuth is not allowed with the AlwaysAllow authorizer');
      const denyAll = buildAuthenticationChain({ anonymousAuth: true, authorizationModes: ['AlwaysDeny'] });
      expect((await authenticateHandler(denyAll.chain)(request())).user?.username).to.equal('system:anonymous');
      expect(denyAll.warnings).to.deep.equal([]);
    });

    it('is the only authenticator when nothing else is configured', async () => {
      const built = buildAuthenticationChain({ anonymousAuth: true });
      const res = await authenticateHandler(built.chain)(request({ authorization: 'Bearer anything', certs: [client.der] }));
      expect(res.user?.username).to.equal('system:anonymous');
    });
  });

  describe('token file', () => {
    it('reads token, user, uid and quoted comma-separated groups', () => {
      const { tokens: t } = parseTokenFile('tok1,user1,uid1,"group1,group2,group3"\n', 'f');
      expect(t.get('tok1')).to.deep.equal({ username: 'user1', uid: 'uid1', groups: ['group1', 'group2', 'group3'], extra: {} });
    });

    it('treats further columns as groups too', () => {
      const { tokens: t } = parseTokenFile('tok1,user1,uid1,g1,"g2,g3"\r\ntok2,user2,uid2,\n', 'f');
      expect(t.get('tok1')?.groups).to.deep.equal(['g1', 'g2', 'g3']);
      expect(t.get('tok2')?.groups).to.deep.equal([]);
    });

    it('skips empty lines and empty tokens, lets a later duplicate win, and says so', () => {
      const file = parseTokenFile('\ntok,a,1\n\n,b,2\ntok,c,3\n', 'tokens.csv');
      expect([...file.tokens.keys()]).to.deep.equal(['tok']);
      expect(file.tokens.get('tok')?.username).to.equal('c');
      expect(file.warnings).to.deep.equal([
        "empty token has been found in token file 'tokens.csv', record number '2'",
        "duplicate token has been found in token file 'tokens.csv', record number '3'",
      ]);
    });

    it('rejects records with fewer than three columns', () => {
      expect(() => parseTokenFile('tok,user\n', 'tokens.csv'))
        .to.throw("token file 'tokens.csv' must have at least 3 columns (token, user name, user uid), found 2");
    });

    it('rejects stray quotes with their position', () => {
      expect(() => parseTokenFile('tok,us"er,uid\n', 'f')).to.throw('parse error on line 1, column 7: bare " in non-quoted field');
      expect(() => parseTokenFile('tok,user,uid,"g1\n', 'f')).to.throw('extraneous or missing " in quoted-field');
      expect(() => parseTokenFile('a,b,c\ntok,"user"x,uid\n', 'f')).to.throw('line 2');
    });

    it('parses quoted fields with doubled quotes and newlines', () => {
      expect(parseCsv('"a ""b""","c\nd",e\nf,,\n')).to.deep.equal([['a "b"', 'c\nd', 'e'], ['f', '', '']]);
    });

    it('fails the configuration with a clear message for a malformed or missing file', () => {
      const dir = mkdtempSync(join(tmpdir(), 'authn-test-'));
      try {
        const path = join(dir, 'tokens.csv');
        writeFileSync(path, 'only-a-token\n');
        expect(() => buildAuthenticationChain({ tokenAuthFile: path, anonymousAuth: true }))
          .to.throw(AuthnConfigError, 'must have at least 3 columns');
        expect(() => buildAuthenticationChain({ tokenAuthFile: join(dir, 'missing.csv'), anonymousAuth: true }))
          .to.throw(AuthnConfigError, 'cannot read token file');
        expect(() => buildAuthenticationChain({ clientCaFile: join(dir, 'missing.crt'), anonymousAuth: true }))
          .to.throw(AuthnConfigError, 'unable to load client CA file');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
