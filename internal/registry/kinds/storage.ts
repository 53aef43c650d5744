// The storage group (v1): CSIDriver and VolumeAttachment (every rule of document 3),
// StorageClass, CSINode, CSIStorageCapacity, VolumeAttributesClass.
import type { ApiObject } from '../../apimachinery/meta.js';
import { DEFAULT_STORAGE_CLASS_ANNOTATION, wellKnownValue } from '../../names/index.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import {
  dns1123Subdomain, duplicate, forbidden, invalid, notSupported, oneOf, qualifiedName, required, tooLong, unchanged, type Causes,
} from '../causes.js';
import type { KindSpec } from '../define.js';
import { labelSelector } from '../selectors.js';
import { asList, asObj, objects, setDefault, str, specOf, type Obj } from '../values.js';
import { parseQuantity } from '../quantity.js';
import { validatePersistentVolumeSpec } from './core-storage.js';

const MAX_DRIVER_NAME = 63;
const FS_GROUP_POLICIES = ['File', 'None', 'ReadWriteOnceWithFSType'];
const LIFECYCLE_MODES = ['Persistent', 'Ephemeral'];
const MIN_TOKEN_SECONDS = 600;
const MAX_TOKEN_SECONDS = 2 ** 32;
const MIN_ALLOCATABLE_PERIOD = 10;
const MAX_ATTACHMENT_METADATA = 256 * 1024;
const MAX_VOLUME_ERROR_MESSAGE = 1024;

const statusOf = (o: ApiObject | undefined): Obj => asObj(o?.status) ?? {};

/** A CSI driver name: at most 63 characters of a DNS subdomain (any case). */
function csiDriverName(field: string, name: unknown): Causes {
  if (typeof name !== 'string' || name === '') return [required(field)];
  const causes = name.length > MAX_DRIVER_NAME ? [tooLong(field, MAX_DRIVER_NAME)] : [];
  return [...causes, ...dns1123Subdomain(field, name.toLowerCase())];
}

// ---- CSIDriver ----

function defaultCSIDriver(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  setDefault(spec, 'attachRequired', true);
  setDefault(spec, 'podInfoOnMount', false);
  setDefault(spec, 'storageCapacity', false);
  setDefault(spec, 'fsGroupPolicy', 'ReadWriteOnceWithFSType');
  if (asList(spec.volumeLifecycleModes).length === 0) spec.volumeLifecycleModes = ['Persistent'];
  setDefault(spec, 'requiresRepublish', false);
  setDefault(spec, 'seLinuxMount', false);
}

function tokenRequests(requests: unknown): Causes {
  const causes: Causes = [];
  const audiences = new Set<string>();
  objects(requests).forEach((r, i) => {
    const at = `spec.tokenRequests[${i}]`;
    const audience = str(r.audience) ?? '';
    if (audiences.has(audience)) { causes.push(duplicate(`${at}.audience`, audience)); return; }
    audiences.add(audience);
    const seconds = r.expirationSeconds;
    if (typeof seconds !== 'number') return;
    if (seconds < MIN_TOKEN_SECONDS) causes.push(invalid(`${at}.expirationSeconds`, seconds, 'may not specify a duration less than 10 minutes'));
    if (seconds > MAX_TOKEN_SECONDS) causes.push(invalid(`${at}.expirationSeconds`, seconds, 'may not specify a duration larger than 2^32 seconds'));
  });
  return causes;
}

function lifecycleModes(modes: unknown): Causes {
  const causes: Causes = [];
  const seen = new Set<unknown>();
  asList(modes).forEach((m, i) => {
    if (!LIFECYCLE_MODES.includes(m as string)) causes.push(notSupported('spec.volumeLifecycleModes', m, LIFECYCLE_MODES));
    if (seen.has(m)) causes.push(duplicate(`spec.volumeLifecycleModes[${i}]`, m));
    seen.add(m);
  });
  return causes;
}

function validateCSIDriver(obj: ApiObject, old?: ApiObject): Causes {
  const spec = specOf(obj);
  const causes = csiDriverName('metadata.name', obj.metadata?.name);
  if (!asObj(obj.spec)) return causes;
  for (const f of ['attachRequired', 'podInfoOnMount', 'storageCapacity', 'requiresRepublish', 'seLinuxMount']) {
    if (spec[f] === undefined) causes.push(required(`spec.${f}`));
  }
  causes.push(...oneOf('spec.fsGroupPolicy', spec.fsGroupPolicy, FS_GROUP_POLICIES));
  causes.push(...tokenRequests(spec.tokenRequests), ...lifecycleModes(spec.volumeLifecycleModes));
  const period = spec.nodeAllocatableUpdatePeriodSeconds;
  if (typeof period === 'number' && period < MIN_ALLOCATABLE_PERIOD) {
    causes.push(invalid('spec.nodeAllocatableUpdatePeriodSeconds', period, 'must be greater than or equal to 10 seconds'));
  }
  if (old) {
    causes.push(...unchanged('spec.attachRequired', spec.attachRequired, specOf(old).attachRequired));
    causes.push(...unchanged('spec.volumeLifecycleModes', spec.volumeLifecycleModes, specOf(old).volumeLifecycleModes));
  }
  return causes;
}

