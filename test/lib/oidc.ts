// A real OpenID provider for tests: the oidc-provider library serving
// discovery, its JWKS and a token endpoint over HTTPS on 127.0.0.1, with a
// certificate from a CA made for the test. ID tokens come from its token
// endpoint (a test grant carrying the claims wanted) and are signed with its
// own keystore; rotate() replaces the signing key while it keeps serving.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { randomUUID, webcrypto } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';
import { createCa, issueLeaf, loadCa } from '../../internal/pki/certs.js';

export const CLIENT_ID = 'svc-cluster';
const CLIENT_SECRET = 'test-client-secret';
const TEST_GRANT = 'urn:svc:test:id-token';

interface SigningKey {
  kid: string;
  privateJwk: JWK;
  privateKey: webcrypto.CryptoKey;
}

async function newSigningKey(): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  return { kid, privateKey: privateKey as webcrypto.CryptoKey, privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' } };
}

/** Answers the test grant with an ID token holding the claims asked for. */
async function issueIdToken(ctx: any): Promise<void> {
  const claims = JSON.parse(String(ctx.oidc.params.claims ?? '{}')) as Record<string, unknown>;
  const token = new ctx.oidc.provider.IdToken({ sub: claims.sub ?? 'subject' }, { ctx });
  token.scope = 'openid';
  for (const [key, value] of Object.entries(claims)) if (key !== 'sub') token.set(key, value);
  ctx.body = { id_token: await token.issue({ use: 'idtoken' }), token_type: 'Bearer', expires_in: 600 };
}

export class OidcProvider {
  caPem = '';
  issuer = '';
  keys: SigningKey[] = [];
  /** Requests served, by path. */
  readonly hits = new Map<string, number>();
  private server?: https.Server;
  private handler?: (req: any, res: any) => void;

  async start(): Promise<this> {
    const ca = await createCa('oidc-test-ca', 1);
    const leaf = await issueLeaf(await loadCa(ca.certPem, ca.keyPem), { commonName: '127.0.0.1', hosts: ['127.0.0.1'], usage: 'server', validityDays: 1 });
    this.caPem = ca.certPem;
    this.server = https.createServer({ cert: leaf.certPem, key: leaf.keyPem }, (req, res) => {
      const path = new URL(req.url ?? '/', this.issuer).pathname;
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      this.handler!(req, res);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.issuer = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    await this.rotate();
    return this;
  }

  /** Serves with a new signing key only: the old kid disappears from the JWKS. */
  async rotate(): Promise<SigningKey> {
    const key = await newSigningKey();
    this.keys.push(key);
    const provider = new Provider(this.issuer, {
      clients: [{
        client_id: CLIENT_ID, client_secret: CLIENT_SECRET, grant_types: [TEST_GRANT], response_types: [], redirect_uris: [],
        id_token_signed_response_alg: 'RS256',
      }],
      jwks: { keys: [key.privateJwk] },
      features: { devInteractions: { enabled: false } },
      ttl: { IdToken: 600 },
    });
    provider.registerGrantType(TEST_GRANT, issueIdToken, ['claims']);
    this.handler = provider.callback();
    return key;
  }

  get currentKey(): SigningKey {
    return this.keys[this.keys.length - 1];
  }

  /** An ID token from the token endpoint, with these claims (iss, aud, iat, exp are the provider's). */
  idToken(claims: Record<string, unknown>): Promise<string> {
    const body = new URLSearchParams({ grant_type: TEST_GRANT, claims: JSON.stringify(claims) }).toString();
    const auth = Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64');
    return new Promise((resolve, reject) => {
      const req = https.request(`${this.issuer}/token`, {
        method: 'POST', ca: this.caPem, timeout: 10_000,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${auth}`, 'content-length': Buffer.byteLength(body) },
      }, (res) => {
        let text = '';
        res.on('data', (d) => { text += d; });
        res.on('end', () => {
          const parsed = JSON.parse(text);
          if (res.statusCode !== 200 || typeof parsed.id_token !== 'string') reject(new Error(`token endpoint: ${res.statusCode} ${text}`));
          else resolve(parsed.id_token);
        });
      });
      req.on('timeout', () => req.destroy(new Error('token endpoint timed out')));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** A token signed outside the provider (expired, not yet valid, another audience, ...). */
  sign(claims: Record<string, unknown>, opts: { key?: webcrypto.CryptoKey; kid?: string; alg?: string } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: this.issuer, aud: CLIENT_ID, iat: now, exp: now + 600, ...claims })
      .setProtectedHeader({ alg: opts.alg ?? 'RS256', kid: opts.kid ?? this.currentKey.kid })
      .sign(opts.key ?? this.currentKey.privateKey);
  }

  /** Stops serving; resume() serves again on the same port with the same keys. */
  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server?.listening ? this.server.close(() => resolve()) : resolve()));
  }

  async resume(): Promise<void> {
    const port = Number(new URL(this.issuer).port);
    await new Promise<void>((resolve, reject) => this.server!.once('error', reject).listen(port, '127.0.0.1', resolve));
  }
}
