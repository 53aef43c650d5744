// The admission chain: every mutating plugin that handles the operation, in
// order, each seeing the object as the previous left it; then every validating
// plugin on the final object. The first refusal ends the chain. Dry-run writes
// go through the same chain.
import { AdmissionError, type AdmissionPlugin, type AdmissionRequest, type Cause, type JsonObject } from './types.js';
import { pluginFailure } from './errors.js';

export type AdmissionOutcome =
  | { allowed: true; object?: JsonObject; warnings: string[]; auditAnnotations: Record<string, string> }
  | { allowed: false; code: number; reason: string; message: string; causes: Cause[]; warnings: string[]; auditAnnotations: Record<string, string> };

export class AdmissionChain {
  readonly plugins: AdmissionPlugin[];

  constructor(plugins: AdmissionPlugin[]) {
    this.plugins = [...plugins.filter((p) => p.phase === 'mutating'), ...plugins.filter((p) => p.phase === 'validating')];
  }

  async admit(original: AdmissionRequest): Promise<AdmissionOutcome> {
    const request = { ...original };
    const warnings: string[] = [];
    const auditAnnotations: Record<string, string> = {};
    let mutated = false;
    for (const plugin of this.plugins) {
      if (!plugin.handles(request.operation)) continue;
      try {
        const answer = await plugin.admit(request);
        if (answer?.object && plugin.phase === 'mutating') {
          request.object = answer.object;
          mutated = true;
        }
        warnings.push(...(answer?.warnings ?? []));
        Object.assign(auditAnnotations, answer?.auditAnnotations ?? {});
      } catch (err) {
        const refusal = err instanceof AdmissionError ? err : pluginFailure(plugin.name, err);
        const { code, reason, message, causes } = refusal;
        return { allowed: false, code, reason, message, causes, warnings, auditAnnotations };
      }
    }
    return { allowed: true, object: mutated ? request.object : undefined, warnings, auditAnnotations };
  }
}