const flag = (v: unknown) => (v === undefined ? '<unset>' : String(v));

const csidrivers: KindSpec = {
  returnDeletedObject: true,
  defaults: defaultCSIDriver,
  validate: validateCSIDriver,
  tableColumns: [nameColumn,
    column('AttachRequired', 'boolean', 'Indicates this CSI volume driver requires an attach operation.', (o) => specOf(o).attachRequired === true),
    column('PodInfoOnMount', 'boolean', 'Indicates this CSI volume driver requires additional pod information during mount operations.', (o) => specOf(o).podInfoOnMount === true),
    column('StorageCapacity', 'boolean', 'Indicates this CSI volume driver supports storage capacity tracking.', (o) => specOf(o).storageCapacity === true),
    column('TokenRequests', 'string', 'Indicates the audiences of the service account tokens the driver receives.', (o) => objects(specOf(o).tokenRequests).map((t) => t.audience).join(',') || '<unset>'),
    column('RequiresRepublish', 'string', 'Indicates this CSI volume driver requires periodic republishing.', (o) => flag(specOf(o).requiresRepublish)),
    column('Modes', 'string', 'Indicates volume lifecycle modes supported by this driver.', (o) => asList(specOf(o).volumeLifecycleModes).join(',') || '<none>'),
    ageColumn],
};

// ---- VolumeAttachment ----

/** An inline spec may only name a CSI volume, without capacity, claim or class. */
function inlineVolumeSpec(field: string, spec: Obj): Causes {
  const causes = validatePersistentVolumeSpec(field, spec).filter((c) => c.field !== `${field}.capacity`);
  if (spec.capacity !== undefined) causes.push(forbidden(`${field}.capacity`, 'may not be specified in the context of inline volumes'));
  if (spec.csi === undefined) causes.push(required(`${field}.csi`, 'has to be specified in the context of inline volumes'));
  if (spec.claimRef !== undefined) causes.push(forbidden(`${field}.claimRef`, 'may not be specified in the context of inline volumes'));
  if (spec.storageClassName) causes.push(forbidden(`${field}.storageClassName`, 'may not be specified in the context of inline volumes'));
  return causes;
}

