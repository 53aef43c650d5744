// The authorization service's RPCs: Authorize over the authorizer chain (the
// decision, how long it stays true and the policy generation it was made at),
// CoversRules (escalation checks) over the RBAC rules, RulesReview over the
// chain's enumerable rules, PolicyStatus for the bootstrap policy.
import { api, type Handlers } from '../rpc/index.js';
import type { AuthorizeRequest__Output as AuthorizeRequest } from '../rpc/gen/svc/authz/v1/AuthorizeRequest.js';
import type { AuthorizeResponse } from '../rpc/gen/svc/authz/v1/AuthorizeResponse.js';
import type { CoversRulesRequest__Output as CoversRulesRequest } from '../rpc/gen/svc/authz/v1/CoversRulesRequest.js';
import type { CoversRulesResponse } from '../rpc/gen/svc/authz/v1/CoversRulesResponse.js';
import type { RulesReviewRequest__Output as RulesReviewRequest } from '../rpc/gen/svc/authz/v1/RulesReviewRequest.js';
import type { RulesReviewResponse } from '../rpc/gen/svc/authz/v1/RulesReviewResponse.js';
import type { PolicyRule__Output as PolicyRuleMessage } from '../rpc/gen/svc/authz/v1/PolicyRule.js';
import type { RBACAuthorizer } from '../rbac/authorizer.js';
import { compact, uncovered } from '../rbac/covers.js';
import { RoleNotFound } from '../rbac/index.js';
import type { PolicyRule } from '../rbac/types.js';
import type { AnswerGeneration } from '../rpc/generation.js';
import type { Attributes, Authorizer, RuleLister, RuleShape, UserInfo, Validity } from './types.js';

const NO_USER: UserInfo = { username: '', uid: '', groups: [], extra: {} };

export function attributesOf(request: AuthorizeRequest): Attributes {
  return {
    user: request.user ?? NO_USER,
    resource: request.resource ?? undefined,
    nonResource: request.nonResource ?? undefined,
  };
}

function validityFields(validity: Validity): Pick<AuthorizeResponse, 'validity' | 'ttlMs'> {
  if (typeof validity === 'object') return { validity: 'FOR_TTL', ttlMs: Math.max(0, Math.floor(validity.ttlMs)) };
  const names = { uncacheable: 'UNCACHEABLE', process: 'UNTIL_PROCESS_CHANGES', policy: 'UNTIL_POLICY_CHANGES' } as const;
  return { validity: names[validity], ttlMs: 0 };
}

/** The Authorize handler over an authorizer. */
export function authorizeHandler(authorizer: Authorizer, generation?: AnswerGeneration) {
  return async (request: AuthorizeRequest): Promise<AuthorizeResponse> => {
    // Read before deciding: a change during the decision makes it older than the newest generation, never newer.
    const at = generation?.current ?? '';
    const answer = await authorizer.authorize(attributesOf(request));
    return {
      decision: answer.decision, reason: answer.reason, evaluationError: answer.error ?? '',
      ...validityFields(generation ? answer.validity ?? 'policy' : 'uncacheable'), generation: at, anyName: answer.anyName === true,
    };
  };
}

const ruleOf = (m: PolicyRuleMessage): PolicyRule => ({
  verbs: m.verbs, apiGroups: m.apiGroups, resources: m.resources, resourceNames: m.resourceNames, nonResourceURLs: m.nonResourceUrls,
});

const messageOf = (r: RuleShape): PolicyRuleMessage => ({
  verbs: r.verbs, apiGroups: r.apiGroups ?? [], resources: r.resources ?? [], resourceNames: r.resourceNames ?? [], nonResourceUrls: r.nonResourceURLs ?? [],
});

/** CoversRules: the user's RBAC rules at the scope against the rules asked for (or those of a role). */
export function coversRulesHandler(rbac: RBACAuthorizer) {
  return async (request: CoversRulesRequest): Promise<CoversRulesResponse> => {
    const namespace = request.namespace;
    let wanted: PolicyRule[];
    try {
      wanted = request.roleRef ? rbac.index.roleRules(request.roleRef, namespace) : request.rules.map(ruleOf);
    } catch (err) {
      if (err instanceof RoleNotFound) return { covered: false, missing: [], resolutionErrors: [err.message], roleNotFound: true };
      throw err;
    }
    const { rules, errors } = rbac.resolver.rulesFor(request.user ?? NO_USER, namespace);
    const missing = compact(uncovered(rules, wanted));
    return { covered: missing.length === 0, missing: missing.map(messageOf), resolutionErrors: errors.map((e) => e.message), roleNotFound: false };
  };
}

export function rulesReviewHandler(chain: RuleLister) {
  return async (request: RulesReviewRequest): Promise<RulesReviewResponse> => {
    const answer = await chain.rulesFor(request.user ?? NO_USER, request.namespace);
    return {
      resourceRules: answer.resourceRules.map(messageOf), nonResourceRules: answer.nonResourceRules.map(messageOf),
      incomplete: answer.incomplete, evaluationError: answer.error ?? '',
    };
  };
}

export const AUTHZ_SERVICE_NAME = 'svc.authz.v1.Authorization';

/** What the RPCs beyond Authorize answer from. */
export interface PolicyServices {
  rbac: RBACAuthorizer;
  bootstrapped: () => boolean;
}

/** The service entry for serve(). */
export function authzService(authorizer: Authorizer & RuleLister, policy: PolicyServices, generation?: AnswerGeneration) {
  const handlers: Handlers = {
    Authorize: authorizeHandler(authorizer, generation),
    CoversRules: coversRulesHandler(policy.rbac),
    RulesReview: rulesReviewHandler(authorizer),
    PolicyStatus: async () => ({ bootstrapped: policy.bootstrapped() }),
  };
  return { name: AUTHZ_SERVICE_NAME, definition: api.svc.authz.v1.Authorization.service, handlers };
}
