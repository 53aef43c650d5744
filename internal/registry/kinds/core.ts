// Core (`/api/v1`) kinds other than workloads, services and volumes: namespaces,
// config maps, secrets, service accounts, events (core-events.ts), endpoints, nodes, quotas.
import type { ApiObject } from '../../apimachinery/meta.js';
import {
  FOREGROUND_FINALIZER, NAMESPACE_FINALIZER, NAMESPACE_NAME_LABEL, ORPHAN_FINALIZER, SECRET_TYPE_BASIC_AUTH, SECRET_TYPE_BOOTSTRAP_TOKEN, SECRET_TYPE_DOCKERCFG,
  SECRET_TYPE_DOCKER_CONFIG_JSON, SECRET_TYPE_SERVICE_ACCOUNT_TOKEN, SECRET_TYPE_SSH_AUTH, SECRET_TYPE_TLS, SERVICE_ACCOUNT_NAME_ANNOTATION,
  NODE_ROLE_LABEL_PREFIX, isWellKnown, wellKnownValue, type WellKnown,
} from '../../names/index.js';
import { ageColumn, column, conditionStatus, nameColumn, pathOf, shortList } from '../columns.js';
import {
  dns1123Subdomain, forbidden, immutable, invalid, oneOf, portName, portNumber, protocol, qualifiedName, required, tooLong, type Causes,
} from '../causes.js';
import type { KindSpec } from '../define.js';
import { asList, asObj, child, clone, deepEqual, objects, setDefault, str, specOf, type Obj } from '../values.js';
import { isIP, parseCidr } from '../net.js';
import { events } from './core-events.js';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const MAX_DATA_BYTES = 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const entries = (v: unknown) => Object.entries(asObj(v) ?? {});
const statusOf = (o: ApiObject): Obj => asObj(o.status) ?? {};

/** Keys of data maps: a valid config key each, none in two maps, total size bounded. */
function validateDataKeys(obj: ApiObject, maps: string[]): Causes {
  const causes: Causes = [];
  const seen = new Set<string>();
  let size = 0;
  for (const field of maps) {
    for (const [key, value] of entries(obj[field])) {
      if (key.length > 253 || !CONFIG_KEY.test(key)) {
        causes.push(invalid(`${field}[${key}]`, key, "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"));
      }
      if (seen.has(key)) causes.push(invalid(`${field}[${key}]`, key, 'duplicate of key present in another data map'));
      seen.add(key);
      size += key.length + String(value).length;
    }
  }
  if (size > MAX_DATA_BYTES) causes.push(tooLong('', MAX_DATA_BYTES));
  return causes;
}

/** Once `immutable` is true, the data maps and the flag itself stay as they are. */
function validateImmutableData(obj: ApiObject, old: ApiObject | undefined, maps: string[]): Causes {
  if (old?.immutable !== true) return [];
  const causes = maps.filter((m) => !deepEqual(obj[m] ?? {}, old[m] ?? {}))
    .map((m) => forbidden(m, 'field is immutable when `immutable` is set'));
  if (obj.immutable !== true) causes.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
  return causes;
}

/** Finalizer names without a domain that mean something to the server. */
const STANDARD_FINALIZERS = [NAMESPACE_FINALIZER.own, NAMESPACE_FINALIZER.upstream, ORPHAN_FINALIZER, FOREGROUND_FINALIZER];

