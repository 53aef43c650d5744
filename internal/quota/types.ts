// What quota admission and the quota controller share: a quota as they read it,
// scope selectors, and the evaluator of one kind's usage.
import type { ResourceList } from './quantity.js';

export type Obj = Record<string, any>;

/** One requirement of a quota's scopes: `spec.scopes` entries read as `Exists`. */
export interface ScopeSelector {
  scopeName: string;
  operator: string;
  values?: string[];
}

/** A ResourceQuota as usage is checked against it. */
export interface Quota {
  name: string;
  namespace: string;
  /** status.hard: what admission enforces (the controller copies it from spec.hard). */
  hard: ResourceList;
  used: ResourceList;
  selectors: ScopeSelector[];
}

/** Measures the usage of one kind of object. */
export interface Evaluator {
  readonly group: string;
  readonly resource: string;
  /** Whether a write of this operation (and subresource) can change usage. */
  handles(operation: string, subresource: string): boolean;
  /** The names among `names` this kind's usage can fill. */
  matchingResources(names: string[]): string[];
  /** Whether an object falls under one scope requirement; kinds without scopes match none. */
  matchesScope(selector: ScopeSelector, obj: Obj): boolean;
  /** Why the object cannot be admitted under a quota tracking `required` (`must specify ...`), or undefined. */
  constraints(required: string[], obj: Obj): string | undefined;
  usage(obj: Obj, now: number): ResourceList;
}

/** The requirements of a quota's `spec.scopes` and `spec.scopeSelector`. */
export function scopeSelectors(quota: Obj): ScopeSelector[] {
  const spec = (quota.spec ?? {}) as Obj;
  const scopes = Array.isArray(spec.scopes) ? (spec.scopes as string[]) : [];
  const expressions = Array.isArray(spec.scopeSelector?.matchExpressions) ? (spec.scopeSelector.matchExpressions as ScopeSelector[]) : [];
  return [...scopes.map((scopeName) => ({ scopeName, operator: 'Exists' })), ...expressions];
}

/** Whether a quota applies to an object: it tracks a resource the evaluator fills and every scope matches. */
export function quotaMatches(evaluator: Evaluator, quota: Quota, obj: Obj): boolean {
  return evaluator.matchingResources(Object.keys(quota.hard)).length > 0 && quota.selectors.every((s) => evaluator.matchesScope(s, obj));
}
