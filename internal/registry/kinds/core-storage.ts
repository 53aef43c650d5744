// Persistent volumes and claims.
import { nowTimestamp, type ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { forbidden, invalid, oneOf, required, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { parseQuantity } from '../quantity.js';
import { labelSelector } from '../selectors.js';
import { asList, asObj, deepEqual, setDefault, specOf, type Obj } from '../values.js';

const statusOf = (o: ApiObject): Obj => asObj(o.status) ?? {};
const ACCESS_MODES = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];
const VOLUME_MODES = ['Block', 'Filesystem'];
const RECLAIM_POLICIES = ['Delete', 'Recycle', 'Retain'];
/** Members of a persistent volume spec that name its source. */
const PV_SOURCES = [
  'gcePersistentDisk', 'awsElasticBlockStore', 'hostPath', 'glusterfs', 'nfs', 'rbd', 'iscsi', 'cinder', 'cephfs', 'fc', 'flocker',
  'flexVolume', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'local',
  'storageos', 'csi',
];

function accessModes(field: string, modes: unknown, detail: string): Causes {
  const list = asList(modes);
  if (list.length === 0) return [required(field, detail)];
  return list.flatMap((m, i) => oneOf(`${field}[${i}]`, m, ACCESS_MODES));
}

/** The rules of a persistent volume spec at `field`; also used for inline specs of volume attachments. */
export function validatePersistentVolumeSpec(field: string, spec: Obj): Causes {
  const causes = accessModes(`${field}.accessModes`, spec.accessModes, 'must specify at least 1 access mode');
  const capacity = asObj(spec.capacity) ?? {};
  if (capacity.storage === undefined) causes.push(required(`${field}.capacity`));
  for (const name of Object.keys(capacity)) if (name !== 'storage') causes.push({ reason: 'FieldValueNotSupported', message: `Unsupported value: "${name}": supported values: "storage"`, field: `${field}.capacity` });
  const sources = PV_SOURCES.filter((s) => spec[s] !== undefined);
  if (sources.length === 0) causes.push(required(field, 'must specify a volume type'));
  if (sources.length > 1) causes.push(forbidden(`${field}.${sources[1]}`, 'may not specify more than 1 volume type'));
  causes.push(...oneOf(`${field}.persistentVolumeReclaimPolicy`, spec.persistentVolumeReclaimPolicy, RECLAIM_POLICIES));
  causes.push(...oneOf(`${field}.volumeMode`, spec.volumeMode, VOLUME_MODES));
  return causes;
}

function validatePersistentVolume(obj: ApiObject, old?: ApiObject): Causes {
  const spec = specOf(obj);
  const causes = validatePersistentVolumeSpec('spec', spec);
  if (old) {
    const source = (s: Obj) => PV_SOURCES.map((k) => s[k]);
    if (!deepEqual(source(spec), source(specOf(old)))) causes.push(forbidden('spec.persistentvolumesource', 'spec.persistentvolumesource is immutable after creation'));
    if (spec.volumeMode !== specOf(old).volumeMode) causes.push(invalid('spec.volumeMode', spec.volumeMode, 'field is immutable'));
  }
  return causes;
}

const storageOf = (o: unknown) => asObj(asObj(o)?.capacity)?.storage;
const modesText = (modes: unknown) => asList(modes).map((m) => ({ ReadWriteOnce: 'RWO', ReadOnlyMany: 'ROX', ReadWriteMany: 'RWX', ReadWriteOncePod: 'RWOP' })[String(m)] ?? m).join(',');

const persistentvolumes: KindSpec = {
  returnDeletedObject: true,
  shortNames: ['pv'], tracksGeneration: false,
  initialStatus: () => ({ phase: 'Pending', lastPhaseTransitionTime: nowTimestamp() }),
  defaults(obj) {
    const spec = asObj(obj.spec);
    if (!spec) return;
    setDefault(spec, 'persistentVolumeReclaimPolicy', 'Retain');
    setDefault(spec, 'volumeMode', 'Filesystem');
  },
  validate: validatePersistentVolume,
  validateStatus: (obj) => oneOf('status.phase', statusOf(obj).phase, ['Pending', 'Available', 'Bound', 'Released', 'Failed']),
  tableColumns: [nameColumn,
    column('Capacity', 'string', 'The capacity of the volume.', (o) => storageOf(o.spec) ?? ''),
    column('Access Modes', 'string', 'The access modes of the volume.', (o) => modesText(specOf(o).accessModes)),
    column('Reclaim Policy', 'string', 'What happens to the volume when released from its claim.', (o) => specOf(o).persistentVolumeReclaimPolicy ?? ''),
    column('Status', 'string', 'The phase of the volume.', (o) => statusOf(o).phase ?? ''),
    column('Claim', 'string', 'The claim bound to the volume.', (o) => { const ref = asObj(specOf(o).claimRef); return ref ? `${ref.namespace}/${ref.name}` : ''; }),
    column('StorageClass', 'string', 'The storage class of the volume.', (o) => specOf(o).storageClassName ?? ''),
    column('VolumeAttributesClass', 'string', 'The volume attributes class of the volume.', (o) => specOf(o).volumeAttributesClassName ?? '<unset>'),
    column('Reason', 'string', 'Why the volume is in its phase.', (o) => statusOf(o).reason ?? ''),
    ageColumn,
    column('VolumeMode', 'string', 'Block or Filesystem.', (o) => specOf(o).volumeMode ?? '', 1)],
};

function validateClaimSpec(spec: Obj): Causes {
  const causes = accessModes('spec.accessModes', spec.accessModes, 'at least 1 access mode is required');
  causes.push(...labelSelector('spec.selector', spec.selector), ...oneOf('spec.volumeMode', spec.volumeMode, VOLUME_MODES));
  const storage = asObj(asObj(spec.resources)?.requests)?.storage;
  if (storage === undefined) causes.push(required('spec.resources[storage]'));
  else if ((parseQuantity(storage) ?? 0) <= 0) causes.push(invalid('spec.resources[storage]', storage, 'must be greater than zero'));
  return causes;
}

/** A claim's spec is fixed once created, except requests (growing, once bound) and the attributes class. */
function validateClaimUpdate(obj: ApiObject, old: ApiObject): Causes {
  const strip = (s: Obj) => ({ ...s, resources: { ...asObj(s.resources), requests: undefined }, volumeAttributesClassName: undefined });
  const spec = specOf(obj);
  const oldSpec = specOf(old);
  const requestsChanged = !deepEqual(asObj(spec.resources)?.requests, asObj(oldSpec.resources)?.requests);
  const bound = statusOf(old).phase === 'Bound';
  if (!deepEqual(strip(spec), strip(oldSpec)) || (requestsChanged && !bound)) {
    return [forbidden('spec', 'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims')];
  }
  const storage = parseQuantity(asObj(asObj(spec.resources)?.requests)?.storage) ?? 0;
  const before = parseQuantity(asObj(asObj(oldSpec.resources)?.requests)?.storage) ?? 0;
  return storage < before ? [forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity')] : [];
}

const persistentvolumeclaims: KindSpec = {
  returnDeletedObject: true,
  shortNames: ['pvc'], tracksGeneration: false,
  initialStatus: () => ({ phase: 'Pending' }),
  defaults(obj) {
    const spec = asObj(obj.spec);
    if (spec) setDefault(spec, 'volumeMode', 'Filesystem');
  },
  validate: (obj, old) => [...validateClaimSpec(specOf(obj)), ...(old ? validateClaimUpdate(obj, old) : [])],
  validateStatus: (obj) => oneOf('status.phase', statusOf(obj).phase, ['Pending', 'Bound', 'Lost']),
  tableColumns: [nameColumn,
    column('Status', 'string', 'The phase of the claim.', (o) => statusOf(o).phase ?? ''),
    column('Volume', 'string', 'The volume bound to the claim.', (o) => specOf(o).volumeName ?? ''),
    column('Capacity', 'string', 'The capacity of the bound volume.', (o) => storageOf(o.status) ?? ''),
    column('Access Modes', 'string', 'The access modes of the bound volume.', (o) => modesText(statusOf(o).accessModes)),
    column('StorageClass', 'string', 'The storage class of the claim.', (o) => specOf(o).storageClassName ?? ''),
    column('VolumeAttributesClass', 'string', 'The volume attributes class of the claim.', (o) => specOf(o).volumeAttributesClassName ?? '<unset>'),
    ageColumn,
    column('VolumeMode', 'string', 'Block or Filesystem.', (o) => specOf(o).volumeMode ?? '', 1)],
};

export const coreStorageKinds: Record<string, KindSpec> = { persistentvolumes, persistentvolumeclaims };
