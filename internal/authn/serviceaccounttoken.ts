// Service-account token authentication: JWTs signed by one of the
// service-account keys. A token whose (unverified) issuer is not one of ours is
// left to the other authenticators; one that is must verify, name an audience
// asked for, and pass the object checks of internal/serviceaccount.
import { compactVerify } from 'jose';
import { LEGACY_SERVICE_ACCOUNT_ISSUER } from '../names/index.js';
import { userOf, type TokenClaims } from '../serviceaccount/claims.js';
import type { TokenKey } from '../serviceaccount/keys.js';
import type { ObjectLookup } from '../serviceaccount/lookup.js';
import { TokenValidationError, checkTimes, validateBound, validateLegacy } from '../serviceaccount/validate.js';
import { audiencesOf, intersect, unverifiedIssuer } from './audiences.js';
import { AuthenticationError, type Authenticated, type TokenAuthenticator } from './types.js';

export interface ServiceAccountTokenOptions {
  keys: TokenKey[];
  /** Accepted issuers of bound tokens. */
  issuers: string[];
  apiAudiences: string[];
  lookup: ObjectLookup;
  /** --service-account-lookup: check Secret-based tokens against their Secret. */
  lookupLegacy: boolean;
  clock?: () => number;
}

export class ServiceAccountTokenAuthenticator implements TokenAuthenticator {
  constructor(private readonly opts: ServiceAccountTokenOptions) {}

  async authenticateToken(token: string, audiences: string[]): Promise<Authenticated | undefined> {
    const issuer = unverifiedIssuer(token);
    const legacy = issuer === LEGACY_SERVICE_ACCOUNT_ISSUER;
    if (issuer === undefined || (!legacy && !this.opts.issuers.includes(issuer))) return undefined;
    const claims = await this.verify(token);
    const now = (this.opts.clock ?? Date.now)();
    const valid = this.audiences(claims, audiences);
    try {
      checkTimes(claims, now);
      // Valid until its exp, or until an object it names that is being deleted stops vouching for it.
      const deadline = { at: typeof claims.exp === 'number' ? claims.exp * 1000 : Infinity };
      const info = legacy
        ? validateLegacy(claims, token, this.opts.lookupLegacy ? this.opts.lookup : undefined, now, deadline)
        : validateBound(claims, this.opts.lookup, now, deadline);
      return { user: userOf(info), audiences: valid, authenticator: 'service-account', expiresAt: Number.isFinite(deadline.at) ? deadline.at : undefined };
    } catch (err) {
      if (err instanceof TokenValidationError) throw new AuthenticationError(err.message);
      throw err;
    }
  }

  /** The claims of a token one of the keys signed (the key named by `kid` first). */
  private async verify(token: string): Promise<TokenClaims> {
    let kid: string | undefined;
    try {
      kid = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString('utf8')).kid;
    } catch {
      kid = undefined;
    }
    const keys = [...this.opts.keys].sort((a, b) => Number(b.kid === kid) - Number(a.kid === kid));
    for (const key of keys) {
      try {
        const { payload } = await compactVerify(token, key.key, { algorithms: [key.alg] });
        const claims = JSON.parse(Buffer.from(payload).toString('utf8'));
        if (claims && typeof claims === 'object' && !Array.isArray(claims)) return claims as TokenClaims;
      } catch {
        // another key may have signed it
      }
    }
    throw new AuthenticationError('service account token: signature is invalid or made with an unknown key');
  }

  /** The token's audiences the request asked for (the API's when it asked for none); tokens without any are the API's. */
  private audiences(claims: TokenClaims, requested: string[]): string[] {
    const own = this.opts.apiAudiences;
    const named = audiencesOf(claims.aud);
    const tokenAudiences = named.length ? named : own;
    const wanted = requested.length ? requested : own;
    const common = intersect(tokenAudiences, wanted);
    if (common.length === 0 && own.length) {
      throw new AuthenticationError(`token audiences ${JSON.stringify(tokenAudiences)} is invalid for the target audiences ${JSON.stringify(wanted)}`);
    }
    return common;
  }
}
