import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { groupsOf, hasExpired, parseToken, usableToken } from '../../internal/bootstraptoken/index.js';
import { selectControllers, ControllerSelectionError } from '../../internal/controllers/selection.js';
import { KeyFileError, jwks, loadSigningKey, loadVerifyingKeys } from '../../internal/serviceaccount/keys.js';
import { TokenIssuer } from '../../internal/serviceaccount/issuer.js';
import { createCa } from '../../internal/pki/certs.js';
import { userOf } from '../../internal/serviceaccount/claims.js';
import type { ObjectLookup } from '../../internal/serviceaccount/lookup.js';
import { TokenValidationError, checkTimes, validateBound, validateLegacy } from '../../internal/serviceaccount/validate.js';

const secret = (data: Record<string, string>) => ({
  apiVersion: 'v1', kind: 'Secret', type: 'bootstrap.svc.io/token',
  metadata: { name: `bootstrap-token-${data['token-id'] ?? ''}`, namespace: 'svc-system' },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});

describe('bootstrap token rules', () => {
  it('parses only <6 of [a-z0-9]>.<16 of [a-z0-9]>', () => {
    expect(parseToken('abcdef.0123456789abcdef')).to.deep.equal({ id: 'abcdef', secret: '0123456789abcdef' });
    for (const bad of ['abcdef.0123456789abcde', 'Abcdef.0123456789abcdef', 'abcdef:0123456789abcdef', ' abcdef.0123456789abcdef', 'abcdef.0123456789abcdef\n']) {
      expect(parseToken(bad), bad).to.equal(undefined);
    }
  });

  it('expiration: RFC 3339 in the past or unreadable counts as expired', () => {
    expect(hasExpired(secret({ 'token-id': 'a', expiration: '2000-01-01T00:00:00Z' }))).to.equal(true);
    expect(hasExpired(secret({ 'token-id': 'a', expiration: 'tomorrow' }))).to.equal(true);
    expect(hasExpired(secret({ 'token-id': 'a', expiration: '2999-01-01T00:00:00+02:00' }))).to.equal(false);
    expect(hasExpired(secret({ 'token-id': 'a' }))).to.equal(false);
  });

  it('groups: system:bootstrappers first, extra groups only under system:bootstrappers:', () => {
    expect(groupsOf(secret({ 'auth-extra-groups': 'system:bootstrappers:a, system:bootstrappers:a,system:bootstrappers:b-1' })))
      .to.deep.equal(['system:bootstrappers', 'system:bootstrappers:a', 'system:bootstrappers:b-1']);
    expect(() => groupsOf(secret({ 'auth-extra-groups': 'system:masters' }))).to.throw(/invalid/);
    expect(() => groupsOf(secret({ 'auth-extra-groups': 'system:bootstrappers:' }))).to.throw(/invalid/);
  });

  it('a token is usable for signing only when named for it, valid and not expired', () => {
    const base = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef' };
    expect(usableToken(secret({ ...base, 'usage-bootstrap-signing': 'true' }), 'usage-bootstrap-signing')).to.deep.equal({ id: 'abcdef', secret: '0123456789abcdef' });
    expect(usableToken(secret({ ...base }), 'usage-bootstrap-signing')).to.equal(undefined);
    expect(usableToken(secret({ ...base, 'usage-bootstrap-signing': 'true', expiration: '2000-01-01T00:00:00Z' }), 'usage-bootstrap-signing')).to.equal(undefined);
  });
});

describe('--controllers', () => {
  const known = [{ name: 'namespace-controller', alias: 'namespace' }, { name: 'token-cleaner-controller', alias: 'tokencleaner', disabledByDefault: true }];
  const names = (entries: string[]) => selectControllers(known, entries).map((c) => c.alias);

  it('* means the default ones; a name adds one; -name removes one; the first entry naming a controller decides', () => {
    expect(names(['*'])).to.deep.equal(['namespace']);
    expect(names(['*', 'tokencleaner'])).to.deep.equal(['namespace', 'tokencleaner']);
    expect(names(['token-cleaner-controller'])).to.deep.equal(['tokencleaner']);
    expect(names(['-namespace', '*'])).to.deep.equal([]);
    expect(names(['namespace', '-namespace'])).to.deep.equal(['namespace']);
    expect(names([])).to.deep.equal([]);
  });

  it('an unknown controller is an error', () => {
    expect(() => names(['*', 'nosuch'])).to.throw(ControllerSelectionError, /"nosuch" is not in the list of known controllers/);
  });
});

