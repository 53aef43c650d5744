// policy/v1: PodDisruptionBudget.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, count, nameColumn } from '../columns.js';
import { intOrPercent, invalid, oneOf, scaledValue, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { labelSelector } from '../selectors.js';
import { asObj, specOf } from '../values.js';


function budgetValue(field: string, value: unknown): Causes {
  const causes = intOrPercent(field, value);
  if (typeof value === 'string' && causes.length === 0 && scaledValue(value, 100) > 100) causes.push(invalid(field, value, 'must not be greater than 100%'));
  return causes;
}

function validatePodDisruptionBudget(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = [];
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) causes.push(invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  causes.push(...budgetValue('spec.minAvailable', spec.minAvailable), ...budgetValue('spec.maxUnavailable', spec.maxUnavailable));
  causes.push(...labelSelector('spec.selector', spec.selector));
  causes.push(...oneOf('spec.unhealthyPodEvictionPolicy', spec.unhealthyPodEvictionPolicy, ['AlwaysAllow', 'IfHealthyBudget']));
  return causes;
}

const poddisruptionbudgets: KindSpec = {
  shortNames: ['pdb'],
  validate: validatePodDisruptionBudget,
  validateStatus: (obj) => ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods']
    .flatMap((f) => (count(asObj(obj.status)?.[f]) < 0 ? [invalid(`status.${f}`, asObj(obj.status)?.[f], 'must be greater than or equal to 0')] : [])),
  tableColumns: [nameColumn,
    column('Min Available', 'string', 'The minimum number of pods that must be available.', (o) => String(specOf(o).minAvailable ?? 'N/A')),
    column('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.', (o) => String(specOf(o).maxUnavailable ?? 'N/A')),
    column('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.', (o) => count(asObj(o.status)?.disruptionsAllowed)),
    ageColumn],
};

export const policyKinds: Record<string, KindSpec> = { poddisruptionbudgets };
