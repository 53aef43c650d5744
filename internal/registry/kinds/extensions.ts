// The apiextensions group (v1) CustomResourceDefinition and the apiregistration group (v1) APIService.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, conditionStatus, createdAtColumn, nameColumn } from '../columns.js';
import { dns1035Label, dns1123Label, dns1123Subdomain, duplicate, forbidden, invalid, oneOf, required, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { setCondition, TERMINATING } from '../../apiextensions/conditions.js';
import { CRD_CLEANUP_FINALIZER } from '../../names/index.js';
import { asList, asObj, child, objects, setDefault, str, type Obj } from '../values.js';

const CATEGORIES = ['api-extensions'];
const specOf = (o: ApiObject): Obj => asObj(o.spec) ?? {};
const VERSION_NAME = /^v\d+((alpha|beta)\d+)?$/;

function defaultCRD(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  const names = asObj(spec.names);
  if (names && typeof names.kind === 'string') {
    setDefault(names, 'singular', names.kind.toLowerCase());
    setDefault(names, 'listKind', `${names.kind}List`);
  }
  setDefault(child(spec, 'conversion'), 'strategy', 'None');
}

function namesCauses(names: Obj): Causes {
  const causes: Causes = [];
  for (const f of ['plural', 'singular']) {
    if (typeof names[f] === 'string' && names[f]) causes.push(...dns1035Label(`spec.names.${f}`, names[f] as string));
  }
  if (!names.plural) causes.push(required('spec.names.plural'));
  if (!names.kind) causes.push(required('spec.names.kind'));
  if (!names.listKind) causes.push(required('spec.names.listKind'));
  if (names.kind && names.kind === names.listKind) causes.push(invalid('spec.names.listKind', names.listKind, 'kind and listKind may not be the same'));
  asList(names.shortNames).forEach((s, i) => causes.push(...dns1123Label(`spec.names.shortNames[${i}]`, String(s))));
  return causes;
}

function versionsCauses(versions: Obj[]): Causes {
  if (versions.length === 0) return [required('spec.versions', 'must have exactly one version marked as storage version')];
  const causes: Causes = [];
  const names = new Set<unknown>();
  versions.forEach((v, i) => {
    const at = `spec.versions[${i}]`;
    if (typeof v.name !== 'string' || !v.name) causes.push(required(`${at}.name`));
    else if (!VERSION_NAME.test(v.name)) causes.push(...dns1035Label(`${at}.name`, v.name));
    if (names.has(v.name)) causes.push(duplicate(`${at}.name`, v.name));
    names.add(v.name);
    if (!asObj(asObj(v.schema)?.openAPIV3Schema)) causes.push(required(`${at}.schema.openAPIV3Schema`, 'schemas are required'));
  });
  if (versions.filter((v) => v.storage === true).length !== 1) causes.push(invalid('spec.versions', versions.map((v) => v.name), 'must have exactly one version marked as storage version'));
  if (!versions.some((v) => v.served === true)) causes.push(invalid('spec.versions', versions.map((v) => v.name), 'must have at least one version marked as served'));
  return causes;
}

function validateCRD(obj: ApiObject, old?: ApiObject): Causes {
  const spec = specOf(obj);
  const names = asObj(spec.names) ?? {};
  const groupName = str(spec.group) ?? '';
  const causes: Causes = [];
  if (!groupName) causes.push(required('spec.group'));
  else {
    causes.push(...dns1123Subdomain('spec.group', groupName));
    if (!groupName.includes('.')) causes.push(invalid('spec.group', groupName, 'should be a domain with at least one dot'));
  }
  if (obj.metadata?.name !== `${names.plural}.${groupName}`) causes.push(invalid('metadata.name', obj.metadata?.name, 'must be spec.names.plural+"."+spec.group'));
  causes.push(...oneOf('spec.scope', spec.scope, ['Cluster', 'Namespaced'], true), ...namesCauses(names), ...versionsCauses(objects(spec.versions)));
  causes.push(...oneOf('spec.conversion.strategy', asObj(spec.conversion)?.strategy, ['None', 'Webhook'], true));
  if (old) {
    if (spec.scope !== specOf(old).scope) causes.push(invalid('spec.scope', spec.scope, 'field is immutable'));
    if (spec.group !== specOf(old).group) causes.push(invalid('spec.group', spec.group, 'field is immutable'));
  }
  return causes;
}

/** The storage version joins `status.storedVersions` when a write names it (kept there until a client removes it). */
function recordStorageVersion(obj: ApiObject): void {
  const storage = str(objects(specOf(obj).versions).find((v) => v.storage === true)?.name);
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
  validate: validateCRD,
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
