// The authorizer chain: authorizers are asked in order, the first that allows or
// denies decides; when none has an opinion their reasons are joined and the
// gateway denies. An authorizer that fails counts as having no opinion.
import { verdict, type Attributes, type Authorizer, type Verdict } from './types.js';

export class UnionAuthorizer implements Authorizer {
  constructor(private readonly authorizers: Authorizer[]) {}

  async authorize(attributes: Attributes): Promise<Verdict> {
    const reasons: string[] = [];
    const errors: string[] = [];
    for (const authorizer of this.authorizers) {
      let answer: Verdict;
      try {
        answer = await authorizer.authorize(attributes);
      } catch (err) {
        answer = verdict('NO_OPINION', '', (err as Error).message);
      }
      if (answer.error) errors.push(answer.error);
      if (answer.reason) reasons.push(answer.reason);
      if (answer.decision !== 'NO_OPINION') return { ...answer, error: errors.join('; ') || undefined };
    }
    return verdict('NO_OPINION', reasons.join('\n'), errors.join('; ') || undefined);
  }
}
