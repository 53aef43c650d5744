// The shapes every authorizer shares: the attributes of one request and a
// decision with a reason a user can read.
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

export interface Verdict {
  decision: Decision;
  /** Why, shown to the user in the 403 message; may be empty. */
  reason: string;
  /** An error met while deciding; the decision still stands. */
  error?: string;
}

/** One link of the chain: allow, deny, or no opinion to pass the request on. */
export interface Authorizer {
  authorize(attributes: Attributes): Promise<Verdict>;
}

export const verdict = (decision: Decision, reason = '', error?: string): Verdict => ({ decision, reason, error });

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
