// Escalation prevention: whether the rules a user holds cover the rules they
// want to grant. Requested rules are broken into single permissions (one verb,
// group, resource and name, or one path and verb) and each must be covered by
// one held rule; the missing ones are merged back per group and resource.
import { pathCovers } from './rules.js';
import { ALL, type PolicyRule } from './types.js';

const list = (v: string[] | undefined): string[] => v ?? [];
const has = (set: string[] | undefined, v: string): boolean => list(set).includes(v);
const hasAll = (set: string[] | undefined, values: string[] | undefined): boolean => list(values).every((v) => has(set, v));

/** One rule per permission it grants. */
function breakdown(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const apiGroup of list(rule.apiGroups)) {
    for (const resource of list(rule.resources)) {
      for (const verb of list(rule.verbs)) {
        const names = list(rule.resourceNames);
        if (names.length === 0) out.push({ apiGroups: [apiGroup], resources: [resource], verbs: [verb] });
        for (const name of names) out.push({ apiGroups: [apiGroup], resources: [resource], resourceNames: [name], verbs: [verb] });
      }
    }
  }
  for (const url of list(rule.nonResourceURLs)) {
    for (const verb of list(rule.verbs)) out.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return out;
}

// Held resources cover requested ones exactly, by `*`, or a sub-resource by `*/<sub>`.
function resourcesCover(held: string[] | undefined, wanted: string[] | undefined): boolean {
  if (has(held, ALL)) return true;
  return list(wanted).every((path) => {
    if (has(held, path)) return true;
    const slash = path.indexOf('/');
    return slash >= 0 && has(held, `*/${path.slice(slash + 1)}`);
  });
}

const pathsCover = (held: string[] | undefined, wanted: string[] | undefined): boolean =>
  list(wanted).every((p) => list(held).some((h) => pathCovers(h, p)));

function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const names = list(owner.resourceNames).length === 0 || (list(sub.resourceNames).length > 0 && hasAll(owner.resourceNames, sub.resourceNames));
  return (has(owner.verbs, ALL) || hasAll(owner.verbs, sub.verbs))
    && (has(owner.apiGroups, ALL) || hasAll(owner.apiGroups, sub.apiGroups))
    && resourcesCover(owner.resources, sub.resources)
    && pathsCover(owner.nonResourceURLs, sub.nonResourceURLs)
    && names;
}

/** The permissions of `wanted` that no rule of `held` covers (empty: covered). */
export function uncovered(held: PolicyRule[], wanted: PolicyRule[]): PolicyRule[] {
  return wanted.flatMap(breakdown).filter((sub) => !held.some((owner) => ruleCovers(owner, sub)));
}

/** Merges single-group, single-resource rules (at most one name, no paths) into one rule per group, resource and name. */
export function compact(rules: PolicyRule[]): PolicyRule[] {
  const simple = new Map<string, PolicyRule>();
  const out: PolicyRule[] = [];
  for (const rule of rules) {
    const isSimple = list(rule.resourceNames).length <= 1 && list(rule.nonResourceURLs).length === 0
      && list(rule.apiGroups).length === 1 && list(rule.resources).length === 1;
    if (!isSimple) { out.push(rule); continue; }
    const key = JSON.stringify([rule.apiGroups![0], rule.resources![0], list(rule.resourceNames)]);
    const existing = simple.get(key);
    if (existing) existing.verbs = [...existing.verbs, ...rule.verbs];
    else simple.set(key, structuredClone(rule));
  }
  return [...out, ...simple.values()];
}

const quoted = (values: string[]): string => `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;

/** `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`, the platform's short form of a rule. */
export function compactString(rule: PolicyRule): string {
  const parts: string[] = [];
  const add = (label: string, v: string[] | undefined) => { if (list(v).length) parts.push(`${label}:${quoted(list(v))}`); };
  add('APIGroups', rule.apiGroups);
  add('Resources', rule.resources);
  add('NonResourceURLs', rule.nonResourceURLs);
  add('ResourceNames', rule.resourceNames);
  add('Verbs', rule.verbs);
  return `{${parts.join(', ')}}`;
}

/** The refusal of a grant the user does not hold, in the platform's words. */
export function escalationMessage(username: string, groups: string[], missing: PolicyRule[], resolutionErrors: string[]): string {
  const lines = [...new Set(missing.map(compactString))].sort();
  let msg = `user ${JSON.stringify(username)} (groups=${quoted(groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  if (resolutionErrors.length) msg += `; resolution errors: [${resolutionErrors.join(' ')}]`;
  return msg;
}
