// One write checked against the quotas of its namespace: the quotas that apply,
// the usage the write adds (on update, what it adds to the old object's), and the
// refusals worded as the platform words them. Answers the quotas as they would
// be with the write charged; changes nothing itself.
import {
  add, lessThanOrEqual, mask, negatives, prettyPrint, quotaMatches, removeZeros, subtract,
  type Evaluator, type Obj, type Quota, type ResourceList, type ScopeSelector,
} from '../../quota/index.js';
import { forbidden } from '../errors.js';
import type { AdmissionRequest } from '../types.js';

/** An entry of the plugin configuration's `limitedResources`: consuming these needs a quota that covers them. */
export interface LimitedResource {
  apiGroup?: string;
  resource: string;
  matchContains?: string[];
  matchScopes?: ScopeSelector[];
}

const refuse = (request: AdmissionRequest, detail: string) => forbidden(request.resource, request.name, detail);

/** The names of consumed resources a `limitedResources` entry for this kind lists. */
function limitedNames(usage: ResourceList, limited: LimitedResource[]): string[] {
  const out = new Set<string>();
  for (const l of limited) {
    for (const [name, q] of Object.entries(usage)) {
      if (q.nanos > 0n && (l.matchContains ?? []).some((m) => name.includes(m))) out.add(name);
    }
  }
  return [...out].sort();
}

const scopeText = (s: ScopeSelector) => `{${s.scopeName} ${s.operator} [${(s.values ?? []).join(' ')}]}`;

/** The quotas with the write charged; throws the refusal. `now` decides whether a pod still counts. */
export function checkRequest(quotas: Quota[], request: AdmissionRequest, evaluator: Evaluator, limited: LimitedResource[], now: number): Quota[] {
  const object = { ...(request.object ?? {}) } as Obj;
  object.metadata = { ...(object.metadata ?? {}), namespace: object.metadata?.namespace || request.namespace };
  const forKind = limited.filter((l) => (l.apiGroup ?? '') === evaluator.group && l.resource === evaluator.resource);
  const limitedScopes = limited.flatMap((l) => (l.matchScopes ?? []).filter((s) => evaluator.matchesScope(s, object)));
  const mustCover = forKind.length ? limitedNames(evaluator.usage(object, now), forKind) : [];

  const applying: number[] = [];
  const covered = new Set<string>();
  const coveredScopes = new Set<string>();
  quotas.forEach((quota, i) => {
    for (const s of quota.selectors) if (evaluator.matchesScope(s, object)) coveredScopes.add(s.scopeName);
    if (!quotaMatches(evaluator, quota, object)) return;
    const tracked = evaluator.matchingResources(Object.keys(quota.hard));
    const why = evaluator.constraints(tracked, object);
    if (why) throw refuse(request, `failed quota: ${quota.name}: ${why}`);
    if (tracked.some((n) => !quota.used[n])) throw refuse(request, `status unknown for quota: ${quota.name}, resources: ${[...tracked].sort().join(',')}`);
    applying.push(i);
    for (const n of tracked) covered.add(n);
  });

  const usage = evaluator.usage(object, now);
  const negative = negatives(usage);
  if (negative.length) throw refuse(request, `quota usage is negative for resource(s): ${negative.join(',')}`);

  // On update only the growth is charged, and only to quotas the old object fell under too.
  const deltas = new Map<number, ResourceList>(applying.map((i) => [i, usage]));
  let unmatchedDelta: ResourceList = request.operation === 'CREATE' ? usage : {};
  if (request.operation === 'UPDATE') {
    const old = request.oldObject;
    if (!old) throw refuse(request, 'unable to get previous usage since prior version of object was not found');
    if (old.metadata && (old.metadata as Obj).resourceVersion) {
      const growth = subtract(usage, evaluator.usage(old, now), true);
      unmatchedDelta = growth;
      for (const i of applying) if (quotaMatches(evaluator, quotas[i], old)) deltas.set(i, growth);
    } else {
      unmatchedDelta = usage;
    }
  }
  for (const [i, delta] of deltas) {
    const nonZero = removeZeros(delta);
    if (Object.keys(nonZero).length) deltas.set(i, nonZero);
    else deltas.delete(i);
  }
  if (applying.length ? deltas.size === 0 : Object.keys(removeZeros(unmatchedDelta)).length === 0) return quotas;

  const uncovered = mustCover.filter((n) => !covered.has(n));
  if (uncovered.length) throw refuse(request, `insufficient quota to consume: ${uncovered.join(',')}`);
  const uncoveredScopes = limitedScopes.filter((s) => !coveredScopes.has(s.scopeName));
  if (uncoveredScopes.length) throw refuse(request, `insufficient quota to match these scopes: [${uncoveredScopes.map(scopeText).join(' ')}]`);

  const out = [...quotas];
  for (const [i, delta] of deltas) {
    const quota = quotas[i];
    const requested = mask(delta, Object.keys(quota.hard));
    const used = add(quota.used, requested);
    const exceeded = lessThanOrEqual(mask(used, Object.keys(requested)), quota.hard);
    if (exceeded.length) {
      throw refuse(request, `exceeded quota: ${quota.name}, requested: ${prettyPrint(mask(requested, exceeded))}, `
        + `used: ${prettyPrint(mask(quota.used, exceeded))}, limited: ${prettyPrint(mask(quota.hard, exceeded))}`);
    }
    out[i] = { ...quota, used };
  }
  return out;
}
