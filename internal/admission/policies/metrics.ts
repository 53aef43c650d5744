// The ValidatingAdmissionPolicy metrics of the platform, with its names, labels
// and buckets: one count and one latency per failed check (or per expression
// error a binding ignored), by the action the binding took.
import { Counter, Histogram, type Registry } from 'prom-client';
import type { ExpressionErrorType } from './expressions.js';

export type CheckErrorType = ExpressionErrorType | 'no_error';
export type EnforcementAction = 'allow' | 'deny' | 'warn' | 'audit';

const LABELS = ['policy', 'policy_binding', 'error_type', 'enforcement_action'];

export class PolicyMetrics {
  private readonly checks: Counter;
  private readonly latency: Histogram;

  constructor(registry: Registry) {
    const registers = [registry];
    this.checks = new Counter({
      name: 'apiserver_validating_admission_policy_check_total', registers, labelNames: LABELS,
      help: 'Validation admission policy check total, labeled by policy and further identified by binding and enforcement action taken.',
    });
    this.latency = new Histogram({
      name: 'apiserver_validating_admission_policy_check_duration_seconds', registers, labelNames: LABELS,
      buckets: [0.0000005, 0.001, 0.01, 0.1, 1.0],
      help: 'Validation admission latency for individual validation expressions in seconds, labeled by policy and further including binding and enforcement action taken.',
    });
  }

  observe(policy: string, binding: string, errorType: CheckErrorType, action: EnforcementAction, seconds: number): void {
    const labels = { policy, policy_binding: binding, error_type: errorType, enforcement_action: action };
    this.checks.inc(labels);
    this.latency.observe(labels, seconds);
  }
}