function attachmentSource(source: unknown): Causes {
  const s = asObj(source);
  if (!s) return [required('spec.source')];
  const hasName = s.persistentVolumeName !== undefined;
  const inline = asObj(s.inlineVolumeSpec);
  if (!hasName && !inline) return [required('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName')];
  if (hasName && inline) return [forbidden('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName')];
  if (inline) return inlineVolumeSpec('spec.source.inlineVolumeSpec', inline);
  const name = s.persistentVolumeName;
  if (name === '') return [required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName')];
  return dns1123Subdomain('spec.source.persistentVolumeName', String(name));
}

function attachmentStatus(status: Obj): Causes {
  const causes: Causes = [];
  const size = Object.entries(asObj(status.attachmentMetadata) ?? {}).reduce((n, [k, v]) => n + k.length + String(v).length, 0);
  if (size > MAX_ATTACHMENT_METADATA) causes.push(tooLong('status.attachmentMetadata', MAX_ATTACHMENT_METADATA));
  for (const f of ['attachError', 'detachError']) {
    const message = str(asObj(status[f])?.message);
    if (message && message.length > MAX_VOLUME_ERROR_MESSAGE) causes.push(tooLong(`status.${f}.message`, MAX_VOLUME_ERROR_MESSAGE));
  }
  return causes;
}

function validateVolumeAttachment(obj: ApiObject, old?: ApiObject): Causes {
  const spec = specOf(obj);
  const causes = [...csiDriverName('spec.attacher', spec.attacher), ...attachmentSource(spec.source)];
  if (typeof spec.nodeName !== 'string' || spec.nodeName === '') causes.push(required('spec.nodeName'));
  else causes.push(...dns1123Subdomain('spec.nodeName', spec.nodeName));
  causes.push(...attachmentStatus(statusOf(obj)));
  if (old) causes.push(...unchanged('spec', obj.spec, old.spec));
  return causes;
}

const volumeattachments: KindSpec = {
  returnDeletedObject: true,
  tracksGeneration: false,
  validate: validateVolumeAttachment,
  validateStatus: (obj) => attachmentStatus(statusOf(obj)),
  tableColumns: [nameColumn,
    column('Attacher', 'string', 'Name of the CSI driver that handles the attachment.', (o) => specOf(o).attacher ?? ''),
    column('PV', 'string', 'Name of the persistent volume attached.', (o) => asObj(specOf(o).source)?.persistentVolumeName ?? ''),
    column('Node', 'string', 'The node the volume is attached to.', (o) => specOf(o).nodeName ?? ''),
    column('Attached', 'boolean', 'Whether the volume is attached.', (o) => statusOf(o).attached === true),
    ageColumn],
};

// ---- the other storage kinds ----

const RECLAIM_POLICIES = ['Delete', 'Retain'];
const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'];

function validateStorageClass(obj: ApiObject, old?: ApiObject): Causes {
  const causes = typeof obj.provisioner === 'string' && obj.provisioner ? qualifiedName('provisioner', obj.provisioner) : [required('provisioner')];
  causes.push(...oneOf('reclaimPolicy', obj.reclaimPolicy, RECLAIM_POLICIES), ...oneOf('volumeBindingMode', obj.volumeBindingMode, BINDING_MODES));
  if (old) {
    if (unchanged('parameters', obj.parameters, old.parameters).length) causes.push(forbidden('parameters', 'updates to parameters are forbidden.'));
    causes.push(...unchanged('provisioner', obj.provisioner, old.provisioner), ...unchanged('reclaimPolicy', obj.reclaimPolicy, old.reclaimPolicy));
    causes.push(...unchanged('volumeBindingMode', obj.volumeBindingMode, old.volumeBindingMode));
  }
  return causes;
}

const storageclasses: KindSpec = {
  returnDeletedObject: true,
  shortNames: ['sc'],
  defaults(obj) {
    setDefault(obj, 'reclaimPolicy', 'Delete');
    setDefault(obj, 'volumeBindingMode', 'Immediate');
  },
  validate: validateStorageClass,
  tableColumns: [
    column('Name', 'string', 'Name must be unique within a namespace.', (o) => `${o.metadata?.name ?? ''}${wellKnownValue(o.metadata?.annotations, DEFAULT_STORAGE_CLASS_ANNOTATION) === 'true' ? ' (default)' : ''}`),
    column('Provisioner', 'string', 'Indicates the type of the provisioner.', (o) => o.provisioner ?? ''),
    column('ReclaimPolicy', 'string', 'Indicates the type of the reclaim policy.', (o) => o.reclaimPolicy ?? ''),
    column('VolumeBindingMode', 'string', 'Indicates how volume binding is done.', (o) => o.volumeBindingMode ?? ''),
    column('AllowVolumeExpansion', 'string', 'Indicates whether the class allows volume expansion.', (o) => String(o.allowVolumeExpansion === true)),
    ageColumn],
};

function validateCSINode(obj: ApiObject): Causes {
  const causes: Causes = [];
  const names = new Set<unknown>();
  objects(specOf(obj).drivers).forEach((d, i) => {
    const at = `spec.drivers[${i}]`;
    causes.push(...csiDriverName(`${at}.name`, d.name));
    if (names.has(d.name)) causes.push(duplicate(`${at}.name`, d.name));
    names.add(d.name);
    if (typeof d.nodeID !== 'string' || d.nodeID === '') causes.push(required(`${at}.nodeID`));
    asList(d.topologyKeys).forEach((k, j) => causes.push(...qualifiedName(`${at}.topologyKeys[${j}]`, String(k))));
    const allocatable = asObj(d.allocatable)?.count;
    if (typeof allocatable === 'number' && allocatable < 0) causes.push(invalid(`${at}.allocatable.count`, allocatable, 'must be greater than or equal to 0'));
  });
  return causes;
}

const csinodes: KindSpec = {
  returnDeletedObject: true,
  validate: validateCSINode,
  tableColumns: [nameColumn, column('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node', (o) => asList(specOf(o).drivers).length), ageColumn],
};

const csistoragecapacities: KindSpec = {
  validate(obj) {
    const causes = typeof obj.storageClassName === 'string' && obj.storageClassName ? dns1123Subdomain('storageClassName', obj.storageClassName) : [required('storageClassName')];
    causes.push(...labelSelector('nodeTopology', obj.nodeTopology));
    for (const f of ['capacity', 'maximumVolumeSize']) if ((parseQuantity(obj[f]) ?? 0) < 0) causes.push(invalid(f, obj[f], 'must be greater than or equal to 0'));
    return causes;
  },
  tableColumns: [nameColumn,
    column('StorageClassName', 'string', 'The storage class the capacity is for.', (o) => o.storageClassName ?? ''),
    column('Capacity', 'string', 'The capacity available.', (o) => o.capacity ?? ''), ageColumn],
};

const volumeattributesclasses: KindSpec = {
  returnDeletedObject: true,
  shortNames: ['vac'],
  validate: (obj, old) => [
    ...csiDriverName('driverName', obj.driverName),
    ...(old ? [...unchanged('driverName', obj.driverName, old.driverName), ...unchanged('parameters', obj.parameters, old.parameters)] : []),
  ],
  tableColumns: [nameColumn, column('DriverName', 'string', 'The CSI driver of the class.', (o) => o.driverName ?? ''), ageColumn],
};

export const storageKinds: Record<string, KindSpec> = {
  csidrivers, volumeattachments, storageclasses, csinodes, csistoragecapacities, volumeattributesclasses,
};
