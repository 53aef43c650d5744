// The resource group (v1): DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { dns1123Label, dns1123Subdomain, invalid, nonNegative, required, unchanged, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { asList, asObj, objects, specOf } from '../values.js';

const NODE_CHOICES = ['nodeName', 'nodeSelector', 'allNodes', 'perDeviceNodeSelection'];

function requestCauses(field: string, devices: unknown): Causes {
  const causes: Causes = [];
  const names = new Set<unknown>();
  objects(asObj(devices)?.requests).forEach((r, i) => {
    const at = `${field}.requests[${i}]`;
    if (typeof r.name !== 'string' || !r.name) causes.push(required(`${at}.name`));
    else causes.push(...dns1123Label(`${at}.name`, r.name));
    if (names.has(r.name)) causes.push({ reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(r.name)}`, field: `${at}.name` });
    names.add(r.name);
    const exactly = asObj(r.exactly);
    if (exactly === undefined && asList(r.firstAvailable).length === 0) causes.push(required(at, 'exactly one of `exactly` or `firstAvailable` is required'));
    if (exactly && typeof exactly.deviceClassName === 'string') causes.push(...dns1123Subdomain(`${at}.exactly.deviceClassName`, exactly.deviceClassName));
  });
  return causes;
}

const resourceclaims: KindSpec = {
  validate: (obj, old) => [...requestCauses('spec.devices', specOf(obj).devices), ...(old ? unchanged('spec', obj.spec, old.spec) : [])],
  tableColumns: [nameColumn,
    column('State', 'string', 'Whether the claim is allocated and reserved.', (o) => {
      const status = asObj(o.status) ?? {};
      const states = [status.allocation ? 'allocated' : 'pending', ...(asList(status.reservedFor).length ? ['reserved'] : [])];
      return states.join(',');
    }),
    ageColumn],
};

const resourceclaimtemplates: KindSpec = {
  validate: (obj) => requestCauses('spec.spec.devices', asObj(specOf(obj).spec)?.devices),
};

function validateSlice(obj: ApiObject, old?: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = typeof spec.driver === 'string' && spec.driver ? dns1123Subdomain('spec.driver', spec.driver) : [required('spec.driver')];
  const pool = asObj(spec.pool);
  if (!pool?.name) causes.push(required('spec.pool.name'));
  causes.push(...nonNegative('spec.pool.generation', pool?.generation));
  if (typeof pool?.resourceSliceCount === 'number' && pool.resourceSliceCount < 1) causes.push(invalid('spec.pool.resourceSliceCount', pool.resourceSliceCount, 'must be greater than zero'));
  const chosen = NODE_CHOICES.filter((c) => spec[c] !== undefined && spec[c] !== false && spec[c] !== '');
  if (chosen.length !== 1) causes.push(invalid('spec', chosen, 'exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required'));
  if (old) causes.push(...unchanged('spec.driver', spec.driver, specOf(old).driver), ...unchanged('spec.pool.name', pool?.name, asObj(specOf(old).pool)?.name));
  return causes;
}

const resourceslices: KindSpec = {
  validate: validateSlice,
  selectableFields: { 'spec.nodeName': (o) => String(specOf(o).nodeName ?? ''), 'spec.driver': (o) => String(specOf(o).driver ?? '') },
  tableColumns: [nameColumn,
    column('Node', 'string', 'The node of the slice.', (o) => specOf(o).nodeName ?? '<none>'),
    column('Driver', 'string', 'The driver of the slice.', (o) => specOf(o).driver ?? ''),
    column('Pool', 'string', 'The pool of the slice.', (o) => asObj(specOf(o).pool)?.name ?? ''),
    ageColumn],
};

const deviceclasses: KindSpec = {};

export const resourceKinds: Record<string, KindSpec> = { deviceclasses, resourceclaims, resourceclaimtemplates, resourceslices };