describe('service-account keys and issuing', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sakeys-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => { const p = join(dir, name); writeFileSync(p, text); return p; };

  it('reads RSA and ECDSA keys from public keys, private keys and certificates', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const bundle = write('bundle.pem', [
      rsa.publicKey.export({ type: 'pkcs1', format: 'pem' }), ec.privateKey.export({ type: 'sec1', format: 'pem' }), (await createCa('test', 1)).certPem,
    ].join('\n'));
    const keys = loadVerifyingKeys(bundle);
    expect(keys.map((k) => k.alg)).to.deep.equal(['RS256', 'ES384', 'ES256']);
    const set = jwks(keys);
    expect(set.keys.map((k) => k.kty)).to.deep.equal(['RSA', 'EC', 'EC']);
    for (const k of set.keys) expect(k).to.not.have.property('d');
    expect(loadSigningKey(bundle).alg).to.equal('ES384');
  });

  it('refuses files without usable keys, and never quotes their content', () => {
    const junk = write('junk.pem', '-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n');
    expect(() => loadVerifyingKeys(junk)).to.throw(KeyFileError, /cannot be parsed/).with.property('message').that.does.not.include('bm90');
    expect(() => loadVerifyingKeys(write('empty.pem', ''))).to.throw(KeyFileError, /does not contain any valid RSA or ECDSA public keys/);
    const ed = generateKeyPairSync('ed25519');
    expect(() => loadSigningKey(write('ed.pem', ed.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string))).to.throw(KeyFileError, /unsupported key type/);
  });

  it('caps the lifetime at the maximum and defaults the audiences to the API audiences', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = loadSigningKey(write('sign.pem', ec.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string));
    const issuer = new TokenIssuer(key, { issuer: 'https://issuer.example', apiAudiences: ['api'], maxExpirationSeconds: 1200, extendExpiration: true }, () => 1_000_000_000_000);
    const issued = await issuer.issue({ namespace: 'ns', serviceAccount: { name: 'sa', uid: 'u1' }, audiences: [], expirationSeconds: 7200, bound: { kind: 'Secret', name: 's', uid: 'u2' } });
    expect(issued.expirationSeconds).to.equal(1200);
    expect(issued.audiences).to.deep.equal(['api']);
    const claims = decodeJwt(issued.token);
    expect(claims).to.include({ iss: 'https://issuer.example', sub: 'system:serviceaccount:ns:sa', exp: 1_000_000_000 + 1200, iat: 1_000_000_000 });
    expect(claims['svc.io']).to.deep.equal({ namespace: 'ns', serviceaccount: { name: 'sa', uid: 'u1' }, secret: { name: 's', uid: 'u2' } });
  });

  it("extends a node agent's pod token (3607 s, API audiences) to a year, warning after 3607 s", async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = loadSigningKey(write('sign2.pem', ec.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string));
    const now = 1_000_000_000;
    const issuer = new TokenIssuer(key, { issuer: 'https://issuer.example', apiAudiences: ['api'], maxExpirationSeconds: 0, extendExpiration: true }, () => now * 1000);
    const pod = { kind: 'Pod' as const, name: 'p', uid: 'u3' };
    const extended = await issuer.issue({ namespace: 'ns', serviceAccount: { name: 'sa', uid: 'u1' }, audiences: [], expirationSeconds: 3607, bound: pod });
    expect(extended.expirationTimestamp).to.equal(now + 3607);
    expect(decodeJwt(extended.token).exp).to.equal(now + 365 * 24 * 3600);
    expect((decodeJwt(extended.token)['svc.io'] as { warnafter: number }).warnafter).to.equal(now + 3607);
    const other = await issuer.issue({ namespace: 'ns', serviceAccount: { name: 'sa', uid: 'u1' }, audiences: ['vault'], expirationSeconds: 3607, bound: pod });
    expect(decodeJwt(other.token).exp).to.equal(now + 3607);
  });
});

describe('authn refuses bad token flags at start', () => {
  const authn = fileURLToPath(new URL('../../cmd/authn/main.js', import.meta.url));
  /** Runs authn to its exit (killed after 15 s); resolves with its code and stderr. */
  const run = (args: string[]): Promise<{ code: number | null; stderr: string }> => new Promise((resolve) => {
    const child = spawn(process.execPath, [authn, '--listen=127.0.0.1:0', '--storage-address=127.0.0.1:1', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => process.kill(child.pid!, 'SIGKILL'), 15_000);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stderr }); });
  });

  it('a repeated issuer, an issuer that is not a URL, an OIDC issuer that is the service-account issuer, an unreadable key file', async () => {
    const repeated = await run(['--service-account-issuer=https://a.example', '--service-account-issuer=https://a.example']);
    expect(repeated.code).to.equal(1);
    expect(repeated.stderr).to.include('service-account-issuer "https://a.example" is already specified');
    const notUrl = await run(['--service-account-issuer=https://[bad']);
    expect(notUrl.code).to.equal(1);
    expect(notUrl.stderr).to.include("contained a ':' but was not a valid URL");
    const overlap = await run(['--oidc-issuer-url=https://kubernetes.default.svc.cluster.local', '--oidc-client-id=x']);
    expect(overlap.code).to.equal(1);
    expect(overlap.stderr).to.include('URL must not overlap with disallowed issuers: [https://kubernetes.default.svc.cluster.local]');
    const missing = await run(['--service-account-key-file=/nonexistent/sa.pub']);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include("cannot read key file '/nonexistent/sa.pub'");
  });
});

