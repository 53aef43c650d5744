// Issuing bound service-account tokens (the TokenRequest API): a JWT signed by
// the signing key, naming the service account and the object it is bound to.
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { SERVICE_ACCOUNT_CLAIM } from '../names/index.js';
import { usernameOf, type PrivateClaim, type Ref } from './claims.js';
import type { TokenKey } from './keys.js';

export type BoundKind = 'Pod' | 'Secret' | 'Node';
/** The resource of each kind a token may be bound to. */
export const BOUND_RESOURCES: Readonly<Record<BoundKind, 'pods' | 'secrets' | 'nodes'>> = { Pod: 'pods', Secret: 'secrets', Node: 'nodes' };

/** TokenRequest lifetimes, as upstream: the default, the shortest and the longest that may be asked for. */
export const DEFAULT_EXPIRATION_SECONDS = 3600;
export const MIN_EXPIRATION_SECONDS = 600;
export const MAX_EXPIRATION_SECONDS = 2 ** 32;

export interface IssueRequest {
  namespace: string;
  serviceAccount: Required<Ref>;
  /** Empty: the API audiences. */
  audiences: string[];
  expirationSeconds: number;
  bound?: { kind: BoundKind; name: string; uid: string };
  /** The node of a bound pod, when scheduled. */
  node?: Ref;
}

export interface Issued {
  token: string;
  /** Seconds since the epoch: the lifetime asked for (an extended token's `exp` is later). */
  expirationTimestamp: number;
  audiences: string[];
  expirationSeconds: number;
}

export interface IssuerOptions {
  /** The `iss` of new tokens. */
  issuer: string;
  apiAudiences: string[];
  /** Longest lifetime granted, in seconds; 0 for no limit. */
  maxExpirationSeconds: number;
  /** --service-account-extend-token-expiration: node agents' pod tokens of 3607 s live a year, warning after 3607 s. */
  extendExpiration: boolean;
}

/** The lifetime node agents ask for, which marks a token for the extension, and the extended one (as upstream). */
export const WARN_ONLY_EXPIRATION_SECONDS = 3607;
export const EXTENDED_EXPIRATION_SECONDS = 365 * 24 * 3600;

export class NoSigningKeyError extends Error {}

function privateClaim(req: IssueRequest): PrivateClaim {
  const claim: PrivateClaim = { namespace: req.namespace, serviceaccount: { name: req.serviceAccount.name, uid: req.serviceAccount.uid } };
  const bound = req.bound && { name: req.bound.name, uid: req.bound.uid };
  if (req.bound?.kind === 'Pod') claim.pod = bound;
  if (req.bound?.kind === 'Secret') claim.secret = bound;
  if (req.bound?.kind === 'Node') claim.node = bound;
  if (req.bound?.kind === 'Pod' && req.node?.name) claim.node = { name: req.node.name, ...(req.node.uid ? { uid: req.node.uid } : {}) };
  return claim;
}

export class TokenIssuer {
  constructor(private readonly signingKey: TokenKey | undefined, readonly opts: IssuerOptions, private readonly clock = () => Date.now()) {}

  async issue(req: IssueRequest): Promise<Issued> {
    if (!this.signingKey) throw new NoSigningKeyError('no service-account signing key is configured');
    const max = this.opts.maxExpirationSeconds;
    const expirationSeconds = max > 0 && req.expirationSeconds > max ? max : req.expirationSeconds;
    const audiences = req.audiences.length ? req.audiences : this.opts.apiAudiences;
    const now = Math.floor(this.clock() / 1000);
    const claim = privateClaim(req);
    let exp = now + expirationSeconds;
    if (this.extends(req, expirationSeconds, audiences)) {
      claim.warnafter = exp;
      exp = now + EXTENDED_EXPIRATION_SECONDS;
    }
    const token = await new SignJWT({ [SERVICE_ACCOUNT_CLAIM]: claim })
      .setProtectedHeader({ alg: this.signingKey.alg, kid: this.signingKey.kid })
      .setIssuer(this.opts.issuer)
      .setSubject(usernameOf(req.namespace, req.serviceAccount.name))
      .setAudience(audiences)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(this.signingKey.key);
    return { token, expirationTimestamp: now + expirationSeconds, audiences, expirationSeconds };
  }

  /** A pod's token asked for by its node agent (3607 s, API audiences only) gets the extended lifetime. */
  private extends(req: IssueRequest, expirationSeconds: number, audiences: string[]): boolean {
    return this.opts.extendExpiration && req.bound?.kind === 'Pod' && expirationSeconds === WARN_ONLY_EXPIRATION_SECONDS
      && audiences.every((a) => this.opts.apiAudiences.includes(a));
  }
}
