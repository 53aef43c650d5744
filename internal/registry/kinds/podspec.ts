// Pod specs and pod templates: the defaults and rules shared by Pod, PodTemplate
// and every workload kind that embeds a template.
import { isObject } from '../../apimachinery/meta.js';
import {
  dns1123Label, dns1123Subdomain, duplicate, forbidden, invalid, labelMap, nonNegative, notSupported, oneOf, portName,
  portNumber, protocol, required, type Causes,
} from '../causes.js';
import { parseQuantity } from '../quantity.js';
import { containerCauses, dnsCauses, schedulingCauses, securityContextCauses } from './podrules.js';
import { asList, asObj, child, clone, deepEqual, objects, setDefault, str, type Obj } from '../values.js';

const DEFAULT_MODE = 0o644;
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const TOLERATION_OPERATORS = ['Equal', 'Exists'];
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const CONTAINER_LISTS = ['initContainers', 'containers'] as const;
/** Members of a volume that name its source. */
const VOLUME_SOURCES = [
  'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi', 'glusterfs',
  'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc', 'azureFile', 'configMap',
  'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected', 'portworxVolume', 'scaleIO', 'storageos', 'csi',
  'ephemeral', 'image',
];

/** `Always` for `:latest` or untagged images, `IfNotPresent` for tags and digests. */
function pullPolicyFor(image: string): string {
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const colon = image.indexOf(':', lastSlash + 1);
  return colon < 0 || image.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultHttpGet(handler: Obj | undefined): void {
  const get = asObj(handler?.httpGet);
  if (!get) return;
  setDefault(get, 'path', '/');
  setDefault(get, 'scheme', 'HTTP');
}

function defaultProbe(probe: unknown): void {
  const p = asObj(probe);
  if (!p) return;
  setDefault(p, 'timeoutSeconds', 1);
  setDefault(p, 'periodSeconds', 10);
  setDefault(p, 'successThreshold', 1);
  setDefault(p, 'failureThreshold', 3);
  defaultHttpGet(p);
}

function defaultEnv(env: unknown): void {
  for (const e of objects(env)) {
    const fieldRef = asObj(asObj(e.valueFrom)?.fieldRef);
    if (fieldRef) setDefault(fieldRef, 'apiVersion', 'v1');
  }
}

function defaultContainer(c: Obj): void {
  if (typeof c.image === 'string') setDefault(c, 'imagePullPolicy', pullPolicyFor(c.image));
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  setDefault(c, 'resources', {});
  for (const port of objects(c.ports)) setDefault(port, 'protocol', 'TCP');
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) defaultProbe(c[probe]);
  for (const hook of ['postStart', 'preStop']) defaultHttpGet(asObj(asObj(c.lifecycle)?.[hook]));
  defaultEnv(c.env);
}

function defaultVolume(v: Obj): void {
  if (!VOLUME_SOURCES.some((s) => v[s] !== undefined)) v.emptyDir = {};
  for (const source of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const s = asObj(v[source]);
    if (s) setDefault(s, 'defaultMode', DEFAULT_MODE);
  }
  for (const item of objects(asObj(v.downwardAPI)?.items)) {
    const fieldRef = asObj(item.fieldRef);
    if (fieldRef) setDefault(fieldRef, 'apiVersion', 'v1');
  }
  for (const source of objects(asObj(v.projected)?.sources)) {
    const token = asObj(source.serviceAccountToken);
    if (token) setDefault(token, 'expirationSeconds', 3600);
  }
  const hostPath = asObj(v.hostPath);
  if (hostPath) setDefault(hostPath, 'type', '');
}

