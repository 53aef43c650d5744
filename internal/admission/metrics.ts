// The admission chain's histograms, named and labelled as the platform's:
// one observation per phase of a request (step) and per plugin (controller).
// Each label set's series is bound once: the chain observes once per plugin.
import type { Registry } from 'prom-client';
import { BoundHistogram, type BoundSeries } from '../metrics/histogram.js';
import type { Phase } from './types.js';

const BUCKETS = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5];

/** The `type` label of a phase: `admit` for mutation, `validate` for validation. */
export const stepType = (phase: Phase): string => (phase === 'mutating' ? 'admit' : 'validate');

export class ChainMetrics {
  private readonly step: BoundHistogram<'type' | 'operation' | 'rejected'>;
  private readonly controller: BoundHistogram<'name' | 'type' | 'operation' | 'rejected'>;
  /** The bound series by phase, plugin name ('' for the step) and operation: [admitted, rejected]. Looked up with
   * the strings as they come, rather than a key joined from them, which cost more than the observation itself. */
  private readonly bound: Record<Phase, Map<string, Map<string, BoundSeries[]>>> = { mutating: new Map(), validating: new Map() };

  constructor(registry: Registry) {
    this.step = new BoundHistogram('apiserver_admission_step_admission_duration_seconds',
      'Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).',
      ['type', 'operation', 'rejected'], BUCKETS, registry);
    this.controller = new BoundHistogram('apiserver_admission_controller_admission_duration_seconds',
      'Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
      ['name', 'type', 'operation', 'rejected'], BUCKETS, registry);
  }

  observeStep(phase: Phase, operation: string, rejected: boolean, seconds: number): void {
    this.series('', phase, operation, rejected).observe(seconds);
  }

  observePlugin(name: string, phase: Phase, operation: string, rejected: boolean, seconds: number): void {
    this.series(name, phase, operation, rejected).observe(seconds);
  }

  /** The series of a plugin (`name`), or of the step when `name` is empty. */
  private series(name: string, phase: Phase, operation: string, rejected: boolean): BoundSeries {
    let byOperation = this.bound[phase].get(name);
    if (!byOperation) this.bound[phase].set(name, byOperation = new Map());
    let pair = byOperation.get(operation);
    if (!pair) byOperation.set(operation, pair = []);
    const i = rejected ? 1 : 0;
    return pair[i] ??= this.bind(name, phase, operation, rejected);
  }

  private bind(name: string, phase: Phase, operation: string, rejected: boolean): BoundSeries {
    const labels = { type: stepType(phase), operation, rejected: String(rejected) };
    return name ? this.controller.labels({ name, ...labels }) : this.step.labels(labels);
  }
}
