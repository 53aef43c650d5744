// The `authorizer` variable of policy expressions. Expressions run synchronously
// while the authorization service answers over RPC, so an evaluation that asks
// something not yet known gets "no opinion" and records the question; the caller
// asks the service and evaluates again, until every answer is known (bounded).
import type { AuthorizationAttributes, AuthorizationDecision, AuthorizerBinding, Principal } from '../../cel/index.js';
import type { UserInfo__Output as UserInfo } from '../../rpc/gen/svc/authn/v1/UserInfo.js';
import type { Authorize, AuthorizeAttributes, AuthorizeDecision } from '../authz-client.js';

/** How many rounds of questions one evaluation may ask before its remaining questions count as errors. */
const MAX_ROUNDS = 5;

const principalOf = (user: UserInfo): Principal => ({
  name: user.username, uid: user.uid, groups: user.groups,
  extra: Object.fromEntries(Object.entries(user.extra ?? {}).map(([k, v]) => [k, v.values ?? []])),
});

const userOf = (p: Principal): UserInfo => ({
  username: p.name, uid: p.uid ?? '', groups: [...p.groups ?? []],
  extra: Object.fromEntries(Object.entries(p.extra ?? {}).map(([k, v]) => [k, { values: [...v] }])),
});

/** The expression's question as the authorization service takes it. */
function attributesOf(a: Omit<AuthorizationAttributes, 'user'>): AuthorizeAttributes {
  if (!a.resourceRequest) return { nonResource: { path: a.path ?? '', verb: a.verb } };
  return {
    resource: {
      verb: a.verb, group: a.apiGroup ?? '', version: a.apiVersion ?? '', resource: a.resource ?? '', subresource: a.subresource ?? '',
      namespace: a.namespace ?? '', name: a.name ?? '', fieldSelector: a.fieldSelector ?? '', labelSelector: a.labelSelector ?? '',
    },
  };
}

const DECISIONS = { ALLOW: 'allow', DENY: 'deny', NO_OPINION: 'noOpinion' } as const;

const decisionOf = (d: AuthorizeDecision): AuthorizationDecision => ({
  decision: DECISIONS[d.decision] ?? 'noOpinion', reason: d.reason, ...(d.evaluationError ? { error: d.evaluationError } : {}),
});

/** The decisions of one admission request, shared by every expression evaluated for it. */
export class RequestAuthorizer {
  private readonly known = new Map<string, AuthorizationDecision>();
  private readonly pending = new Map<string, AuthorizationAttributes>();
  readonly binding: AuthorizerBinding;

  constructor(user: UserInfo, private readonly authorize?: Authorize) {
    this.binding = {
      user: principalOf(user),
      authorize: (attributes) => {
        const key = JSON.stringify(attributes);
        const decision = this.known.get(key);
        if (decision) return decision;
        if (!this.authorize) return { decision: 'noOpinion', error: 'no authorizer is configured' };
        this.pending.set(key, attributes);
        return { decision: 'noOpinion' };
      },
    };
  }

  /** Runs `evaluate` until it asks nothing new; its last answer stands. */
  async settle<T>(evaluate: () => T): Promise<T> {
    for (let round = 0; ; round++) {
      const result = evaluate();
      if (this.pending.size === 0 || round === MAX_ROUNDS) return result;
      await this.ask();
    }
  }

  private async ask(): Promise<void> {
    const questions = [...this.pending];
    this.pending.clear();
    await Promise.all(questions.map(async ([key, { user, ...attributes }]) => {
      try {
        this.known.set(key, decisionOf(await this.authorize!(userOf(user), attributesOf(attributes))));
      } catch (err) {
        this.known.set(key, { decision: 'noOpinion', error: (err as Error).message });
      }
    }));
  }
}