/** A namespace's finalizers: qualified names, and those without a domain only the standard ones. */
const validateNamespaceFinalizers = (obj: ApiObject): Causes => asList(specOf(obj).finalizers).flatMap((f, i) => {
  const field = `spec.finalizers[${i}]`;
  const name = String(f);
  const causes = qualifiedName(field, name);
  if (causes.length === 0 && !name.includes('/') && !STANDARD_FINALIZERS.includes(name)) {
    causes.push(invalid(field, name, 'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return causes;
});

const namespaces: KindSpec = {
  shortNames: ['ns'], nameRule: 'dns1123label', returnDeletedObject: true, tracksGeneration: false,
  selectableFields: { 'status.phase': (o) => str(statusOf(o).phase) },
  initialStatus: () => ({ phase: 'Active' }),
  // Every namespace carries its own name under both spellings of the label, whatever a client wrote there.
  defaults(obj) {
    const name = obj.metadata?.name ?? '';
    obj.metadata = { ...obj.metadata, labels: { ...obj.metadata?.labels, [NAMESPACE_NAME_LABEL.own]: name, [NAMESPACE_NAME_LABEL.upstream]: name } };
  },
  // The namespace finalizer is added unless the client already named it (in either spelling).
  create(obj) {
    const finalizers = asList(specOf(obj).finalizers);
    const held = finalizers.some((f) => isWellKnown(f, NAMESPACE_FINALIZER));
    obj.spec = { ...specOf(obj), finalizers: held ? finalizers : [...finalizers, NAMESPACE_FINALIZER.own] };
  },
  update(obj, old) {
    obj.spec = clone(old.spec);
  },
  delete(obj) {
    obj.status = { ...statusOf(obj), phase: 'Terminating' };
  },
  validate: validateNamespaceFinalizers,
  validateStatus: (obj) => oneOf('status.phase', statusOf(obj).phase, ['Active', 'Terminating']),
  tableColumns: [nameColumn, column('Status', 'string', 'The phase of the namespace', (o) => statusOf(o).phase ?? ''), ageColumn],
};

const configmaps: KindSpec = {
  shortNames: ['cm'],
  validate: (obj, old) => [...validateDataKeys(obj, ['data', 'binaryData']), ...validateImmutableData(obj, old, ['data', 'binaryData'])],
  tableColumns: [nameColumn, column('Data', 'integer', 'Number of data entries', (o) => entries(o.data).length + entries(o.binaryData).length), ageColumn],
};

/** `stringData` is write-only: its entries overwrite `data`, base64-encoded. */
function mergeStringData(obj: ApiObject): void {
  const stringData = asObj(obj.stringData);
  if (!stringData) return;
  const data = child(obj, 'data');
  for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v)).toString('base64');
  delete obj.stringData;
}

const BOOTSTRAP_ID = /^[a-z0-9]{6}$/;
const BOOTSTRAP_SECRET = /^[a-z0-9]{16}$/;
const BOOTSTRAP_GROUP_PREFIX = 'system:bootstrappers:';

const decoded = (data: Obj, key: string): string | undefined =>
  (typeof data[key] === 'string' ? Buffer.from(data[key] as string, 'base64').toString('utf8') : undefined);

/** The keys each secret type needs (the type in either spelling), and the bootstrap token layout of document 2. */
function validateSecretType(obj: ApiObject): Causes {
  const data = asObj(obj.data) ?? {};
  const needs = (...keys: string[]) => keys.filter((k) => data[k] === undefined).map((k) => required(`data[${k}]`));
  const jsonKey = (key: string) => {
    const text = decoded(data, key);
    if (text === undefined) return needs(key);
    try { JSON.parse(text); return []; } catch (err) { return [invalid(`data[${key}]`, '<secret contents redacted>', (err as Error).message)]; }
  };
  const is = (type: WellKnown) => isWellKnown(obj.type, type);
  if (is(SECRET_TYPE_SERVICE_ACCOUNT_TOKEN)) {
    // The annotation is looked for in the spelling of the type.
    const annotation = obj.type === SECRET_TYPE_SERVICE_ACCOUNT_TOKEN.own ? SERVICE_ACCOUNT_NAME_ANNOTATION.own : SERVICE_ACCOUNT_NAME_ANNOTATION.upstream;
    return wellKnownValue(obj.metadata?.annotations, SERVICE_ACCOUNT_NAME_ANNOTATION) ? [] : [required(`metadata.annotations[${annotation}]`)];
  }
  if (is(SECRET_TYPE_DOCKERCFG)) return jsonKey('.dockercfg');
  if (is(SECRET_TYPE_DOCKER_CONFIG_JSON)) return jsonKey('.dockerconfigjson');
  if (is(SECRET_TYPE_BASIC_AUTH)) return data.username === undefined && data.password === undefined ? needs('username', 'password') : [];
  if (is(SECRET_TYPE_SSH_AUTH)) return data['ssh-privatekey'] ? [] : [required('data[ssh-privatekey]')]; // present and not empty
  if (is(SECRET_TYPE_TLS)) return needs('tls.crt', 'tls.key');
  if (is(SECRET_TYPE_BOOTSTRAP_TOKEN)) return validateBootstrapToken(obj, data);
  return [];
}

function validateBootstrapToken(obj: ApiObject, data: Obj): Causes {
  const causes: Causes = [];
  const id = decoded(data, 'token-id');
  const secret = decoded(data, 'token-secret');
  if (id === undefined) causes.push(required('data[token-id]'));
  else if (!BOOTSTRAP_ID.test(id)) causes.push(invalid('data[token-id]', id, 'must be 6 characters of [a-z0-9]'));
  if (secret === undefined) causes.push(required('data[token-secret]'));
  else if (!BOOTSTRAP_SECRET.test(secret)) causes.push(invalid('data[token-secret]', '<secret contents redacted>', 'must be 16 characters of [a-z0-9]'));
  if (id !== undefined && obj.metadata?.name !== `bootstrap-token-${id}`) {
    causes.push(invalid('metadata.name', obj.metadata?.name, `must be bootstrap-token-${id}`));
  }
  const expiration = decoded(data, 'expiration');
  if (expiration !== undefined && Number.isNaN(Date.parse(expiration))) causes.push(invalid('data[expiration]', expiration, 'must be an RFC 3339 time'));
  for (const usage of ['usage-bootstrap-authentication', 'usage-bootstrap-signing']) {
    const value = decoded(data, usage);
    if (value !== undefined && value !== 'true' && value !== 'false') causes.push(invalid(`data[${usage}]`, value, 'must be "true" or "false"'));
  }
  for (const group of (decoded(data, 'auth-extra-groups') ?? '').split(',').filter(Boolean)) {
    if (!group.startsWith(BOOTSTRAP_GROUP_PREFIX)) causes.push(invalid('data[auth-extra-groups]', group, `must start with "${BOOTSTRAP_GROUP_PREFIX}"`));
  }
  return causes;
}

const secrets: KindSpec = {
  selectableFields: { type: (o) => str(o.type) },
  defaults(obj) {
    mergeStringData(obj);
    setDefault(obj, 'type', 'Opaque');
  },
  validate(obj, old) {
    const causes = [...validateDataKeys(obj, ['data']), ...validateImmutableData(obj, old, ['data'])];
    for (const [key, value] of entries(obj.data)) {
      if (typeof value !== 'string' || !BASE64.test(value)) causes.push(invalid(`data[${key}]`, '<secret contents redacted>', 'must be base64-encoded'));
    }
    if (old && old.type !== obj.type) causes.push(immutable('type', obj.type));
    return [...causes, ...validateSecretType(obj)];
  },
  tableColumns: [nameColumn, column('Type', 'string', 'The type of the secret', (o) => o.type ?? ''),
    column('Data', 'integer', 'Number of data entries', (o) => entries(o.data).length), ageColumn],
};

const serviceaccounts: KindSpec = {
  returnDeletedObject: true,
  shortNames: ['sa'],
  validate(obj) {
    const causes: Causes = [];
    objects(obj.secrets).forEach((s, i) => { if (typeof s.name === 'string') causes.push(...dns1123Subdomain(`secrets[${i}].name`, s.name)); });
    objects(obj.imagePullSecrets).forEach((s, i) => { if (typeof s.name === 'string') causes.push(...dns1123Subdomain(`imagePullSecrets[${i}].name`, s.name)); });
    return causes;
  },
  tableColumns: [nameColumn, column('Secrets', 'string', 'Secrets is the list of secrets allowed to be used by pods running using this ServiceAccount', (o) => asList(o.secrets).length), ageColumn],
};

function validateEndpointSubsets(obj: ApiObject): Causes {
  const causes: Causes = [];
  objects(obj.subsets).forEach((subset, i) => {
    const at = `subsets[${i}]`;
    for (const list of ['addresses', 'notReadyAddresses']) {
      objects(subset[list]).forEach((a, j) => {
        if (!isIP(str(a.ip) ?? '')) causes.push(invalid(`${at}.${list}[${j}].ip`, a.ip, 'must be a valid IP address'));
      });
    }
    objects(subset.ports).forEach((p, j) => {
      if (typeof p.name === 'string' && p.name) causes.push(...portName(`${at}.ports[${j}].name`, p.name));
      causes.push(...portNumber(`${at}.ports[${j}].port`, p.port), ...protocol(`${at}.ports[${j}].protocol`, p.protocol));
    });
  });
  return causes;
}

const endpoints: KindSpec = {
  shortNames: ['ep'],
  defaults(obj) {
    for (const subset of objects(obj.subsets)) for (const p of objects(subset.ports)) setDefault(p, 'protocol', 'TCP');
  },
  validate: validateEndpointSubsets,
  tableColumns: [nameColumn, column('Endpoints', 'string', 'Endpoints of the service', (o) => shortList(objects(o.subsets).flatMap((s) => {
    const ports = objects(s.ports);
    return objects(s.addresses).flatMap((a) => (ports.length ? ports.map((p) => `${a.ip}:${p.port}`) : [String(a.ip)]));
  }))), ageColumn],
};

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
/** A node's roles: the names after either spelling of the role label prefix. */
const nodeRoles = (o: ApiObject): string[] => Object.keys(o.metadata?.labels ?? {}).flatMap((k) =>
  [NODE_ROLE_LABEL_PREFIX.own, NODE_ROLE_LABEL_PREFIX.upstream].filter((p) => k.startsWith(p)).map((p) => k.slice(p.length)));

function validateNode(obj: ApiObject, old?: ApiObject): Causes {
  const spec = specOf(obj);
  const causes: Causes = [];
  asList(spec.podCIDRs).forEach((c, i) => { if (!parseCidr(String(c))) causes.push(invalid(`spec.podCIDRs[${i}]`, c, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')); });
  objects(spec.taints).forEach((t, i) => {
    if (typeof t.key !== 'string' || !t.key) causes.push(required(`spec.taints[${i}].key`));
    causes.push(...oneOf(`spec.taints[${i}].effect`, t.effect, TAINT_EFFECTS, true));
  });
  if (old) {
    const oldSpec = specOf(old);
    for (const f of ['podCIDR', 'providerID']) {
      if (oldSpec[f] !== undefined && oldSpec[f] !== '' && oldSpec[f] !== spec[f]) causes.push(forbidden(`spec.${f}`, `${f} update is not allowed once set`));
    }
    if (asList(oldSpec.podCIDRs).length && !deepEqual(oldSpec.podCIDRs, spec.podCIDRs)) causes.push(forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid'));
  }
  return causes;
}

function nodeStatus(o: ApiObject): string {
  const ready = conditionStatus(o, 'Ready');
  const text = ready === 'True' ? 'Ready' : 'NotReady';
  return specOf(o).unschedulable === true ? `${text},SchedulingDisabled` : text;
}

const nodeAddress = (o: ApiObject, type: string) => objects(statusOf(o).addresses).find((a) => a.type === type)?.address ?? '<none>';

const nodes: KindSpec = {
  shortNames: ['no'], tracksGeneration: false,
  selectableFields: { 'spec.unschedulable': (o) => String(specOf(o).unschedulable === true) },
  initialStatus: (obj) => asObj(obj.status) ?? {},
  defaults(obj) {
    const status = asObj(obj.status);
    if (status && status.allocatable === undefined && asObj(status.capacity)) status.allocatable = clone(status.capacity);
  },
  validate: validateNode,
  tableColumns: [nameColumn,
    column('Status', 'string', 'The status of the node', nodeStatus),
    column('Roles', 'string', 'The roles of the node', (o) => [...new Set(nodeRoles(o))].join(',') || '<none>'),
    ageColumn,
    column('Version', 'string', 'Kubelet Version reported by the node.', (o) => pathOf(o, 'status.nodeInfo.kubeletVersion') ?? ''),
    column('Internal-IP', 'string', 'List of internal IPs.', (o) => nodeAddress(o, 'InternalIP'), 1),
    column('External-IP', 'string', 'List of external IPs.', (o) => nodeAddress(o, 'ExternalIP'), 1),
    column('OS-Image', 'string', 'OS Image reported by the node.', (o) => pathOf(o, 'status.nodeInfo.osImage') ?? '<unknown>', 1),
    column('Kernel-Version', 'string', 'Kernel Version reported by the node.', (o) => pathOf(o, 'status.nodeInfo.kernelVersion') ?? '<unknown>', 1),
    column('Container-Runtime', 'string', 'Container Runtime Version reported by the node.', (o) => pathOf(o, 'status.nodeInfo.containerRuntimeVersion') ?? '<unknown>', 1),
  ],
};

const LIMIT_TYPES = ['Pod', 'Container', 'PersistentVolumeClaim'];

/** Container limits: default falls back to max, defaultRequest to default, then to min. */
function defaultLimitRangeItem(item: Obj): void {
  if (item.type !== 'Container') return;
  const fill = (target: Obj, from: unknown) => { for (const [k, v] of Object.entries(asObj(from) ?? {})) setDefault(target, k, v); };
  const def = child(item, 'default');
  const defaultRequest = child(item, 'defaultRequest');
  fill(def, item.max);
  fill(defaultRequest, def);
  fill(defaultRequest, item.min);
}

const limitranges: KindSpec = {
  shortNames: ['limits'],
  defaults: (obj) => objects(specOf(obj).limits).forEach(defaultLimitRangeItem),
  validate: (obj) => objects(specOf(obj).limits).flatMap((item, i) => oneOf(`spec.limits[${i}].type`, item.type, LIMIT_TYPES, true)),
};

const QUOTA_SCOPES = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity', 'VolumeAttributesClass'];

function quotaUsage(o: ApiObject, limits: boolean): string {
  const hard = asObj(statusOf(o).hard) ?? asObj(specOf(o).hard) ?? {};
  const used = asObj(statusOf(o).used) ?? {};
  return Object.keys(hard).filter((k) => k.startsWith('limits.') === limits).sort()
    .map((k) => `${k}: ${used[k] ?? 0}/${hard[k]}`).join(', ');
}

const resourcequotas: KindSpec = {
  shortNames: ['quota'],
  validate(obj) {
    const causes: Causes = [];
    asList(specOf(obj).scopes).forEach((s, i) => causes.push(...oneOf(`spec.scopes[${i}]`, s, QUOTA_SCOPES)));
    for (const [name, q] of entries(specOf(obj).hard)) if (String(q).startsWith('-')) causes.push(invalid(`spec.hard[${name}]`, q, 'must be greater than or equal to 0'));
    return causes;
  },
  tableColumns: [nameColumn, ageColumn,
    column('Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.', (o) => quotaUsage(o, false)),
    column('Limit', 'string', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.', (o) => quotaUsage(o, true))],
};

const componentstatuses: KindSpec = {
  shortNames: ['cs'],
  tableColumns: [nameColumn,
    column('Status', 'string', 'Status of the component conditions', (o) => (conditionStatus(o, 'Healthy') === 'True' ? 'Healthy' : 'Unhealthy')),
    column('Message', 'string', 'Message of the component conditions', (o) => objects(o.conditions)[0]?.message ?? ''),
    column('Error', 'string', 'Error of the component conditions', (o) => objects(o.conditions)[0]?.error ?? '')],
};

const bindings: KindSpec = {
  ephemeral: true,
  validate: (obj) => (asObj(obj.target)?.name ? [] : [required('target.name')]),
};

export const coreKinds: Record<string, KindSpec> = {
  namespaces, configmaps, secrets, serviceaccounts, events, endpoints, nodes, limitranges, resourcequotas, componentstatuses, bindings,
};
