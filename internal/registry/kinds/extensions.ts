// The apiextensions group (v1) CustomResourceDefinition and the apiregistration group (v1) APIService.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, conditionStatus, createdAtColumn, nameColumn } from '../columns.js';
import { dns1035Label, forbidden, invalid, required, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { setCondition, TERMINATING } from '../../apiextensions/conditions.js';
import { renameExtensions } from '../../apiextensions/structural.js';
import { validateCustomResourceDefinition } from '../../apiextensions/validation.js';
import { storageVersionOf } from '../../apiextensions/crd.js';
import { CRD_CLEANUP_FINALIZER } from '../../names/index.js';
import { asList, asObj, child, objects, setDefault, str, specOf } from '../values.js';

const CATEGORIES = ['api-extensions'];

function defaultCRD(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  const names = asObj(spec.names);
  if (names && typeof names.kind === 'string') {
    setDefault(names, 'singular', names.kind.toLowerCase());
    setDefault(names, 'listKind', `${names.kind}List`);
  }
  setDefault(child(spec, 'conversion'), 'strategy', 'None');
  const service = asObj(asObj(asObj(asObj(spec.conversion)?.webhook)?.clientConfig)?.service);
  if (service) setDefault(service, 'port', 443);
  // Schemas written for the platform spell the extensions x-kubernetes-*: stored as x-svc-*.
  for (const v of objects(spec.versions)) renameExtensions(asObj(v.schema)?.openAPIV3Schema);
}

/** The storage version joins `status.storedVersions` when a write names it (kept there until a client removes it). */
function recordStorageVersion(obj: ApiObject): void {
  const storage = storageVersionOf(obj);
  const status = asObj(obj.status) ?? {};
  const stored = asList(status.storedVersions);
  if (storage && !stored.includes(storage)) obj.status = { ...status, storedVersions: [...stored, storage] };
}

/** `status.storedVersions` lists served-or-not versions of the spec, the storage version among them. */
function validateStoredVersions(obj: ApiObject): Causes {
  const stored = asList(asObj(obj.status)?.storedVersions);
  const versions = objects(specOf(obj).versions);
  const storage = versions.find((v) => v.storage === true)?.name;
  if (stored.length === 0) return [invalid('status.storedVersions', stored, 'must have at least one stored version')];
  const causes: Causes = [];
  stored.forEach((v, i) => {
    if (!versions.some((x) => x.name === v)) causes.push(invalid(`status.storedVersions[${i}]`, v, 'must appear in spec.versions'));
  });
  if (storage !== undefined && !stored.includes(storage)) causes.push(invalid('status.storedVersions', stored, `must have the storage version ${storage}`));
  return causes;
}

/** The first delete marks the CRD Terminating; the cleanup finalizer holds it until its objects are gone. */
function terminateCRD(obj: ApiObject): void {
  setCondition(obj, TERMINATING);
}

const customresourcedefinitions: KindSpec = {
  shortNames: ['crd', 'crds'], categories: CATEGORIES,
  initialStatus: () => ({ acceptedNames: { plural: '', kind: '' }, storedVersions: [] }),
  defaults: defaultCRD,
  create: recordStorageVersion,
  update: recordStorageVersion,
  delete: terminateCRD,
  deletionFinalizer: CRD_CLEANUP_FINALIZER,
  // Every rule of the platform's CRD validation (names, versions, structural schemas, rules, subresources, conversion).
  validate: validateCustomResourceDefinition,
  validateStatus: validateStoredVersions,
  tableColumns: [nameColumn, createdAtColumn],
};

const MAX_GROUP_PRIORITY = 20000;
const MAX_VERSION_PRIORITY = 1000;

function validateAPIService(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = [];
  const version = str(spec.version) ?? '';
  const groupName = str(spec.group) ?? '';
  if (!version) causes.push(required('spec.version'));
  else causes.push(...dns1035Label('spec.version', version));
  if (obj.metadata?.name !== (groupName ? `${version}.${groupName}` : version)) causes.push(invalid('metadata.name', obj.metadata?.name, 'must be `spec.version+"."+spec.group`'));
  const { groupPriorityMinimum: g, versionPriority: v } = spec as Record<string, number>;
  if (!(g >= 1 && g <= MAX_GROUP_PRIORITY)) causes.push(invalid('spec.groupPriorityMinimum', g, `must be positive and less than ${MAX_GROUP_PRIORITY}`));
  if (!(v >= 1 && v <= MAX_VERSION_PRIORITY)) causes.push(invalid('spec.versionPriority', v, `must be positive and less than ${MAX_VERSION_PRIORITY}`));
  if (spec.insecureSkipTLSVerify === true && spec.caBundle) causes.push(invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  const service = asObj(spec.service);
  if (service) {
    if (!service.name) causes.push(required('spec.service.name'));
    if (!service.namespace) causes.push(required('spec.service.namespace'));
  } else if (spec.insecureSkipTLSVerify === true || spec.caBundle) {
    causes.push(forbidden('spec.service', 'a local APIService may not carry TLS settings'));
  }
  return causes;
}

const apiservices: KindSpec = {
  categories: CATEGORIES,
  defaults(obj) {
    const service = asObj(specOf(obj).service);
    if (service) setDefault(service, 'port', 443);
  },
  validate: validateAPIService,
  tableColumns: [nameColumn,
    column('Service', 'string', 'The reference to the service that hosts the API endpoint.', (o) => {
      const s = asObj(specOf(o).service);
      return s ? `${s.namespace}/${s.name}` : 'Local';
    }),
    column('Available', 'string', 'Whether this service is available.', (o) => conditionStatus(o, 'Available') ?? 'Unknown'),
    ageColumn],
};

export const apiextensionsKinds: Record<string, KindSpec> = { customresourcedefinitions };
export const apiregistrationKinds: Record<string, KindSpec> = { apiservices };
