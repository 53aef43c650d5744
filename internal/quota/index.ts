// Quota usage, shared by the ResourceQuota admission plugin and the quota
// controller: which evaluator measures a kind, and a quota as both read it.
import { podEvaluator } from './pods.js';
import { serviceEvaluator } from './services.js';
import { pvcEvaluator } from './pvcs.js';
import { countedResource, objectCountEvaluator } from './objectcount.js';
import { parseList } from './quantity.js';
import { scopeSelectors, type Evaluator, type Obj, type Quota } from './types.js';

export * from './quantity.js';
export * from './types.js';
export { objectCountName, countedResource } from './objectcount.js';
export { podCounts } from './pods.js';

/** Kinds with their own evaluator; the other core kinds quota knows by a bare name too. */
const SPECIFIC: Evaluator[] = [
  podEvaluator, serviceEvaluator, pvcEvaluator,
  ...['configmaps', 'secrets', 'replicationcontrollers', 'resourcequotas'].map((r) => objectCountEvaluator('', r, r)),
];
/** Kinds quota never charges. */
const IGNORED = new Set(['/events']);

const key = (group: string, resource: string) => `${group}/${resource}`;
const generic = new Map<string, Evaluator>();

/** The evaluator of a kind: its own, or an object count; undefined for a kind quota ignores. */
export function evaluatorFor(group: string, resource: string): Evaluator | undefined {
  const k = key(group, resource);
  if (IGNORED.has(k)) return undefined;
  const specific = SPECIFIC.find((e) => e.group === group && e.resource === resource);
  if (specific) return specific;
  let e = generic.get(k);
  if (!e) generic.set(k, e = objectCountEvaluator(group, resource));
  return e;
}

/** The evaluators a quota's hard names need: the specific ones that fill any, and an object count per other `count/` name. */
export function evaluatorsForNames(names: string[]): Evaluator[] {
  const out = SPECIFIC.filter((e) => e.matchingResources(names).length > 0);
  for (const name of names) {
    const counted = countedResource(name);
    if (!counted || out.some((e) => e.group === counted.group && e.resource === counted.resource)) continue;
    const e = evaluatorFor(counted.group, counted.resource);
    if (e) out.push(e);
  }
  return out;
}

/** A stored ResourceQuota as quota reads it. */
export function quotaOf(obj: Obj): Quota {
  return {
    name: String(obj.metadata?.name ?? ''),
    namespace: String(obj.metadata?.namespace ?? ''),
    hard: parseList(obj.status?.hard),
    used: parseList(obj.status?.used),
    selectors: scopeSelectors(obj),
  };
}
