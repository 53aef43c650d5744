// The platform's Pod Security metrics: evaluations by decision, policy and
// mode; exempt requests; errors that kept a request from normal evaluation.
import { Counter, type Registry } from 'prom-client';
import { LATEST, SERVER_VERSION, versionString, type LevelVersion, type Mode } from './policy.js';

/** What a metric says of the request: `create`/`update`, `pod`/`namespace`/`controller`, and the subresource. */
export interface RequestLabels {
  operation: string;
  resource: 'pod' | 'namespace' | 'controller';
  subresource: string;
}

const requestLabels = (r: RequestLabels) => ({ request_operation: r.operation.toLowerCase(), resource: r.resource, subresource: r.subresource });

/** Privileged is always effectively latest; a version past this server's is `future`. */
function versionLabel(lv: LevelVersion): string {
  if (lv.version === LATEST || lv.level === 'privileged') return 'latest';
  return lv.version > SERVER_VERSION ? 'future' : versionString(lv.version);
}

export class PodSecurityMetrics {
  private readonly evaluations: Counter;
  private readonly exemptions: Counter;
  private readonly errors: Counter;

  constructor(registry?: Registry) {
    const registers = registry ? [registry] : [];
    this.evaluations = new Counter({
      name: 'pod_security_evaluations_total', help: 'Number of policy evaluations that occurred, not counting ignored or exempt requests.',
      labelNames: ['decision', 'policy_level', 'policy_version', 'mode', 'request_operation', 'resource', 'subresource'], registers,
    });
    this.exemptions = new Counter({
      name: 'pod_security_exemptions_total', help: 'Number of exempt requests, not counting ignored or out of scope requests.',
      labelNames: ['request_operation', 'resource', 'subresource'], registers,
    });
    this.errors = new Counter({
      name: 'pod_security_errors_total',
      help: 'Number of errors preventing normal evaluation. Non-fatal errors may result in the latest restricted profile being used for evaluation.',
      labelNames: ['fatal', 'request_operation', 'resource', 'subresource'], registers,
    });
  }

  evaluation(decision: 'allow' | 'deny', lv: LevelVersion, mode: Mode, r: RequestLabels): void {
    this.evaluations.inc({ decision, policy_level: lv.level, policy_version: versionLabel(lv), mode, ...requestLabels(r) });
  }

  exemption(r: RequestLabels): void {
    this.exemptions.inc(requestLabels(r));
  }

  error(fatal: boolean, r: RequestLabels): void {
    this.errors.inc({ fatal: String(fatal), ...requestLabels(r) });
  }
}