/** The defaults of a pod spec, in a Pod or a template. */
export function defaultPodSpec(spec: Obj): void {
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'schedulerName', 'default-scheduler');
  for (const list of CONTAINER_LISTS) objects(spec[list]).forEach(defaultContainer);
  for (const c of objects(spec.ephemeralContainers)) {
    setDefault(c, 'terminationMessagePath', '/dev/termination-log');
    setDefault(c, 'terminationMessagePolicy', 'File');
    if (typeof c.image === 'string') setDefault(c, 'imagePullPolicy', pullPolicyFor(c.image));
  }
  objects(spec.volumes).forEach(defaultVolume);
  if (spec.hostNetwork === true) {
    for (const list of CONTAINER_LISTS) {
      for (const c of objects(spec[list])) for (const p of objects(c.ports)) setDefault(p, 'hostPort', p.containerPort);
    }
  }
}

/** The defaults of a template (`spec.template` of workloads). */
export function defaultTemplate(template: unknown): void {
  const t = asObj(template);
  if (t && isObject(t.spec)) defaultPodSpec(t.spec);
}

/** Requests default to limits when only limits are given (Pods only). */
export function defaultRequestsFromLimits(spec: Obj): void {
  for (const list of CONTAINER_LISTS) {
    for (const c of objects(spec[list])) {
      const resources = asObj(c.resources);
      const limits = asObj(resources?.limits);
      if (!resources || !limits) continue;
      const requests = child(resources, 'requests');
      for (const [name, q] of Object.entries(limits)) setDefault(requests, name, q);
    }
  }
}

