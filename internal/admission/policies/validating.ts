// ValidatingAdmissionPolicy: each policy with each of its bindings (and each of
// the binding's parameters) that match a request is evaluated; a failed
// validation or an expression error under failurePolicy Fail becomes a decision
// the binding's validationActions turn into a refusal (Deny), a Warning header
// (Warn) or an audit annotation (Audit).
import type { ApiObject } from '../../apimachinery/meta.js';
import { fromJson, stringifyValue } from '../../cel/index.js';
import { labelKey } from '../../names/index.js';
import type { StorageClient } from '../../storage/client.js';
import { forbidden } from '../errors.js';
import type { NamespaceCache } from '../namespaces.js';
import { AdmissionError, type AdmissionPlugin, type AdmissionRequest, type Operation, type PluginAnswer } from '../types.js';
import type { Authorize } from '../authz-client.js';
import { compileExpression, ExpressionError, policyBudget, run, runBool, type Compiled, type ExpressionErrorType } from './expressions.js';
import type { CheckErrorType, EnforcementAction, PolicyMetrics } from './metrics.js';
import { ParamError, ParamSource } from './params.js';
import {
  applies, compileCore, composeVariables, isExempt, matchConditions, paramsFor, PolicySet, requestContext,
  type Binding, type Obj, type PolicyCore, type RequestContext,
} from './policy.js';

export const VALIDATING_ADMISSION_POLICY = 'ValidatingAdmissionPolicy';
/** The audit annotation of failed validations whose binding audits them. */
export const VALIDATION_FAILURE_ANNOTATION = labelKey('validation_failure', 'validation.policy.admission');

interface Validation {
  readonly check: Compiled;
  readonly message?: string;
  readonly messageExpression?: Compiled;
  readonly reason: string;
}

interface ValidatingPolicy extends PolicyCore {
  readonly validations: Validation[];
  readonly auditAnnotations: Array<{ key: string; value: Compiled }>;
}

export function compileValidatingPolicy(obj: ApiObject): ValidatingPolicy {
  const spec = (obj.spec ?? {}) as Obj;
  const list = (v: unknown): Obj[] => (Array.isArray(v) ? v : []);
  return {
    ...compileCore(obj),
    validations: list(spec.validations).map((v) => ({
      check: compileExpression(String(v.expression ?? '')),
      message: typeof v.message === 'string' && v.message ? v.message : undefined,
      messageExpression: typeof v.messageExpression === 'string' && v.messageExpression ? compileExpression(v.messageExpression) : undefined,
      reason: typeof v.reason === 'string' && v.reason ? v.reason : 'Invalid',
    })),
    auditAnnotations: list(spec.auditAnnotations).map((a) => ({ key: String(a.key ?? ''), value: compileExpression(String(a.valueExpression ?? '')) })),
  };
}

/** A failed validation (or an expression error under Fail). */
interface Failure { message: string; reason: string; index?: number; errorType: CheckErrorType }

/** The HTTP status of a refusal with the validation's reason, as the platform maps it. */
export function reasonCode(reason: string): number {
  switch (reason) {
    case 'Forbidden': return 403;
    case 'Unauthorized': return 401;
    case 'RequestEntityTooLarge': return 413;
    default: return 422;
  }
}

function failureMessage(v: Validation, activation: Readonly<Record<string, unknown>>, budget: ReturnType<typeof policyBudget>): string {
  if (v.messageExpression) {
    try {
      const m = run(v.messageExpression, activation, budget);
      if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) return m.trim();
    } catch (err) {
      if (!(err instanceof ExpressionError)) throw err;
    }
  }
  return v.message ?? `failed expression: ${v.check.expression.trim()}`;
}

/** One evaluation of a policy: its failures, the expression errors it ignored (failurePolicy Ignore) and its audit annotations. */
interface Evaluation { failures: Failure[]; ignored: ExpressionErrorType[]; annotations: Record<string, string> }

function evaluate(policy: ValidatingPolicy, base: Readonly<Record<string, unknown>>, params: ApiObject | null): Evaluation {
  const out: Evaluation = { failures: [], ignored: [], annotations: {} };
  const budget = policyBudget();
  const activation: Record<string, unknown> = { ...base, params: fromJson(params) };
  const onError = (err: unknown, index?: number) => {
    if (!(err instanceof ExpressionError)) throw err;
    if (policy.failurePolicy === 'Fail') out.failures.push({ message: err.message, reason: '', index, errorType: err.errorType });
    else out.ignored.push(err.errorType);
  };
  try {
    if (!matchConditions(policy, activation, budget)) return out;
  } catch (err) {
    onError(err);
    return out;
  }
  composeVariables(policy, activation, budget);
  policy.validations.forEach((v, index) => {
    try {
      if (!runBool(v.check, activation, budget)) {
        out.failures.push({ message: failureMessage(v, activation, budget), reason: v.reason, index, errorType: 'no_error' });
      }
    } catch (err) {
      onError(err, index);
    }
  });
  for (const a of policy.auditAnnotations) {
    try {
      const value = run(a.value, activation, budget);
      if (value !== null) out.annotations[`${policy.name}/${a.key}`] = typeof value === 'string' ? value : stringifyValue(value);
    } catch (err) {
      onError(err);
    }
  }
  return out;
}

