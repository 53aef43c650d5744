// The webhook metrics of the platform, with its names and labels: latency and
// requests per webhook call, rejections by cause, and calls that failed open.
import { Counter, Histogram, type Registry } from 'prom-client';

/** The `type` label: `admit` for mutating webhooks, `validating` for validating ones. */
export const webhookType = (mutating: boolean): string => (mutating ? 'admit' : 'validating');

export type ErrorType = 'calling_webhook_error' | 'apiserver_internal_error' | 'no_error';

export class WebhookMetrics {
  private readonly duration: Histogram;
  private readonly requests: Counter;
  private readonly rejections: Counter;
  private readonly failOpen: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.duration = new Histogram({
      name: 'apiserver_admission_webhook_admission_duration_seconds', registers, buckets: [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25],
      help: 'Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
      labelNames: ['name', 'type', 'operation', 'rejected'],
    });
    this.requests = new Counter({
      name: 'apiserver_admission_webhook_request_total', registers,
      help: 'Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
      labelNames: ['name', 'type', 'operation', 'code', 'rejected'],
    });
    this.rejections = new Counter({
      name: 'apiserver_admission_webhook_rejection_count', registers,
      help: 'Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
      labelNames: ['name', 'type', 'operation', 'error_type', 'rejection_code'],
    });
    this.failOpen = new Counter({
      name: 'apiserver_admission_webhook_fail_open_count', registers,
      help: 'Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit).',
      labelNames: ['name', 'type'],
    });
  }

  /** One call of a webhook: its latency, and whether (with what HTTP code) it refused the request. */
  call(name: string, mutating: boolean, operation: string, rejected: boolean, code: number, seconds: number): void {
    const type = webhookType(mutating);
    this.duration.observe({ name, type, operation, rejected: String(rejected) }, seconds);
    this.requests.inc({ name, type, operation, code: String(Math.min(code, 600)), rejected: String(rejected) });
  }

  rejection(name: string, mutating: boolean, operation: string, errorType: ErrorType, code: number): void {
    this.rejections.inc({ name, type: webhookType(mutating), operation, error_type: errorType, rejection_code: String(Math.min(code, 600)) });
  }

  failedOpen(name: string, mutating: boolean): void {
    this.failOpen.inc({ name, type: webhookType(mutating) });
  }
}