/** The QoS class of a pod from its containers' requests and limits. */
export function qosClass(spec: Obj): string {
  const containers = CONTAINER_LISTS.flatMap((l) => objects(spec[l]));
  const resources = containers.map((c) => asObj(c.resources) ?? {});
  const hasAny = resources.some((r) => Object.keys(asObj(r.requests) ?? {}).length || Object.keys(asObj(r.limits) ?? {}).length);
  if (!hasAny) return 'BestEffort';
  const guaranteed = resources.every((r) => {
    const limits = asObj(r.limits) ?? {};
    const requests = asObj(r.requests) ?? {};
    return ['cpu', 'memory'].every((n) => limits[n] !== undefined && parseQuantity(requests[n] ?? limits[n]) === parseQuantity(limits[n]));
  });
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

const ENV_NAME = /^[\x20-\x3c\x3e-\x7e]+$/;

function validatePorts(field: string, ports: unknown): Causes {
  const causes: Causes = [];
  const names = new Set<string>();
  objects(ports).forEach((p, i) => {
    const at = `${field}[${i}]`;
    if (typeof p.name === 'string' && p.name !== '') {
      causes.push(...portName(`${at}.name`, p.name));
      if (names.has(p.name)) causes.push(duplicate(`${at}.name`, p.name));
      names.add(p.name);
    }
    causes.push(...portNumber(`${at}.containerPort`, p.containerPort));
    if (p.hostPort !== undefined && p.hostPort !== 0) causes.push(...portNumber(`${at}.hostPort`, p.hostPort));
    causes.push(...protocol(`${at}.protocol`, p.protocol));
  });
  return causes;
}

function validateResources(field: string, resources: unknown): Causes {
  const limits = asObj(asObj(resources)?.limits) ?? {};
  const requests = asObj(asObj(resources)?.requests) ?? {};
  const causes: Causes = [];
  for (const [name, q] of Object.entries(requests)) {
    const limit = parseQuantity(limits[name]);
    const request = parseQuantity(q);
    if (request !== undefined && request < 0) causes.push(invalid(`${field}.requests[${name}]`, q, 'must be greater than or equal to 0'));
    if (limit !== undefined && request !== undefined && request > limit) {
      causes.push(invalid(`${field}.requests`, q, `must be less than or equal to ${name} limit of ${limits[name]}`));
    }
  }
  return causes;
}

function validateContainer(field: string, c: Obj, volumes: Set<string>): Causes {
  const causes: Causes = [];
  if (typeof c.name !== 'string' || c.name === '') causes.push(required(`${field}.name`));
  else causes.push(...dns1123Label(`${field}.name`, c.name));
  if (typeof c.image !== 'string' || c.image.trim() === '') causes.push(required(`${field}.image`));
  causes.push(...oneOf(`${field}.imagePullPolicy`, c.imagePullPolicy, PULL_POLICIES, true));
  causes.push(...oneOf(`${field}.terminationMessagePolicy`, c.terminationMessagePolicy, TERMINATION_MESSAGE_POLICIES, true));
  causes.push(...validatePorts(`${field}.ports`, c.ports));
  objects(c.env).forEach((e, i) => {
    if (typeof e.name !== 'string' || e.name === '') causes.push(required(`${field}.env[${i}].name`));
    else if (!ENV_NAME.test(e.name)) causes.push(invalid(`${field}.env[${i}].name`, e.name, "a valid environment variable name must consist only of printable ASCII characters other than '='"));
  });
  objects(c.volumeMounts).forEach((m, i) => {
    if (typeof m.name === 'string' && !volumes.has(m.name)) causes.push({ reason: 'FieldValueNotFound', message: `Not found: ${JSON.stringify(m.name)}`, field: `${field}.volumeMounts[${i}].name` });
    if (typeof m.mountPath !== 'string' || m.mountPath === '') causes.push(required(`${field}.volumeMounts[${i}].mountPath`));
  });
  causes.push(...validateResources(`${field}.resources`, c.resources));
  return causes;
}

function validateVolumes(field: string, volumes: unknown): { causes: Causes; names: Set<string> } {
  const causes: Causes = [];
  const names = new Set<string>();
  objects(volumes).forEach((v, i) => {
    const at = `${field}[${i}]`;
    if (typeof v.name !== 'string' || v.name === '') causes.push(required(`${at}.name`));
    else {
      causes.push(...dns1123Label(`${at}.name`, v.name));
      if (names.has(v.name)) causes.push(duplicate(`${at}.name`, v.name));
      names.add(v.name);
    }
    const sources = VOLUME_SOURCES.filter((s) => v[s] !== undefined);
    if (sources.length === 0) causes.push(required(at, 'must specify a volume type'));
    if (sources.length > 1) causes.push(forbidden(`${at}.${sources[1]}`, 'may not specify more than 1 volume type'));
  });
  return { causes, names };
}

function validateTolerations(field: string, tolerations: unknown): Causes {
  const causes: Causes = [];
  objects(tolerations).forEach((t, i) => {
    const at = `${field}[${i}]`;
    causes.push(...oneOf(`${at}.operator`, t.operator, TOLERATION_OPERATORS));
    causes.push(...oneOf(`${at}.effect`, t.effect, TAINT_EFFECTS));
    if (t.operator === 'Exists' && t.value) causes.push(invalid(`${at}.operator`, t.operator, 'value must be empty when `operator` is \'Exists\''));
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') causes.push(invalid(`${at}.effect`, t.effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
  });
  return causes;
}

/**
 * The rules of a pod spec at `field` (`spec` of a Pod, `spec.template.spec` of a
 * workload); `claimVolumes` are volumes the workload adds (StatefulSet claim templates).
 */
export function validatePodSpec(field: string, spec: unknown, claimVolumes: string[] = []): Causes {
  const s = asObj(spec);
  if (!s) return [required(field)];
  const { causes, names: volumes } = validateVolumes(`${field}.volumes`, s.volumes);
  for (const name of claimVolumes) volumes.add(name);
  if (asList(s.containers).length === 0) causes.push(required(`${field}.containers`));
  const seen = new Set<string>();
  for (const list of CONTAINER_LISTS) {
    objects(s[list]).forEach((c, i) => {
      causes.push(...validateContainer(`${field}.${list}[${i}]`, c, volumes));
      causes.push(...containerCauses(`${field}.${list}[${i}]`, c, list === 'initContainers', s.hostNetwork === true));
      if (typeof c.name === 'string' && c.name) {
        if (seen.has(c.name)) causes.push(duplicate(`${field}.${list}[${i}].name`, c.name));
        seen.add(c.name);
      }
    });
  }
  causes.push(...oneOf(`${field}.restartPolicy`, s.restartPolicy, RESTART_POLICIES, true));
  causes.push(...oneOf(`${field}.dnsPolicy`, s.dnsPolicy, DNS_POLICIES, true));
  causes.push(...nonNegative(`${field}.terminationGracePeriodSeconds`, s.terminationGracePeriodSeconds));
  if (typeof s.activeDeadlineSeconds === 'number' && s.activeDeadlineSeconds < 1) {
    causes.push(invalid(`${field}.activeDeadlineSeconds`, s.activeDeadlineSeconds, 'must be between 1 and 2147483647, inclusive'));
  }
  causes.push(...labelMap(`${field}.nodeSelector`, s.nodeSelector));
  causes.push(...validateTolerations(`${field}.tolerations`, s.tolerations));
  if (typeof s.serviceAccountName === 'string' && s.serviceAccountName) causes.push(...dns1123Subdomain(`${field}.serviceAccountName`, s.serviceAccountName));
  if (typeof s.hostname === 'string' && s.hostname) causes.push(...dns1123Label(`${field}.hostname`, s.hostname));
  if (typeof s.subdomain === 'string' && s.subdomain) causes.push(...dns1123Label(`${field}.subdomain`, s.subdomain));
  causes.push(...securityContextCauses(`${field}.securityContext`, s.securityContext), ...dnsCauses(field, s), ...schedulingCauses(field, s));
  return causes;
}

/** A template (`spec.template`): labels and annotations of its metadata, then its pod spec. */
export function validateTemplate(field: string, template: unknown, allowedRestartPolicies?: string[], claimVolumes: string[] = []): Causes {
  const t = asObj(template);
  if (!t) return [required(field)];
  const meta = asObj(t.metadata) ?? {};
  const causes = [...labelMap(`${field}.metadata.labels`, meta.labels), ...validatePodSpec(`${field}.spec`, t.spec, claimVolumes)];
  const restartPolicy = str(asObj(t.spec)?.restartPolicy);
  if (allowedRestartPolicies && restartPolicy && !allowedRestartPolicies.includes(restartPolicy)) {
    causes.push(notSupported(`${field}.spec.restartPolicy`, restartPolicy, allowedRestartPolicies));
  }
  return causes;
}

/** Workloads that keep pods running: restartPolicy Always, no activeDeadlineSeconds. */
export function validateServingTemplate(field: string, template: unknown, kind: string, claimVolumes: string[] = []): Causes {
  const causes = validateTemplate(field, template, ['Always'], claimVolumes);
  if (asObj(asObj(template)?.spec)?.activeDeadlineSeconds !== undefined) {
    causes.push(forbidden(`${field}.spec.activeDeadlineSeconds`, `activeDeadlineSeconds in ${kind} is not Supported`));
  }
  return causes;
}

const POD_UPDATE_RULE = 'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** A pod's spec may change only its images, activeDeadlineSeconds, added tolerations and removed scheduling gates. */
export function validatePodSpecUpdate(spec: unknown, oldSpec: unknown): Causes {
  const next = asObj(spec) ?? {};
  const allowed = clone(asObj(oldSpec) ?? {});
  for (const list of [...CONTAINER_LISTS, 'ephemeralContainers']) {
    objects(allowed[list]).forEach((c, i) => { const image = asObj(asList(next[list])[i])?.image; if (image !== undefined) c.image = image; });
  }
  allowed.activeDeadlineSeconds = next.activeDeadlineSeconds;
  const oldTolerations = asList(allowed.tolerations);
  if (asList(next.tolerations).length >= oldTolerations.length && oldTolerations.every((t, i) => deepEqual(t, asList(next.tolerations)[i]))) {
    allowed.tolerations = next.tolerations;
  }
  if (asList(next.schedulingGates).every((g) => asList(allowed.schedulingGates).some((o) => deepEqual(o, g)))) allowed.schedulingGates = next.schedulingGates;
  if (typeof allowed.terminationGracePeriodSeconds === 'number' && allowed.terminationGracePeriodSeconds < 0 && next.terminationGracePeriodSeconds === 1) {
    allowed.terminationGracePeriodSeconds = 1;
  }
  return deepEqual(allowed, next) ? [] : [forbidden('spec', POD_UPDATE_RULE)];
}
