// The authorizer chain: authorizers are asked in order, the first that allows or
// denies decides; when none has an opinion their reasons are joined and the
// gateway denies. An authorizer that fails counts as having no opinion. The
// chain's verdict holds as long as every answer it rests on.
import {
  narrower, verdict, type Attributes, type Authorizer, type RuleLister, type RulesAnswer, type UserInfo, type Validity, type Verdict,
} from './types.js';

export const listsRules = (a: Authorizer): a is Authorizer & RuleLister => typeof (a as Partial<RuleLister>).rulesFor === 'function';

export class UnionAuthorizer implements Authorizer, RuleLister {
  constructor(private readonly authorizers: Authorizer[]) {}

  /** Every link's rules; a link that cannot list them makes the answer incomplete. */
  async rulesFor(user: UserInfo, namespace: string): Promise<RulesAnswer> {
    const all: RulesAnswer = { resourceRules: [], nonResourceRules: [], incomplete: false };
    const errors: string[] = [];
    for (const authorizer of this.authorizers) {
      if (!listsRules(authorizer)) { all.incomplete = true; continue; }
      const answer = await authorizer.rulesFor(user, namespace).catch((err: Error): RulesAnswer =>
        ({ resourceRules: [], nonResourceRules: [], incomplete: true, error: err.message }));
      all.resourceRules.push(...answer.resourceRules);
      all.nonResourceRules.push(...answer.nonResourceRules);
      all.incomplete ||= answer.incomplete;
      if (answer.error) errors.push(answer.error);
    }
    return { ...all, ...(errors.length ? { error: errors.join('; ') } : {}) };
  }

  async authorize(attributes: Attributes): Promise<Verdict> {
    const reasons: string[] = [];
    const errors: string[] = [];
    let validity: Validity = 'process';
    // Holds for any name only if no link consulted looked at the name, those that passed it on included.
    let anyName = true;
    for (const authorizer of this.authorizers) {
      let answer: Verdict;
      try {
        answer = await authorizer.authorize(attributes);
      } catch (err) {
        answer = verdict('NO_OPINION', '', (err as Error).message, 'uncacheable');
      }
      validity = narrower(validity, answer.validity ?? 'policy');
      anyName &&= answer.anyName === true;
      if (answer.error) errors.push(answer.error);
      if (answer.reason) reasons.push(answer.reason);
      if (answer.decision !== 'NO_OPINION') return { ...answer, error: errors.join('; ') || undefined, validity, anyName };
    }
    return { ...verdict('NO_OPINION', reasons.join('\n'), errors.join('; ') || undefined, validity), anyName };
  }

  close(): void {
    for (const authorizer of this.authorizers) authorizer.close?.();
  }
}
