// Deciding and calling the webhooks of one request: whether each is called
// (rules, selectors, match conditions), the dry-run check, the call, and what
// its answer or failure becomes under its failurePolicy: a refusal worded as the
// platform words it, or a skip that is counted and written to the audit record.
import { group } from '../../names/index.js';
import { AdmissionError, type AdmissionRequest, type JsonObject } from '../types.js';
import { internalError, notFound } from '../errors.js';
import type { NamespaceCache } from '../namespaces.js';
import type { Hook } from './hooks.js';
import { isNamespaceRequest, matchRules, namespaceSelected, objectSelected, type EquivalentResources, type Invocation } from './match.js';
import { reviewRequest, reviewVersion, type ReviewAnswer } from './review.js';
import { CallFailure, callWebhook } from './call.js';
import type { WebhookMetrics } from './metrics.js';
import type { ServiceEndpoints } from './services.js';

export interface DispatchDeps {
  namespaces: NamespaceCache;
  equivalents: EquivalentResources;
  services: ServiceEndpoints;
  metrics?: WebhookMetrics;
}

/** What a called webhook answered, with the version it saw the object in. */
export interface Called {
  answer: ReviewAnswer;
  invocation: Invocation;
  /** The object as the webhook was sent it. */
  object?: JsonObject;
}

const SIDE_EFFECT_FREE = new Set(['None', 'NoneOnDryRun']);
const WEBHOOK_ANNOTATIONS = group('webhook.admission');

const labelsOf = (obj: JsonObject | undefined) => (obj?.metadata as { labels?: Record<string, string> } | undefined)?.labels;

/** The audit annotation of a webhook skipped under failurePolicy Ignore. */
export const failedOpenKey = (mutating: boolean, round: number, index: number): string =>
  `failed-open.${mutating ? 'mutation' : 'validating'}.${WEBHOOK_ANNOTATIONS}/round_${round}_index_${index}`;

/** The audit annotation recording a mutating webhook's call. */
export const mutationKey = (round: number, index: number): string => `mutation.${WEBHOOK_ANNOTATIONS}/round_${round}_index_${index}`;

async function namespaceLabels(req: AdmissionRequest, namespaces: NamespaceCache): Promise<Record<string, string> | undefined> {
  if (isNamespaceRequest(req)) return labelsOf(req.object ?? req.oldObject);
  const state = await namespaces.get(req.namespace);
  if (!state) throw notFound({ group: '', resource: 'namespaces' }, req.namespace);
  return labelsOf(state.namespace);
}

/** The version the webhook is called with, or undefined when its rules or selectors leave the request out. */
async function invocationOf(hook: Hook, req: AdmissionRequest, deps: DispatchDeps): Promise<Invocation | undefined> {
  const invocation = matchRules(hook, req, deps.equivalents);
  if (!invocation || !objectSelected(hook, req)) return undefined;
  if (hook.namespaceSelector && (req.namespace || isNamespaceRequest(req))) {
    if (!namespaceSelected(hook, await namespaceLabels(req, deps.namespaces))) return undefined;
  }
  return invocation;
}

/** Match conditions: any false skips the webhook; otherwise an error fails the call. */
function conditionsAllow(hook: Hook, activation: Record<string, unknown>): boolean {
  let failure: string | undefined;
  for (const condition of hook.conditions) {
    if (condition.error) { failure ??= `${condition.name}: ${condition.error}`; continue; }
    try {
      const { value } = condition.program!.evaluate(activation);
      if (value === false) return false;
      if (value !== true) failure ??= `${condition.name}: expression must evaluate to a bool`;
    } catch (err) {
      failure ??= `${condition.name}: ${(err as Error).message}`;
    }
  }
  if (failure) throw new CallFailure(hook, `failed to evaluate match condition ${failure}`, 500);
  return true;
}

/** The refusal of a webhook that answered `allowed: false`. */
function denial(hook: Hook, status: ReviewAnswer['status']): AdmissionError {
  const given = typeof status?.code === 'number' && status.code !== 0 ? status.code : 403;
  const code = given < 400 ? 400 : given;
  const detail = status?.message || status?.reason;
  const by = `admission webhook "${hook.name}" denied the request`;
  return new AdmissionError(code, status?.reason ?? (code === 403 ? 'Forbidden' : ''), detail ? `${by}: ${detail}` : `${by} without explanation`);
}

const since = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

/**
 * Calls one webhook for the request when it applies: answers what it said, undefined when it was skipped
 * (not matched, or failed under Ignore: `failedOpen` is then called). A refusal or a failure under Fail throws.
 */
export async function dispatch(hook: Hook, req: AdmissionRequest, deps: DispatchDeps, failedOpen: () => void): Promise<Called | undefined> {
  const invocation = await invocationOf(hook, req, deps);
  if (!invocation) return undefined;
  const object = req.object && invocation.convert ? await invocation.convert.to(req.object) : req.object;
  const oldObject = req.oldObject && invocation.convert ? await invocation.convert.to(req.oldObject) : req.oldObject;
  const request = reviewRequest(req, invocation, object, oldObject);
  const start = process.hrtime.bigint();
  const { metrics } = deps;
  try {
    if (!conditionsAllow(hook, { object: object ?? null, oldObject: oldObject ?? null, request })) return undefined;
    if (req.dryRun && !SIDE_EFFECT_FREE.has(hook.sideEffects)) {
      throw new AdmissionError(400, 'BadRequest', `admission webhook "${hook.name}" does not support dry run`);
    }
    const version = reviewVersion(hook.reviewVersions);
    if (!version) throw new CallFailure(hook, `webhook does not accept known AdmissionReview versions`, 500);
    const answer = await callWebhook(hook, version, request, deps.services);
    if (!answer.allowed) {
      const refusal = denial(hook, answer.status);
      metrics?.rejection(hook.name, hook.mutating, req.operation, 'no_error', refusal.code);
      metrics?.call(hook.name, hook.mutating, req.operation, true, refusal.code, since(start));
      refusal.warnings.push(...answer.warnings);
      throw refusal;
    }
    metrics?.call(hook.name, hook.mutating, req.operation, false, 200, since(start));
    return { answer, invocation, object };
  } catch (err) {
    if (!(err instanceof CallFailure)) throw err;
    const ignore = hook.failurePolicy === 'Ignore';
    if (!ignore) metrics?.rejection(hook.name, hook.mutating, req.operation, 'calling_webhook_error', err.code);
    metrics?.call(hook.name, hook.mutating, req.operation, !ignore, err.code, since(start));
    if (!ignore) throw internalError(err.message);
    metrics?.failedOpen(hook.name, hook.mutating);
    failedOpen();
    return undefined;
  }
}

/** A webhook's own audit annotations, each key prefixed with the webhook's name. */
export function auditAnnotationsOf(hook: Hook, answer: ReviewAnswer): Record<string, string> {
  return Object.fromEntries(Object.entries(answer.auditAnnotations).map(([k, v]) => [`${hook.name}/${k}`, v]));
}
