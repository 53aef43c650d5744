// The admission chain: every mutating plugin that handles the operation, in
// order, each seeing the object as the previous left it; then every validating
// plugin on the final object. The first refusal ends the chain. Dry-run writes
// go through the same chain.
import type { Registry } from 'prom-client';
import { AdmissionError, type AdmissionPlugin, type AdmissionRequest, type Cause, type JsonObject, type Phase } from './types.js';
import { pluginFailure } from './errors.js';
import { ChainMetrics } from './metrics.js';

export type AdmissionOutcome =
  | { allowed: true; object?: JsonObject; warnings: string[]; auditAnnotations: Record<string, string> }
  | { allowed: false; code: number; reason: string; message: string; causes: Cause[]; warnings: string[]; auditAnnotations: Record<string, string> };

const seconds = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e9;

export class AdmissionChain {
  readonly plugins: AdmissionPlugin[];
  private readonly metrics?: ChainMetrics;

  /** registry: where the step and controller latency histograms are kept (none: not measured). */
  constructor(plugins: AdmissionPlugin[], registry?: Registry) {
    this.plugins = [...plugins.filter((p) => p.phase === 'mutating'), ...plugins.filter((p) => p.phase === 'validating')];
    if (registry) this.metrics = new ChainMetrics(registry);
  }

  async admit(original: AdmissionRequest): Promise<AdmissionOutcome> {
    const request = { ...original };
    const warnings: string[] = [];
    const auditAnnotations: Record<string, string> = {};
    let mutated = false;
    let phase: Phase | undefined;
    let stepStart = process.hrtime.bigint();
    for (const plugin of this.plugins) {
      if (!plugin.handles(request.operation)) continue;
      if (phase !== plugin.phase) {
        if (phase) this.metrics?.observeStep(phase, request.operation, false, seconds(stepStart));
        phase = plugin.phase;
        stepStart = process.hrtime.bigint();
      }
      const start = process.hrtime.bigint();
      try {
        const answer = await plugin.admit(request);
        this.metrics?.observePlugin(plugin.name, plugin.phase, request.operation, false, seconds(start));
        if (answer?.object && plugin.phase === 'mutating') {
          request.object = answer.object;
          mutated = true;
        }
        warnings.push(...(answer?.warnings ?? []));
        Object.assign(auditAnnotations, answer?.auditAnnotations ?? {});
      } catch (err) {
        this.metrics?.observePlugin(plugin.name, plugin.phase, request.operation, true, seconds(start));
        this.metrics?.observeStep(plugin.phase, request.operation, true, seconds(stepStart));
        const refusal = err instanceof AdmissionError ? err : pluginFailure(plugin.name, err);
        const { code, reason, message, causes } = refusal;
        // A refusal may carry what the plugin had to say before it refused.
        warnings.push(...refusal.warnings);
        Object.assign(auditAnnotations, refusal.auditAnnotations);
        return { allowed: false, code, reason, message, causes, warnings, auditAnnotations };
      }
    }
    if (phase) this.metrics?.observeStep(phase, request.operation, false, seconds(stepStart));
    return { allowed: true, object: mutated ? request.object : undefined, warnings, auditAnnotations };
  }
}
