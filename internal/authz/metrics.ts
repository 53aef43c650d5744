// The authorization metrics, named as upstream names them: terminal decisions
// per authorizer, webhook calls, match condition errors and exclusions, and the
// configuration file's automatic reloads.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { listsRules } from './chain.js';
import { verdict, type Attributes, type Authorizer, type RuleLister, type RulesAnswer, type UserInfo, type Verdict } from './types.js';

export class AuthzMetrics {
  readonly registry = new Registry();
  readonly decisions = new Counter({
    name: 'apiserver_authorization_decisions_total', help: 'Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.',
    labelNames: ['type', 'name', 'decision'], registers: [this.registry],
  });
  readonly webhookDuration = new Histogram({
    name: 'apiserver_authorization_webhook_duration_seconds', help: 'Request latency in seconds.',
    labelNames: ['name', 'result'], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers: [this.registry],
  });
  readonly webhookEvaluations = new Counter({
    name: 'apiserver_authorization_webhook_evaluations_total', help: 'Round-trips to authorization webhooks.',
    labelNames: ['name', 'result'], registers: [this.registry],
  });
  readonly webhookFailOpen = new Counter({
    name: 'apiserver_authorization_webhook_evaluations_fail_open_total', help: 'NoOpinion results due to webhook timeout or error.',
    labelNames: ['name', 'result'], registers: [this.registry],
  });
  readonly matchConditionErrors = new Counter({
    name: 'apiserver_authorization_match_condition_evaluation_errors_total', help: 'Total number of errors when an authorization webhook encounters a match condition error split by authorizer type and name.',
    labelNames: ['type', 'name'], registers: [this.registry],
  });
  readonly matchConditionExclusions = new Counter({
    name: 'apiserver_authorization_match_condition_exclusions_total', help: 'Total number of exclusions when an authorization webhook is skipped by match conditions, split by authorizer type and name.',
    labelNames: ['type', 'name'], registers: [this.registry],
  });
  readonly reloads = new Counter({
    name: 'apiserver_authorization_config_controller_automatic_reloads_total', help: 'Total number of automatic reloads of authorization configuration split by status and apiserver identity.',
    labelNames: ['status', 'apiserver_id_hash'], registers: [this.registry],
  });
  readonly reloadTimestamp = new Gauge({
    name: 'apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds', help: 'Timestamp of the last automatic reload of authorization configuration split by status and apiserver identity.',
    labelNames: ['status', 'apiserver_id_hash'], registers: [this.registry],
  });
}

/** Counts an authorizer's terminal decisions under its type and name. */
export class MeasuredAuthorizer implements Authorizer, RuleLister {
  constructor(readonly type: string, readonly name: string, private readonly inner: Authorizer, private readonly metrics: AuthzMetrics) {}

  async authorize(attributes: Attributes): Promise<Verdict> {
    let answer: Verdict;
    try {
      answer = await this.inner.authorize(attributes);
    } catch (err) {
      return verdict('NO_OPINION', '', `${this.name}: ${(err as Error).message}`, 'uncacheable');
    }
    if (answer.decision !== 'NO_OPINION') {
      this.metrics.decisions.inc({ type: this.type, name: this.name, decision: answer.decision === 'ALLOW' ? 'allowed' : 'denied' });
    }
    return answer;
  }

  /** The inner authorizer's rules; one that cannot list them makes the answer incomplete. */
  rulesFor(user: UserInfo, namespace: string): Promise<RulesAnswer> {
    if (listsRules(this.inner)) return this.inner.rulesFor(user, namespace);
    return Promise.resolve({ resourceRules: [], nonResourceRules: [], incomplete: true });
  }

  close(): void {
    this.inner.close?.();
  }
}