describe('service-account token checks', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  type Rec = { name: string; uid: string; deletionTimestamp?: string; token?: string };
  /** The lookup's interface over fixed records. */
  const lookupOf = (records: Record<string, Rec>) => ({ get: (resource: string, ns: string, name: string) => records[`${resource}/${ns}/${name}`] }) as unknown as ObjectLookup;
  const claims = (extra: Record<string, unknown> = {}) => ({ 'svc.io': { namespace: 'ns', serviceaccount: { name: 'sa', uid: 'u1' }, ...extra }, jti: 'j1' });

  it('accepts a bound token while its objects exist, naming the pod, node and credential', () => {
    const lookup = lookupOf({ 'serviceaccounts/ns/sa': { name: 'sa', uid: 'u1' }, 'pods/ns/p': { name: 'p', uid: 'u2' } });
    const info = validateBound(claims({ pod: { name: 'p', uid: 'u2' }, node: { name: 'n', uid: 'u3' } }), lookup, now);
    expect(userOf(info)).to.deep.equal({
      username: 'system:serviceaccount:ns:sa', uid: 'u1', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
      extra: {
        'authentication.svc.io/pod-name': ['p'], 'authentication.svc.io/pod-uid': ['u2'], 'authentication.svc.io/credential-id': ['JTI=j1'],
        'authentication.svc.io/node-name': ['n'], 'authentication.svc.io/node-uid': ['u3'],
      },
    });
  });

  it('refuses when the service account is recreated, or an object was deleted more than a minute ago', () => {
    const recreated = lookupOf({ 'serviceaccounts/ns/sa': { name: 'sa', uid: 'other' } });
    expect(() => validateBound(claims(), recreated, now)).to.throw(TokenValidationError, 'service account UID (other) does not match claim (u1)');
    const justDeleted = lookupOf({ 'serviceaccounts/ns/sa': { name: 'sa', uid: 'u1', deletionTimestamp: new Date(now - 30_000).toISOString() } });
    expect(validateBound(claims(), justDeleted, now).name).to.equal('sa');
    // Valid (and so kept) only until the deletion is a minute old.
    const deadline = { at: Infinity };
    validateBound(claims(), justDeleted, now, deadline);
    expect(deadline.at).to.equal(now + 30_000);
    const longDeleted = lookupOf({ 'serviceaccounts/ns/sa': { name: 'sa', uid: 'u1', deletionTimestamp: new Date(now - 120_000).toISOString() } });
    expect(() => validateBound(claims(), longDeleted, now)).to.throw(TokenValidationError, 'has been deleted');
    const noSecret = lookupOf({ 'serviceaccounts/ns/sa': { name: 'sa', uid: 'u1' } });
    expect(() => validateBound(claims({ secret: { name: 's', uid: 'u9' } }), noSecret, now)).to.throw(TokenValidationError, 'service account token has been invalidated');
  });

  it('times: a minute of leeway for exp and nbf', () => {
    const s = now / 1000;
    expect(() => checkTimes({ exp: s - 30, nbf: s + 30 }, now)).to.not.throw();
    expect(() => checkTimes({ exp: s - 90 }, now)).to.throw(TokenValidationError, 'service account token has expired');
    expect(() => checkTimes({ nbf: s + 90 }, now)).to.throw(TokenValidationError, 'service account token is not valid yet');
  });

  it('Secret-based tokens: checked against their Secret with lookup on, taken as they are with it off', () => {
    const legacy = {
      'svc.io/serviceaccount/namespace': 'ns', 'svc.io/serviceaccount/secret.name': 'tok',
      'svc.io/serviceaccount/service-account.name': 'sa', 'svc.io/serviceaccount/service-account.uid': 'u1',
    };
    expect(validateLegacy(legacy, 'the-token', undefined, now)).to.deep.equal({ namespace: 'ns', name: 'sa', uid: 'u1' });
    const other = lookupOf({ 'secrets/ns/tok': { name: 'tok', uid: 's1', token: 'another' }, 'serviceaccounts/ns/sa': { name: 'sa', uid: 'u1' } });
    expect(() => validateLegacy(legacy, 'the-token', other, now)).to.throw(TokenValidationError, "token does not match server's copy");
    const same = lookupOf({ 'secrets/ns/tok': { name: 'tok', uid: 's1', token: 'the-token' }, 'serviceaccounts/ns/sa': { name: 'sa', uid: 'u1' } });
    expect(validateLegacy(legacy, 'the-token', same, now).name).to.equal('sa');
    expect(() => validateLegacy({ ...legacy, 'svc.io/serviceaccount/secret.name': undefined }, 'the-token', same, now)).to.throw(TokenValidationError, 'secretName claim is missing');
  });
});
