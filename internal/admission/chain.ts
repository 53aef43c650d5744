// The admission chain: every mutating plugin that handles the operation, in
// order, each seeing the object as the previous left it; then every validating
// plugin on the final object. When a webhook or policy changed the object, the
// mutating plugins run once more (reinvocation.ts says which webhooks and
// policies among them). The first refusal ends the chain. Dry-run writes go
// through the same chain.
import type { Registry } from 'prom-client';
import { AdmissionError, type AdmissionPlugin, type AdmissionRequest, type Cause, type JsonObject, type Phase } from './types.js';
import { pluginFailure } from './errors.js';
import { ChainMetrics } from './metrics.js';
import { RequestReinvocation } from './reinvocation.js';

export type AdmissionOutcome =
  | { allowed: true; object?: JsonObject; warnings: string[]; auditAnnotations: Record<string, string> }
  | { allowed: false; code: number; reason: string; message: string; causes: Cause[]; warnings: string[]; auditAnnotations: Record<string, string> };

/** Seconds since `start` (performance.now()): a float, where hrtime.bigint() allocates a BigInt per reading. */
const seconds = (start: number): number => (performance.now() - start) / 1000;

/** One request on its way through the chain. */
interface Run {
  request: AdmissionRequest;
  reinvocation: RequestReinvocation;
  warnings: string[];
  auditAnnotations: Record<string, string>;
  mutated: boolean;
}

export class AdmissionChain {
  readonly plugins: AdmissionPlugin[];
  private readonly mutating: AdmissionPlugin[];
  private readonly validating: AdmissionPlugin[];
  private readonly metrics?: ChainMetrics;

  /** registry: where the step and controller latency histograms are kept (none: not measured). */
  constructor(plugins: AdmissionPlugin[], registry?: Registry) {
    this.mutating = plugins.filter((p) => p.phase === 'mutating');
    this.validating = plugins.filter((p) => p.phase === 'validating');
    this.plugins = [...this.mutating, ...this.validating];
    if (registry) this.metrics = new ChainMetrics(registry);
  }

  async admit(original: AdmissionRequest): Promise<AdmissionOutcome> {
    const run: Run = { request: { ...original }, reinvocation: new RequestReinvocation(), warnings: [], auditAnnotations: {}, mutated: false };
    const { warnings, auditAnnotations } = run;
    try {
      // One step observation covers both passes, as the platform measures the phase.
      await this.step('mutating', run, async () => {
        await this.pass(this.mutating, run);
        if (run.reinvocation.startSecondPass()) await this.pass(this.mutating, run);
      });
      await this.step('validating', run, () => this.pass(this.validating, run));
    } catch (err) {
      const { code, reason, message, causes } = err as AdmissionError;
      return { allowed: false, code, reason, message, causes, warnings, auditAnnotations };
    }
    return { allowed: true, object: run.mutated ? run.request.object : undefined, warnings, auditAnnotations };
  }

  /** Runs a phase, observed when any of its plugins handles the operation. */
  private async step(phase: Phase, run: Run, body: () => Promise<void>): Promise<void> {
    const { operation } = run.request;
    const observed = (phase === 'mutating' ? this.mutating : this.validating).some((p) => p.handles(operation));
    const start = performance.now();
    try {
      await body();
    } catch (err) {
      if (observed) this.metrics?.observeStep(phase, operation, true, seconds(start));
      throw err;
    }
    if (observed) this.metrics?.observeStep(phase, operation, false, seconds(start));
  }

  /** Runs each plugin that handles the operation; a refusal throws an AdmissionError carrying what was gathered. */
  private async pass(plugins: AdmissionPlugin[], run: Run): Promise<void> {
    const { request, reinvocation } = run;
    for (const plugin of plugins) {
      if (!plugin.handles(request.operation)) continue;
      const start = performance.now();
      const mutating = plugin.phase === 'mutating';
      if (mutating) reinvocation.entering(plugin.name, request.object);
      try {
        const answer = await plugin.admit(request, reinvocation);
        this.metrics?.observePlugin(plugin.name, plugin.phase, request.operation, false, seconds(start));
        if (answer?.object && mutating) {
          request.object = answer.object;
          run.mutated = true;
        }
        run.warnings.push(...(answer?.warnings ?? []));
        Object.assign(run.auditAnnotations, answer?.auditAnnotations ?? {});
      } catch (err) {
        this.metrics?.observePlugin(plugin.name, plugin.phase, request.operation, true, seconds(start));
        const refusal = err instanceof AdmissionError ? err : pluginFailure(plugin.name, err);
        // A refusal may carry what the plugin had to say before it refused.
        run.warnings.push(...refusal.warnings);
        Object.assign(run.auditAnnotations, refusal.auditAnnotations);
        throw refusal;
      }
      if (mutating) reinvocation.leaving(plugin.name, request.object);
    }
  }
}
