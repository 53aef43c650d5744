// The RBAC authorizer: allows a request when a rule bound to the user allows it,
// otherwise has no opinion (RBAC never denies), naming the bindings whose role
// could not be found.
import { verdict, type Attributes, type Authorizer, type RulesAnswer, type Verdict } from '../authz/types.js';
import { aggregateMessage, RuleResolver } from './resolver.js';
import { ruleAllows, type RuleRequest } from './rules.js';
import type { PolicyIndex } from './index.js';
import type { PolicyRule } from './types.js';

function requestOf(a: Attributes): RuleRequest {
  if (a.resource) {
    const r = a.resource;
    return { resource: { verb: r.verb, group: r.group, resource: r.resource, subresource: r.subresource, name: r.name } };
  }
  return { nonResource: { verb: a.nonResource?.verb ?? '', path: a.nonResource?.path ?? '' } };
}

export class RBACAuthorizer implements Authorizer {
  readonly resolver: RuleResolver;

  constructor(readonly index: PolicyIndex) {
    this.resolver = new RuleResolver(index);
  }

  async authorize(attributes: Attributes): Promise<Verdict> {
    const request = requestOf(attributes);
    const errors: Error[] = [];
    let allowedBy = '';
    let anyName = false;
    this.resolver.visitRulesFor(attributes.user, attributes.resource?.namespace ?? '', (source, rule, err) => {
      if (rule && ruleAllows(rule, request)) {
        allowedBy = source;
        anyName = (rule.resourceNames ?? []).length === 0;
        return false;
      }
      if (err) errors.push(err);
      return true;
    });
    // A rule without resourceNames allows every name; one with them, or no rule (another name may be listed), does not say.
    if (allowedBy) return { ...verdict('ALLOW', `RBAC: allowed by ${allowedBy}`), anyName };
    return verdict('NO_OPINION', errors.length ? `RBAC: ${aggregateMessage(errors)}` : '');
  }

  /** The user's rules in a namespace, split into resource and path rules. */
  async rulesFor(user: Attributes['user'], namespace: string): Promise<RulesAnswer> {
    const { rules, errors } = this.resolver.rulesFor(user, namespace);
    const pick = (r: PolicyRule, keys: Array<keyof PolicyRule>): PolicyRule =>
      Object.fromEntries(keys.filter((k) => r[k] !== undefined).map((k) => [k, r[k]])) as unknown as PolicyRule;
    return {
      resourceRules: rules.filter((r) => (r.resources ?? []).length > 0).map((r) => pick(r, ['verbs', 'apiGroups', 'resources', 'resourceNames'])),
      nonResourceRules: rules.filter((r) => (r.nonResourceURLs ?? []).length > 0).map((r) => pick(r, ['verbs', 'nonResourceURLs'])),
      incomplete: false,
      error: errors.length ? aggregateMessage(errors) : undefined,
    };
  }

  /** `listener` runs after any change to roles or bindings has taken effect in the indexes. */
  onPolicyChange(listener: () => void): void {
    this.index.onChange(listener);
  }
}
