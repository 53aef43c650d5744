// The admission chain's histograms, named and labelled as the platform's:
// one observation per phase of a request (step) and per plugin (controller).
import { Histogram, type Registry } from 'prom-client';
import type { Phase } from './types.js';

const BUCKETS = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5];

/** The `type` label of a phase: `admit` for mutation, `validate` for validation. */
export const stepType = (phase: Phase): string => (phase === 'mutating' ? 'admit' : 'validate');

export class ChainMetrics {
  private readonly step: Histogram;
  private readonly controller: Histogram;

  constructor(registry: Registry) {
    this.step = new Histogram({
      name: 'apiserver_admission_step_admission_duration_seconds', registers: [registry], buckets: BUCKETS,
      help: 'Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).',
      labelNames: ['type', 'operation', 'rejected'],
    });
    this.controller = new Histogram({
      name: 'apiserver_admission_controller_admission_duration_seconds', registers: [registry], buckets: BUCKETS,
      help: 'Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
      labelNames: ['name', 'type', 'operation', 'rejected'],
    });
  }

  observeStep(phase: Phase, operation: string, rejected: boolean, seconds: number): void {
    this.step.observe({ type: stepType(phase), operation, rejected: String(rejected) }, seconds);
  }

  observePlugin(name: string, phase: Phase, operation: string, rejected: boolean, seconds: number): void {
    this.controller.observe({ name, type: stepType(phase), operation, rejected: String(rejected) }, seconds);
  }
}
