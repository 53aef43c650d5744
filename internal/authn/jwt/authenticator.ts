// A JWT authenticator of the authentication configuration (or of the --oidc-*
// flags): tokens whose `iss` is its issuer are verified with the provider's
// keys and mapped to a user; other tokens are left to other authenticators.
import { compactVerify, errors as joseErrors } from 'jose';
import { audiencesOf, unverifiedIssuer } from '../audiences.js';
import type { CompiledRules } from '../jwtconfig/validate.js';
import type { JWTAuthenticatorConfig } from '../jwtconfig/types.js';
import { AuthenticationError, type Authenticated, type TokenAuthenticator } from '../types.js';
import { userFromClaims, type Claims } from './claims.js';
import type { ProviderKeys } from './keys.js';

/** The algorithms an ID token may be signed with (asymmetric only). */
export const ALL_SIGNING_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'];
/** How far a token's nbf may lie in the future (clocks differ). */
const NOT_BEFORE_SKEW_S = 5 * 60;

const fail = (message: string): never => { throw new AuthenticationError(`oidc: verify token: ${message}`); };

export class JWTAuthenticator implements TokenAuthenticator {
  constructor(
    readonly config: JWTAuthenticatorConfig,
    private readonly rules: CompiledRules,
    private readonly keys: ProviderKeys,
    private readonly algorithms: string[] = ALL_SIGNING_ALGORITHMS,
  ) {}

  get issuer(): string {
    return this.config.issuer.url;
  }

  async authenticateToken(token: string): Promise<Authenticated | undefined> {
    if (unverifiedIssuer(token) !== this.issuer) return undefined;
    if (!this.keys.ready) throw new AuthenticationError('oidc: authenticator not initialized');
    const claims = await this.verify(token);
    return { user: userFromClaims(claims, this.config.claimMappings, this.rules), audiences: [], authenticator: 'oidc' };
  }

  /** Signature, algorithm, expiry, not-before and audience; the verified claims. */
  private async verify(token: string): Promise<Claims> {
    let payload: Uint8Array;
    try {
      ({ payload } = await compactVerify(token, (header, jws) => this.keys.key(header, jws), { algorithms: this.algorithms }));
    } catch (err) {
      if (err instanceof joseErrors.JOSEAlgNotAllowed) return fail(`id token signed with unsupported algorithm, expected ${JSON.stringify(this.algorithms)}`);
      return fail(`failed to verify signature: ${(err as Error).message}`);
    }
    const claims = JSON.parse(new TextDecoder().decode(payload)) as Claims;
    const now = Date.now() / 1000;
    if (typeof claims.exp !== 'number' || now > claims.exp) fail(`token is expired (Token Expiry: ${new Date(Number(claims.exp ?? 0) * 1000).toISOString()})`);
    if (typeof claims.nbf === 'number' && now < claims.nbf - NOT_BEFORE_SKEW_S) {
      fail(`current time ${new Date(now * 1000).toISOString()} before the nbf (not before) time: ${new Date(claims.nbf * 1000).toISOString()}`);
    }
    const audiences = audiencesOf(claims.aud);
    if (!audiences.some((a) => this.config.issuer.audiences.includes(a))) {
      fail(`expected audience in ${JSON.stringify(this.config.issuer.audiences)} got ${JSON.stringify(audiences)}`);
    }
    return claims;
  }
}
