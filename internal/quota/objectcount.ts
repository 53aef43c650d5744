// The usage every namespaced kind has: one object of its kind (`count/<resource>.<group>`,
// and the old bare names for a few core kinds), charged on create.
import { count, type ResourceList } from './quantity.js';
import type { Evaluator } from './types.js';

/** `count/<resource>` for the core group, `count/<resource>.<group>` otherwise. */
export const objectCountName = (group: string, resource: string): string => `count/${resource}${group ? `.${group}` : ''}`;

/** The kind a `count/...` name counts; undefined for other names. */
export function countedResource(name: string): { group: string; resource: string } | undefined {
  if (!name.startsWith('count/')) return undefined;
  const rest = name.slice('count/'.length);
  const dot = rest.indexOf('.');
  return dot < 0 ? { group: '', resource: rest } : { group: rest.slice(dot + 1), resource: rest.slice(0, dot) };
}

/** Counts objects of one kind; `alias` is the kind's bare quota name (`configmaps`), when it has one. */
export function objectCountEvaluator(group: string, resource: string, alias?: string): Evaluator {
  const names = [objectCountName(group, resource), ...(alias ? [alias] : [])];
  return {
    group,
    resource,
    handles: (operation, subresource) => operation === 'CREATE' && subresource === '',
    matchingResources: (input) => input.filter((n) => names.includes(n)),
    matchesScope: () => false,
    constraints: () => undefined,
    usage: (): ResourceList => Object.fromEntries(names.map((n) => [n, count(1)])),
  };
}