/** What the bindings' actions made of the failures of one request. */
class Outcome {
  denial?: { policy: string; binding: string; failure: Failure };
  readonly warnings: string[] = [];
  readonly audited: Obj[] = [];
  readonly annotations: Record<string, string> = {};

  /** The enforcement actions of a binding, as the metrics name them. */
  static actions(binding: Binding): EnforcementAction[] {
    const actions: string[] = Array.isArray(binding.spec.validationActions) ? binding.spec.validationActions : [];
    return actions.map((a) => a.toLowerCase()).filter((a): a is EnforcementAction => a === 'deny' || a === 'warn' || a === 'audit');
  }

  record(policy: string, binding: Binding, failure: Failure): void {
    const actions: string[] = Array.isArray(binding.spec.validationActions) ? binding.spec.validationActions : [];
    if (actions.includes('Deny')) this.denial ??= { policy, binding: binding.name, failure };
    if (actions.includes('Warn')) this.warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policy}' with binding '${binding.name}': ${failure.message}`);
    if (actions.includes('Audit')) {
      this.audited.push({ message: failure.message, policy, binding: binding.name, expressionIndex: failure.index ?? 0, validationActions: actions });
    }
  }

  /** A binding that could not be evaluated (its parameters) refuses under Fail whatever its actions. */
  configError(policy: string, binding: Binding, message: string): void {
    this.denial ??= { policy, binding: binding.name, failure: { message: `failed to configure binding: ${message}`, reason: '', errorType: 'invalid_error' } };
  }

  answer(request: AdmissionRequest): PluginAnswer {
    if (this.denial) {
      const { policy, binding, failure } = this.denial;
      const detail = `ValidatingAdmissionPolicy '${policy}' with binding '${binding}' denied request: ${failure.message}`;
      const reason = failure.reason || 'Invalid';
      const base = forbidden(request.resource, request.name || nameOf(request), detail);
      throw new AdmissionError(reasonCode(reason), reason, base.message, [{ type: '', message: detail, field: '' }]);
    }
    if (this.audited.length) this.annotations[VALIDATION_FAILURE_ANNOTATION] = JSON.stringify(this.audited);
    return { warnings: this.warnings, auditAnnotations: this.annotations };
  }
}

const nameOf = (r: AdmissionRequest): string => ((r.object ?? r.oldObject)?.metadata as Obj | undefined)?.name ?? '';

export class ValidatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = VALIDATING_ADMISSION_POLICY;
  readonly phase = 'validating' as const;
  private readonly policies: PolicySet<ValidatingPolicy>;
  private readonly params: ParamSource;

  constructor(storage: StorageClient, private readonly namespaces: NamespaceCache, private readonly authorize?: Authorize,
    private readonly metrics?: PolicyMetrics) {
    this.params = new ParamSource(storage);
    this.policies = new PolicySet(storage, { policies: 'validatingadmissionpolicies', bindings: 'validatingadmissionpolicybindings' },
      compileValidatingPolicy, this.params).start();
  }

  handles(_operation: Operation): boolean {
    return true;
  }

  async admit(request: AdmissionRequest): Promise<PluginAnswer | void> {
    if (isExempt(request)) return;
    let ctx: RequestContext | undefined;
    const outcome = new Outcome();
    for (const { policy, bindings } of this.policies.bound()) {
      for (const binding of bindings) {
        ctx ??= await requestContext(request, this.namespaces, this.authorize);
        if (!await applies(policy, binding, ctx)) continue;
        await this.evaluateBinding(policy, binding, ctx, outcome);
      }
    }
    return outcome.answer(request);
  }

  private async evaluateBinding(policy: ValidatingPolicy, binding: Binding, ctx: RequestContext, outcome: Outcome): Promise<void> {
    let params: Array<ApiObject | null>;
    try {
      params = await paramsFor(policy, binding, ctx.request, this.params);
    } catch (err) {
      if (!(err instanceof ParamError)) throw err;
      if (policy.failurePolicy === 'Fail') outcome.configError(policy.name, binding, err.message);
      return;
    }
    for (const param of params) {
      const started = performance.now();
      const result = await ctx.authorizer.settle(() => evaluate(policy, ctx.activation, param));
      this.observe(policy.name, binding, result, (performance.now() - started) / 1000);
      Object.assign(outcome.annotations, result.annotations);
      for (const failure of result.failures) outcome.record(policy.name, binding, failure);
    }
  }

  /** As the platform counts: each failure once per action its binding takes, each ignored error as allowed. */
  private observe(policy: string, binding: Binding, result: Evaluation, seconds: number): void {
    if (!this.metrics || (result.failures.length === 0 && result.ignored.length === 0)) return;
    const actions = Outcome.actions(binding);
    for (const failure of result.failures) for (const action of actions) this.metrics.observe(policy, binding.name, failure.errorType, action, seconds);
    for (const errorType of result.ignored) this.metrics.observe(policy, binding.name, errorType, 'allow', seconds);
  }

  stop(): void {
    this.policies.stop();
    this.params.stop();
  }
}
