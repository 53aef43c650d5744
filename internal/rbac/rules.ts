// Whether one rule allows one request, as RBAC reads rules: `*` for verbs,
// groups and resources, `*/sub` for a sub-resource of any resource, a trailing
// `*` on a path, and no names meaning any name.
import { ALL, type PolicyRule } from './types.js';

const has = (list: string[] | undefined, value: string): boolean => (list ?? []).includes(value);

export const verbMatches = (rule: PolicyRule, verb: string): boolean => has(rule.verbs, ALL) || has(rule.verbs, verb);

export const apiGroupMatches = (rule: PolicyRule, group: string): boolean => has(rule.apiGroups, ALL) || has(rule.apiGroups, group);

/** `combined` is `resource` or `resource/subresource`. */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  return (rule.resources ?? []).some((r) => r === ALL || r === combined
    || (subresource !== '' && r === `*/${subresource}`));
}

export const resourceNameMatches = (rule: PolicyRule, name: string): boolean =>
  (rule.resourceNames ?? []).length === 0 || has(rule.resourceNames, name);

/** A rule path covers `path` when equal, `*`, or a `prefix*` that `path` starts with. */
export function pathCovers(rulePath: string, path: string): boolean {
  if (rulePath === ALL || rulePath === path) return true;
  return rulePath.endsWith('*') && path.startsWith(rulePath.replace(/\*+$/, ''));
}

export const nonResourceURLMatches = (rule: PolicyRule, path: string): boolean =>
  (rule.nonResourceURLs ?? []).some((u) => pathCovers(u, path));

export interface ResourceRequest {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  name: string;
}

export type RuleRequest = { resource: ResourceRequest } | { nonResource: { verb: string; path: string } };

export function ruleAllows(rule: PolicyRule, request: RuleRequest): boolean {
  if ('nonResource' in request) return verbMatches(rule, request.nonResource.verb) && nonResourceURLMatches(rule, request.nonResource.path);
  const r = request.resource;
  const combined = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  return verbMatches(rule, r.verb) && apiGroupMatches(rule, r.group)
    && resourceMatches(rule, combined, r.subresource) && resourceNameMatches(rule, r.name);
}
