// Validation of LabelSelector fields and of selectors against the labels they must match.
import { asList, asObj, objects, selectorMatches, type Obj } from './values.js';
import { invalid, labelMap, qualifiedName, required, forbidden, type Causes } from './causes.js';

/** A LabelSelector: label-valid matchLabels, well-formed matchExpressions. */
export function labelSelector(field: string, selector: unknown): Causes {
  const sel = asObj(selector);
  if (!sel) return [];
  const causes = labelMap(`${field}.matchLabels`, sel.matchLabels);
  objects(sel.matchExpressions).forEach((e, i) => causes.push(...requirement(`${field}.matchExpressions[${i}]`, e)));
  return causes;
}

function requirement(field: string, e: Obj): Causes {
  const causes: Causes = [];
  const values = asList(e.values);
  if (e.operator === 'In' || e.operator === 'NotIn') {
    if (values.length === 0) causes.push(required(`${field}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
  } else if (e.operator === 'Exists' || e.operator === 'DoesNotExist') {
    if (values.length > 0) causes.push(forbidden(`${field}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  } else {
    causes.push(invalid(`${field}.operator`, e.operator, 'not a valid selector operator'));
  }
  if (typeof e.key === 'string') causes.push(...qualifiedName(`${field}.key`, e.key));
  return causes;
}

/** A workload's selector: required, not empty, valid, and matching its template labels. */
export function workloadSelector(specPath: string, spec: Obj, emptyDetail: string): Causes {
  const selector = spec.selector;
  if (!asObj(selector)) return [required(`${specPath}.selector`)];
  const causes = labelSelector(`${specPath}.selector`, selector);
  const sel = selector as Obj;
  if (Object.keys(asObj(sel.matchLabels) ?? {}).length === 0 && asList(sel.matchExpressions).length === 0) {
    causes.push(invalid(`${specPath}.selector`, selector, emptyDetail));
  }
  const labels = asObj(asObj(asObj(spec.template)?.metadata)?.labels);
  if (causes.length === 0 && !selectorMatches(selector, labels)) {
    causes.push(invalid(`${specPath}.template.metadata.labels`, labels ?? {}, '`selector` does not match template `labels`'));
  }
  return causes;
}
