// The authorizer chain: authorizers are asked in order, the first that allows or
// denies decides; when none has an opinion their reasons are joined and the
// gateway denies. An authorizer that fails counts as having no opinion. The
// chain's verdict holds as long as every answer it rests on.
import { narrower, verdict, type Attributes, type Authorizer, type Validity, type Verdict } from './types.js';

export class UnionAuthorizer implements Authorizer {
  constructor(private readonly authorizers: Authorizer[]) {}

  async authorize(attributes: Attributes): Promise<Verdict> {
    const reasons: string[] = [];
    const errors: string[] = [];
    let validity: Validity = 'process';
    for (const authorizer of this.authorizers) {
      let answer: Verdict;
      try {
        answer = await authorizer.authorize(attributes);
      } catch (err) {
        answer = verdict('NO_OPINION', '', (err as Error).message, 'uncacheable');
      }
      validity = narrower(validity, answer.validity ?? 'policy');
      if (answer.error) errors.push(answer.error);
      if (answer.reason) reasons.push(answer.reason);
      if (answer.decision !== 'NO_OPINION') return { ...answer, error: errors.join('; ') || undefined, validity };
    }
    return verdict('NO_OPINION', reasons.join('\n'), errors.join('; ') || undefined, validity);
  }

  close(): void {
    for (const authorizer of this.authorizers) authorizer.close?.();
  }
}
