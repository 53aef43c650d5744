// The coordination group (v1): Lease.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { invalid, oneOf, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { specOf } from '../values.js';


function validateLease(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = [];
  for (const f of ['leaseDurationSeconds', 'leaseTransitions']) {
    const v = spec[f];
    const min = f === 'leaseDurationSeconds' ? 1 : 0;
    if (typeof v === 'number' && v < min) causes.push(invalid(`spec.${f}`, v, min ? 'must be greater than 0' : 'must be greater than or equal to 0'));
  }
  causes.push(...oneOf('spec.strategy', spec.strategy, ['OldestEmulationVersion']));
  if (spec.preferredHolder !== undefined && spec.strategy === undefined) causes.push(invalid('spec.strategy', spec.strategy, 'must be specified when preferredHolder is set'));
  return causes;
}

const leases: KindSpec = {
  tracksGeneration: false,
  validate: validateLease,
  tableColumns: [nameColumn, column('Holder', 'string', 'The holder of the lease.', (o) => specOf(o).holderIdentity ?? ''), ageColumn],
};

export const coordinationKinds: Record<string, KindSpec> = { leases };
