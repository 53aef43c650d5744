// The shapes every authorizer shares: the attributes of one request and a
// decision with a reason a user can read and how long it stays true.
import type { UserInfo__Output as UserInfo } from '../rpc/gen/svc/authn/v1/UserInfo.js';
import type { ResourceAttributes__Output as ResourceAttributes } from '../rpc/gen/svc/authz/v1/ResourceAttributes.js';
import type { NonResourceAttributes__Output as NonResourceAttributes } from '../rpc/gen/svc/authz/v1/NonResourceAttributes.js';

export type { UserInfo, ResourceAttributes, NonResourceAttributes };

export interface Attributes {
  user: UserInfo;
  /** Exactly one of resource and nonResource is set. */
  resource?: ResourceAttributes;
  nonResource?: NonResourceAttributes;
}

export type Decision = 'ALLOW' | 'DENY' | 'NO_OPINION';

/**
 * How long a verdict stays true: not at all, until the authorization process
 * changes, until the policy generation changes, or for a number of milliseconds
 * (and never past a generation change).
 */
export type Validity = 'uncacheable' | 'process' | 'policy' | { ttlMs: number };

export interface Verdict {
  decision: Decision;
  /** Why, shown to the user in the 403 message; may be empty. */
  reason: string;
  /** An error met while deciding; the decision still stands. */
  error?: string;
  /** How long the verdict stays true; `policy` when not said. */
  validity?: Validity;
  /** The same verdict holds whatever the object's name (the other attributes the same); false when not said. */
  anyName?: boolean;
}

/** One link of the chain: allow, deny, or no opinion to pass the request on. */
export interface Authorizer {
  authorize(attributes: Attributes): Promise<Verdict>;
  /** Releases what the authorizer holds (a chain replaced by a reload). */
  close?(): void;
}

export const verdict = (decision: Decision, reason = '', error?: string, validity?: Validity): Verdict =>
  ({ decision, reason, error, ...(validity ? { validity } : {}) });

/** The verdict, said to hold whatever the object's name. */
export const forAnyName = (v: Verdict): Verdict => ({ ...v, anyName: true });

const rank = (v: Validity): number => (v === 'uncacheable' ? 0 : typeof v === 'object' ? 1 : v === 'policy' ? 2 : 3);

/** The shorter-lived of two validities: a chain's verdict holds only as long as every answer it rests on. */
export function narrower(a: Validity, b: Validity): Validity {
  if (typeof a === 'object' && typeof b === 'object') return a.ttlMs <= b.ttlMs ? a : b;
  return rank(a) <= rank(b) ? a : b;
}

/** The rules a user holds as one authorizer can enumerate them (SelfSubjectRulesReview). */
export interface RulesAnswer {
  resourceRules: RuleShape[];
  nonResourceRules: RuleShape[];
  /** The authorizer cannot list everything it would allow. */
  incomplete: boolean;
  error?: string;
}

export interface RuleShape {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** An authorizer that can enumerate a user's rules; one that cannot makes a review incomplete. */
export interface RuleLister {
  rulesFor(user: UserInfo, namespace: string): Promise<RulesAnswer>;
}
