// The selectors of list, watch and deletecollection requests as requirements,
// for the authorizers that understand them (Node, Webhook): a selector that
// does not parse counts as none, as upstream's attributes do.
import { parseFieldSelector, parseLabelRequirements, type LabelRequirement } from '../apimachinery/selectors.js';
import type { Attributes } from './types.js';

/** A requirement as a v1 SubjectAccessReview carries it. */
export interface SelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

const SELECTOR_VERBS = new Set(['list', 'watch', 'deletecollection']);

const selectorOf = (attributes: Attributes, which: 'fieldSelector' | 'labelSelector'): string =>
  (attributes.resource && SELECTOR_VERBS.has(attributes.resource.verb) ? attributes.resource[which] : '');

/** The field selector's requirements; undefined when there is none or it does not parse. */
export function fieldRequirements(attributes: Attributes): SelectorRequirement[] | undefined {
  const raw = selectorOf(attributes, 'fieldSelector');
  if (!raw) return undefined;
  try {
    return parseFieldSelector(raw).map((r) => ({ key: r.field, operator: r.op === '=' ? 'In' : 'NotIn', values: [r.value] }));
  } catch {
    return undefined;
  }
}

const LABEL_OPERATORS: Record<LabelRequirement['op'], SelectorRequirement['operator'] | undefined> = {
  '=': 'In', in: 'In', '!=': 'NotIn', notin: 'NotIn', exists: 'Exists', '!exists': 'DoesNotExist', gt: undefined, lt: undefined,
};

/** The label selector's requirements (gt and lt have no SubjectAccessReview form and are left out). */
export function labelRequirements(attributes: Attributes): SelectorRequirement[] | undefined {
  const raw = selectorOf(attributes, 'labelSelector');
  if (!raw) return undefined;
  try {
    return parseLabelRequirements(raw).flatMap((r): SelectorRequirement[] => {
      const operator = LABEL_OPERATORS[r.op];
      if (!operator) return [];
      return [{ key: r.key, operator, ...('values' in r ? { values: [...r.values] } : {}) }];
    });
  } catch {
    return undefined;
  }
}
