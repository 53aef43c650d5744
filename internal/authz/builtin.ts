// The authorizers that need no configuration; their answers hold as long as the
// process runs, whatever the object's name.
import { GROUP_MASTERS } from '../names/index.js';
import { forAnyName, verdict, type Attributes, type Authorizer, type RuleLister, type RulesAnswer, type Verdict } from './types.js';

const NO_RULES: RulesAnswer = { resourceRules: [], nonResourceRules: [], incomplete: false };

export class AlwaysAllowAuthorizer implements Authorizer, RuleLister {
  async authorize(): Promise<Verdict> {
    return forAnyName(verdict('ALLOW', '', undefined, 'process'));
  }

  async rulesFor(): Promise<RulesAnswer> {
    return { resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }], incomplete: false };
  }
}

/** Refuses by having no opinion, as Kubernetes does: an authorizer later in the
 * chain may still allow, and a chain where none does denies. */
export class AlwaysDenyAuthorizer implements Authorizer, RuleLister {
  async authorize(): Promise<Verdict> {
    return forAnyName(verdict('NO_OPINION', 'Everything is forbidden.', undefined, 'process'));
  }

  async rulesFor(): Promise<RulesAnswer> {
    return NO_RULES;
  }
}

/** Allows members of the given groups everything; stands in front of the chain. Lists no rules:
 * those members hold theirs through the cluster-admin binding. */
export class PrivilegedGroupAuthorizer implements Authorizer, RuleLister {
  async rulesFor(): Promise<RulesAnswer> {
    return NO_RULES;
  }

  constructor(private readonly groups: string[] = [GROUP_MASTERS]) {}

  async authorize(attributes: Attributes): Promise<Verdict> {
    const member = attributes.user.groups.some((g) => this.groups.includes(g));
    return forAnyName(verdict(member ? 'ALLOW' : 'NO_OPINION', '', undefined, 'process'));
  }
}
