// JWT authenticators against a real provider: keys fetched once and again only
// for an unknown kid (rate-limited), and the user the --oidc-* flags make.
import { expect } from 'chai';
import { generateKeyPair } from 'jose';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JWTAuthenticator, ProviderKeys, validateJWTAuthenticator } from '../../internal/authn/index.js';
import { oidcAuthenticatorConfig, type OidcFlags } from '../../internal/authn/jwt/oidcflags.js';
import { waitFor } from '../lib/cluster.js';
import { CLIENT_ID, OidcProvider } from '../lib/oidc.js';

describe('JWT authenticator', function () {
  this.timeout(60_000);
  let provider: OidcProvider;
  let dir: string;
  const flags = (f: Partial<OidcFlags>): OidcFlags => ({
    issuerUrl: provider.issuer, clientId: CLIENT_ID, caFile: join(dir, 'ca.pem'), usernameClaim: 'sub', usernamePrefix: '', groupsClaim: '', groupsPrefix: '',
    signingAlgs: ['RS256'], requiredClaims: [], anySet: true, ...f,
  });
  const opened: ProviderKeys[] = [];
  /** An authenticator as the flags describe it, with its own key fetcher. */
  async function fromFlags(f: Partial<OidcFlags>, refreshMs = 60_000) {
    const { config, algorithms } = oidcAuthenticatorConfig(flags(f))!;
    const { errors, rules } = validateJWTAuthenticator(config, 'jwt[0]');
    expect(errors.map(String)).to.deep.equal([]);
    const keys = new ProviderKeys({ issuerUrl: config.issuer.url, ca: config.issuer.certificateAuthority, refreshMs }).start();
    opened.push(keys);
    expect(await waitFor(() => keys.ready, 10_000, 50)).to.equal(true);
    return new JWTAuthenticator(config, rules, keys, algorithms);
  }
  const jwksHits = () => provider.hits.get('/jwks') ?? 0;

  before(async () => {
    provider = await new OidcProvider().start();
    dir = mkdtempSync(join(tmpdir(), 'svc-jwt-'));
    writeFileSync(join(dir, 'ca.pem'), provider.caPem);
  });
  after(async () => {
    for (const k of opened) k.close();
    await provider?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prefixes names with <issuer># unless the claim is email or a prefix is set; - means none', async () => {
    const token = await provider.idToken({ sub: 'u-1', email: 'a@example.com', name: 'Alice' });
    const nameOf = async (f: Partial<OidcFlags>) => (await (await fromFlags(f)).authenticateToken(token))?.user.username;
    expect(await nameOf({})).to.equal(`${provider.issuer}#u-1`);
    expect(await nameOf({ usernameClaim: 'email' })).to.equal('a@example.com');
    expect(await nameOf({ usernameClaim: 'name', usernamePrefix: 'oidc:' })).to.equal('oidc:Alice');
    expect(await nameOf({ usernamePrefix: '-' })).to.equal('u-1');
    expect(await nameOf({ usernameClaim: 'email', usernamePrefix: 'mail:' })).to.equal('mail:a@example.com');
  });

  it('leaves tokens of other issuers and non-JWTs to other authenticators', async () => {
    const a = await fromFlags({});
    expect(await a.authenticateToken('not-a-jwt')).to.equal(undefined);
    expect(await a.authenticateToken(await provider.sign({ iss: 'https://elsewhere.example' }))).to.equal(undefined);
  });

  it('accepts only the configured signing algorithms', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const es = await provider.sign({ sub: 'u-1' }, { key: privateKey as never, alg: 'ES256' });
    const a = await fromFlags({});
    let message = '';
    await a.authenticateToken(es).catch((err: Error) => { message = err.message; });
    expect(message).to.contain('oidc: verify token: id token signed with unsupported algorithm');
  });

  it('reads keys through a separate discovery URL whose issuer must be the configured one', async () => {
    const discoveryUrl = `${provider.issuer}/.well-known/openid-configuration`;
    const good = new ProviderKeys({ issuerUrl: provider.issuer, discoveryUrl, ca: provider.caPem }).start();
    const logged: string[] = [];
    const wrong = new ProviderKeys({ issuerUrl: 'https://other.example', discoveryUrl, ca: provider.caPem, log: (m) => logged.push(m), retryMs: 60_000 }).start();
    const untrusted = new ProviderKeys({ issuerUrl: provider.issuer, log: (m) => logged.push(m), retryMs: 60_000 }).start();
    opened.push(good, wrong, untrusted);
    expect(await waitFor(() => good.ready, 10_000, 50)).to.equal(true);
    expect(await waitFor(() => logged.length === 2, 10_000, 50)).to.equal(true);
    expect(wrong.ready).to.equal(false);
    expect(untrusted.ready).to.equal(false);
    expect(logged.join('\n')).to.contain(`oidc: issuer did not match the issuer returned by provider, expected "https://other.example" got "${provider.issuer}"`);
    // Without the provider's CA the system roots do not trust its certificate.
    expect(logged.join('\n')).to.match(/self-signed|unable to verify|certificate/);
  });

  it('asks the provider nothing per token, and refetches keys for an unknown kid at most once per interval', async () => {
    const a = await fromFlags({}, 60_000);
    const token = await provider.idToken({ sub: 'u-1' });
    const before = jwksHits();
    for (let i = 0; i < 10; i++) expect((await a.authenticateToken(token))?.user.username).to.equal(`${provider.issuer}#u-1`);
    expect(jwksHits()).to.equal(before);
    // A fetcher whose last fetch is older than its interval refetches once for an unknown kid.
    const eager = await fromFlags({}, 0);
    const { privateKey } = await generateKeyPair('RS256');
    const unknown = await provider.sign({ sub: 'u-1' }, { key: privateKey as never, kid: 'unknown-kid' });
    const start = jwksHits();
    await eager.authenticateToken(unknown).catch(() => undefined);
    expect(jwksHits()).to.equal(start + 1);
    // Within the interval, unknown kids cost no fetch at all.
    const afterEager = jwksHits();
    for (let i = 0; i < 10; i++) await a.authenticateToken(unknown).catch(() => undefined);
    expect(jwksHits()).to.equal(afterEager);
  });
});
