// The scheduling group (v1) PriorityClass and the node group (v1) RuntimeClass.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { dns1123Label, forbidden, invalid, labelMap, oneOf, required, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { parseQuantity } from '../quantity.js';
import { asObj, setDefault } from '../values.js';
import { systemClassProblem } from '../../admission/plugins/priority-classes.js';

const MAX_USER_PRIORITY = 1_000_000_000;
const SYSTEM_PREFIX = 'system-';
const PREEMPTION_POLICIES = ['Never', 'PreemptLowerPriority'];

function validatePriorityClass(obj: ApiObject, old?: ApiObject): Causes {
  const causes = oneOf('preemptionPolicy', obj.preemptionPolicy, PREEMPTION_POLICIES, true);
  const name = obj.metadata?.name ?? '';
  if (typeof obj.value === 'number' && obj.value > MAX_USER_PRIORITY && !name.startsWith(SYSTEM_PREFIX)) {
    causes.push(forbidden('value', `maximum allowed value of a user defined priority is ${MAX_USER_PRIORITY}`));
  }
  const reserved = name.startsWith(SYSTEM_PREFIX) ? systemClassProblem(name, obj.value, obj.globalDefault) : undefined;
  if (reserved) {
    causes.push(forbidden('metadata.name', `priority class names with '${SYSTEM_PREFIX}' prefix are reserved for system use only. error: ${reserved}`));
  }
  if (old) {
    if (obj.value !== old.value) causes.push(forbidden('value', 'may not be changed in an update.'));
    if (obj.preemptionPolicy !== old.preemptionPolicy) causes.push(invalid('preemptionPolicy', obj.preemptionPolicy, 'field is immutable'));
  }
  return causes;
}

const priorityclasses: KindSpec = {
  shortNames: ['pc'],
  defaults: (obj) => setDefault(obj, 'preemptionPolicy', 'PreemptLowerPriority'),
  validate: validatePriorityClass,
  tableColumns: [nameColumn,
    column('Value', 'integer', 'The value of the priority class.', (o) => o.value ?? 0),
    column('Global-Default', 'boolean', 'Whether this is the default priority class.', (o) => o.globalDefault === true),
    ageColumn,
    column('PreemptionPolicy', 'string', 'Whether pods of this class preempt others.', (o) => o.preemptionPolicy ?? '')],
};

function validateRuntimeClass(obj: ApiObject, old?: ApiObject): Causes {
  const causes = typeof obj.handler === 'string' && obj.handler ? dns1123Label('handler', obj.handler) : [required('handler')];
  for (const [name, q] of Object.entries(asObj(asObj(obj.overhead)?.podFixed) ?? {})) {
    if ((parseQuantity(q) ?? -1) < 0) causes.push(invalid(`overhead.podFixed[${name}]`, q, 'must be greater than or equal to 0'));
  }
  causes.push(...labelMap('scheduling.nodeSelector', asObj(obj.scheduling)?.nodeSelector));
  if (old && obj.handler !== old.handler) causes.push(invalid('handler', obj.handler, 'field is immutable'));
  return causes;
}

const runtimeclasses: KindSpec = {
  validate: validateRuntimeClass,
  tableColumns: [nameColumn, column('Handler', 'string', 'The underlying runtime and configuration used to handle pods.', (o) => o.handler ?? ''), ageColumn],
};

export const schedulingKinds: Record<string, KindSpec> = { priorityclasses };
export const nodeKinds: Record<string, KindSpec> = { runtimeclasses };
