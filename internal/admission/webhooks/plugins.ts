// The two webhook plugins. Mutating webhooks run one after the other in
// dispatch order, each seeing the object as the previous left it, their JSON
// patches applied; in the chain's second pass only those reinvocation.ts marks
// run again. Validating webhooks run all at once on the final object; the
// first refusal in dispatch order wins.
import { applyJsonPatch } from '../../patch/index.js';
import { deepEqual } from '../../registry/values.js';
import { AdmissionError, type AdmissionPlugin, type AdmissionRequest, type JsonObject, type PluginAnswer, type Reinvocation } from '../types.js';
import { forbidden, internalError } from '../errors.js';
import { RequestReinvocation } from '../reinvocation.js';
import { auditAnnotationsOf, dispatch, failedOpenKey, mutationKey, type Called, type DispatchDeps } from './dispatch.js';
import type { Hook } from './hooks.js';

export const MUTATING_ADMISSION_WEBHOOK = 'MutatingAdmissionWebhook';
export const VALIDATING_ADMISSION_WEBHOOK = 'ValidatingAdmissionWebhook';

/** The webhooks of one kind of configuration, in dispatch order, once listed. */
export interface HookSource {
  waitForSync(timeoutMs: number): Promise<boolean>;
  hooks(): Hook[];
}

/** How long a request waits for the configurations to be listed once, at start. */
const SYNC_TIMEOUT_MS = 10_000;

async function synced(configurations: HookSource, req: AdmissionRequest): Promise<void> {
  if (await configurations.waitForSync(SYNC_TIMEOUT_MS)) return;
  throw forbidden({ group: req.resource.group, resource: req.resource.resource }, req.name, 'not yet ready to handle request');
}

/** Adds what was gathered so far to a refusal, so the client and the audit record still get it. */
function withGathered(err: unknown, warnings: string[], annotations: Record<string, string>): unknown {
  if (err instanceof AdmissionError) {
    err.warnings.unshift(...warnings);
    err.auditAnnotations = { ...annotations, ...err.auditAnnotations };
  }
  return err;
}

/** A webhook's name in a request's reinvocation state (names are unique within a configuration). */
const hookKey = (hook: Hook): string => `${hook.configuration}/${hook.name}`;

function patched(hook: Hook, object: JsonObject, patch: unknown[]): JsonObject {
  try {
    return applyJsonPatch(object, patch);
  } catch (err) {
    throw internalError(`admission webhook "${hook.name}" returned a patch that does not apply: ${(err as Error).message}`);
  }
}

export class MutatingWebhooks implements AdmissionPlugin {
  readonly name = MUTATING_ADMISSION_WEBHOOK;
  readonly phase = 'mutating' as const;

  /** stop: ends what the plugins share (either plugin's stop ends it). */
  constructor(private readonly configurations: HookSource, private readonly deps: DispatchDeps, readonly stop: () => void) {}

  handles(): boolean {
    return true;
  }

  async admit(original: AdmissionRequest, reinvocation: Reinvocation = new RequestReinvocation()): Promise<PluginAnswer> {
    await synced(this.configurations, original);
    const hooks = this.configurations.hooks();
    const warnings: string[] = [];
    const auditAnnotations: Record<string, string> = {};
    const req = { ...original };
    const tracker = reinvocation.tracker(this.name);
    const round = reinvocation.reinvoking ? 1 : 0;
    let changed = false;
    /** Applies what a called webhook answered; answers whether it changed the object. */
    const take = async (hook: Hook, index: number, { answer, invocation, object }: Called): Promise<boolean> => {
      warnings.push(...answer.warnings);
      Object.assign(auditAnnotations, auditAnnotationsOf(hook, answer));
      const next = answer.patch?.length && object ? patched(hook, object, answer.patch) : undefined;
      // A patch that leaves the object as it was is no change (and calls for no reinvocation).
      const mutated = next !== undefined && !deepEqual(next, object);
      if (mutated) req.object = invocation.convert ? await invocation.convert.back(next) : next;
      auditAnnotations[mutationKey(round, index)] = JSON.stringify({ configuration: hook.configuration, webhook: hook.name, mutated });
      return mutated;
    };
    const run = async (hook: Hook, index: number) => {
      let failedOpen = false;
      const called = await dispatch(hook, req, this.deps, () => {
        failedOpen = true;
        auditAnnotations[failedOpenKey(true, round, index)] = hook.name;
      });
      const mutated = called ? await take(hook, index, called) : false;
      changed ||= mutated;
      // A webhook skipped under Ignore counts as called; one its rules or conditions left out does not.
      if (called || failedOpen) tracker.ran(hookKey(hook), mutated, hook.reinvocation === 'IfNeeded');
    };
    try {
      for (const [index, hook] of hooks.entries()) {
        if (tracker.shouldRun(hookKey(hook))) await run(hook, index);
      }
    } catch (err) {
      throw withGathered(err, warnings, auditAnnotations);
    }
    return { ...(changed ? { object: req.object } : {}), warnings, auditAnnotations };
  }
}

export class ValidatingWebhooks implements AdmissionPlugin {
  readonly name = VALIDATING_ADMISSION_WEBHOOK;
  readonly phase = 'validating' as const;

  /** stop: ends what the plugins share (either plugin's stop ends it). */
  constructor(private readonly configurations: HookSource, private readonly deps: DispatchDeps, readonly stop: () => void) {}

  handles(): boolean {
    return true;
  }

  async admit(req: AdmissionRequest): Promise<PluginAnswer> {
    await synced(this.configurations, req);
    const hooks = this.configurations.hooks();
    const auditAnnotations: Record<string, string> = {};
    const outcomes = await Promise.allSettled(hooks.map((hook, index) =>
      dispatch(hook, req, this.deps, () => { auditAnnotations[failedOpenKey(false, 0, index)] = hook.name; })));
    const warnings: string[] = [];
    let refusal: unknown;
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'rejected') {
        refusal ??= outcome.reason;
        if (outcome.reason instanceof AdmissionError) warnings.push(...outcome.reason.warnings.splice(0));
        return;
      }
      if (!outcome.value) return;
      warnings.push(...outcome.value.answer.warnings);
      Object.assign(auditAnnotations, auditAnnotationsOf(hooks[i], outcome.value.answer));
    });
    if (refusal) throw withGathered(refusal, warnings, auditAnnotations);
    return { warnings, auditAnnotations };
  }
}
