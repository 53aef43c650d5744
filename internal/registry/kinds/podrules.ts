// The rules of a pod spec beyond names and shapes: probes and lifecycle
// handlers, sidecar init containers, security contexts, DNS configuration,
// and scheduling (affinity, topology spread). Messages are the platform's.
import {
  duplicate, forbidden, invalid, nonNegative, notSupported, oneOf, portNumber, portNumberOrName, qualifiedName, required, type Causes,
} from '../causes.js';
import { DOMAIN } from '../../names/index.js';
import { isIP } from '../net.js';
import { parseQuantity } from '../quantity.js';
import { asList, asObj, objects, type Obj } from '../values.js';

const PROBE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'];
const LIFECYCLE_HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'sleep'];
const NODE_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];
const SPREAD_ACTIONS = ['DoNotSchedule', 'ScheduleAnyway'];
const PROFILE_TYPES = ['RuntimeDefault', 'Unconfined', 'Localhost'];
const MAX_ID = 2147483647;
const MAX_NAMESERVERS = 3;
const MAX_SEARCHES = 32;

const CONTAINER_RESOURCES = ['cpu', 'memory', 'ephemeral-storage'];
const HUGE_PAGES = /^hugepages-/;

/** Names without a domain, and names in the platform's domain, are the platform's own resources. */
const isNative = (name: string) => !name.includes('/') || name.includes(`${DOMAIN}/`);
/** Extended resources and huge pages cannot be overcommitted: their request is their limit. */
const isOvercommitted = (name: string) => isNative(name) && !HUGE_PAGES.test(name);

function resourceNameCauses(field: string, name: string): Causes {
  if (!isNative(name)) return qualifiedName(field, name);
  if (CONTAINER_RESOURCES.includes(name) || HUGE_PAGES.test(name)) return [];
  return [invalid(field, name, 'must be a standard resource for containers')];
}

/**
 * Resource names of a container's limits and requests, whole numbers for
 * extended resources, equal request and limit where overcommit is not allowed,
 * and cpu or memory beside huge pages.
 */
export function resourceCauses(field: string, resources: unknown): Causes {
  const limits = asObj(asObj(resources)?.limits) ?? {};
  const requests = asObj(asObj(resources)?.requests) ?? {};
  const causes: Causes = [];
  for (const [kind, list] of [['limits', limits], ['requests', requests]] as const) {
    for (const [name, q] of Object.entries(list)) {
      const at = `${field}.${kind}[${name}]`;
      causes.push(...resourceNameCauses(at, name));
      const n = parseQuantity(q);
      if (!isNative(name) && n !== undefined && !Number.isInteger(n)) causes.push(invalid(at, q, 'must be an integer'));
    }
  }
  for (const [name, q] of Object.entries(requests)) {
    if (isOvercommitted(name)) continue;
    if (limits[name] === undefined) causes.push(required(`${field}.limits`, 'Limit must be set for non overcommitable resources'));
    else if (parseQuantity(q) !== parseQuantity(limits[name])) {
      causes.push(invalid(`${field}.requests[${name}]`, q, `must be equal to ${name} limit of ${limits[name]}`));
    }
  }
  const names = [...Object.keys(limits), ...Object.keys(requests)];
  if (names.some((n) => HUGE_PAGES.test(n)) && !names.some((n) => n === 'cpu' || n === 'memory')) {
    causes.push(forbidden(field, 'HugePages require cpu or memory'));
  }
  return causes;
}

/** Exactly one handler of a probe or lifecycle hook, and its port. */
function handlerCauses(field: string, handler: Obj, kinds: readonly string[]): Causes {
  const set = kinds.filter((k) => handler[k] !== undefined);
  if (set.length === 0) return [required(field, 'must specify a handler type')];
  const causes: Causes = set.slice(1).map((k) => forbidden(`${field}.${k}`, 'may not specify more than 1 handler type'));
  for (const k of ['httpGet', 'tcpSocket']) {
    const action = asObj(handler[k]);
    if (action) causes.push(...portNumberOrName(`${field}.${k}.port`, action.port));
  }
  const grpc = asObj(handler.grpc);
  if (grpc) causes.push(...portNumber(`${field}.grpc.port`, grpc.port));
  const httpGet = asObj(handler.httpGet);
  if (httpGet) causes.push(...oneOf(`${field}.httpGet.scheme`, httpGet.scheme, ['HTTP', 'HTTPS']));
  return causes;
}

function probeCauses(field: string, probe: unknown, mustSucceedOnce: boolean): Causes {
  const p = asObj(probe);
  if (!p) return [];
  const causes = handlerCauses(field, p, PROBE_HANDLERS);
  for (const n of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) {
    causes.push(...nonNegative(`${field}.${n}`, p[n]));
  }
  if (mustSucceedOnce && p.successThreshold !== undefined && p.successThreshold !== 1) causes.push(invalid(`${field}.successThreshold`, p.successThreshold, 'must be 1'));
  if (typeof p.terminationGracePeriodSeconds === 'number' && p.terminationGracePeriodSeconds <= 0) {
    causes.push(invalid(`${field}.terminationGracePeriodSeconds`, p.terminationGracePeriodSeconds, 'must be greater than 0'));
  }
  return causes;
}

function lifecycleCauses(field: string, lifecycle: unknown): Causes {
  const l = asObj(lifecycle);
  if (!l) return [];
  return ['postStart', 'preStop'].flatMap((hook) => {
    const h = asObj(l[hook]);
    return h ? handlerCauses(`${field}.${hook}`, h, LIFECYCLE_HANDLERS) : [];
  });
}

function idCauses(field: string, value: unknown): Causes {
  if (typeof value !== 'number' || (value >= 0 && value <= MAX_ID)) return [];
  return [invalid(field, value, `must be between 0 and ${MAX_ID}, inclusive`)];
}

/** A seccomp or AppArmor profile: a known type, and a localhost profile exactly when the type is Localhost. */
function profileCauses(field: string, profile: unknown, kind: string): Causes {
  const p = asObj(profile);
  if (!p) return [];
  const causes = oneOf(`${field}.type`, p.type, PROFILE_TYPES, true);
  if (p.type === 'Localhost' && !p.localhostProfile) causes.push(required(`${field}.localhostProfile`, `must be set when ${kind} type is Localhost`));
  if (p.type !== 'Localhost' && p.localhostProfile !== undefined) {
    causes.push(invalid(`${field}.localhostProfile`, p.localhostProfile, `can only be set when ${kind} type is Localhost`));
  }
  return causes;
}

/** A pod's or a container's security context. */
export function securityContextCauses(field: string, context: unknown): Causes {
  const sc = asObj(context);
  if (!sc) return [];
  return [
    ...idCauses(`${field}.runAsUser`, sc.runAsUser), ...idCauses(`${field}.runAsGroup`, sc.runAsGroup), ...idCauses(`${field}.fsGroup`, sc.fsGroup),
    ...asList(sc.supplementalGroups).flatMap((g, i) => idCauses(`${field}.supplementalGroups[${i}]`, g)),
    ...profileCauses(`${field}.seccompProfile`, sc.seccompProfile, 'seccomp'),
    ...profileCauses(`${field}.appArmorProfile`, sc.appArmorProfile, 'AppArmor'),
  ];
}

/** What a container's place (init, sidecar, main) allows, and its probes, hooks, mounts and security. */
export function containerCauses(field: string, c: Obj, init: boolean, hostNetwork: boolean): Causes {
  const sidecar = init && c.restartPolicy === 'Always';
  const causes: Causes = [];
  if (init && c.restartPolicy !== undefined && !sidecar) causes.push(notSupported(`${field}.restartPolicy`, c.restartPolicy, ['Always']));
  if (!init && c.restartPolicy !== undefined) causes.push(forbidden(`${field}.restartPolicy`, 'may not be set for non-init containers'));
  if (init && !sidecar) {
    for (const f of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
      if (c[f] !== undefined) causes.push(forbidden(`${field}.${f}`, 'may not be set for init containers without restartPolicy=Always'));
    }
  } else {
    causes.push(...probeCauses(`${field}.livenessProbe`, c.livenessProbe, true), ...probeCauses(`${field}.readinessProbe`, c.readinessProbe, false),
      ...probeCauses(`${field}.startupProbe`, c.startupProbe, true), ...lifecycleCauses(`${field}.lifecycle`, c.lifecycle));
  }
  const paths = new Set<string>();
  objects(c.volumeMounts).forEach((m, i) => {
    if (typeof m.mountPath !== 'string' || m.mountPath === '') return;
    if (paths.has(m.mountPath)) causes.push(invalid(`${field}.volumeMounts[${i}].mountPath`, m.mountPath, 'must be unique'));
    paths.add(m.mountPath);
  });
  if (hostNetwork) {
    objects(c.ports).forEach((p, i) => {
      if (p.hostPort !== undefined && p.hostPort !== 0 && p.hostPort !== p.containerPort) {
        causes.push(invalid(`${field}.ports[${i}].hostPort`, p.hostPort, 'must match `containerPort` when `hostNetwork` is true'));
      }
    });
  }
  return [...causes, ...securityContextCauses(`${field}.securityContext`, c.securityContext), ...resourceCauses(`${field}.resources`, c.resources)];
}

/** `dnsPolicy: None` takes its nameservers from dnsConfig; at most 3 of them, IP addresses, and 32 search domains. */
export function dnsCauses(field: string, spec: Obj): Causes {
  const config = asObj(spec.dnsConfig);
  const causes: Causes = [];
  if (spec.dnsPolicy === 'None' && !config) return [required(`${field}.dnsConfig`, 'must provide `dnsConfig` when `dnsPolicy` is None')];
  if (!config) return [];
  const servers = asList(config.nameservers);
  if (spec.dnsPolicy === 'None' && servers.length === 0) {
    causes.push(required(`${field}.dnsConfig.nameservers`, 'must provide at least one DNS nameserver when `dnsPolicy` is None'));
  }
  if (servers.length > MAX_NAMESERVERS) causes.push(invalid(`${field}.dnsConfig.nameservers`, servers, `must not have more than ${MAX_NAMESERVERS} nameservers`));
  servers.forEach((s, i) => { if (!isIP(String(s))) causes.push(invalid(`${field}.dnsConfig.nameservers[${i}]`, s, 'must be a valid IP address')); });
  const searches = asList(config.searches);
  if (searches.length > MAX_SEARCHES) causes.push(invalid(`${field}.dnsConfig.searches`, searches, `must not have more than ${MAX_SEARCHES} search paths`));
  return causes;
}

function nodeRequirementCauses(field: string, r: Obj): Causes {
  const causes = oneOf(`${field}.operator`, r.operator, NODE_OPERATORS, true);
  const values = asList(r.values);
  if ((r.operator === 'In' || r.operator === 'NotIn') && values.length === 0) {
    causes.push(required(`${field}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
  }
  if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && values.length > 0) {
    causes.push(forbidden(`${field}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  }
  if ((r.operator === 'Gt' || r.operator === 'Lt') && (values.length !== 1 || !/^-?\d+$/.test(String(values[0])))) {
    causes.push(required(`${field}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
  }
  return causes;
}

function nodeTermCauses(field: string, term: Obj): Causes {
  return [
    ...objects(term.matchExpressions).flatMap((r, i) => [
      ...nodeRequirementCauses(`${field}.matchExpressions[${i}]`, r),
      ...(typeof r.key === 'string' ? qualifiedName(`${field}.matchExpressions[${i}].key`, r.key) : [required(`${field}.matchExpressions[${i}].key`)]),
    ]),
    ...objects(term.matchFields).flatMap((r, i) => nodeRequirementCauses(`${field}.matchFields[${i}]`, r)),
  ];
}

const weightCauses = (field: string, weight: unknown): Causes =>
  typeof weight === 'number' && weight >= 1 && weight <= 100 ? [] : [invalid(field, weight, 'must be in the range 1-100')];

function podTermCauses(field: string, term: Obj): Causes {
  if (typeof term.topologyKey !== 'string' || term.topologyKey === '') return [required(`${field}.topologyKey`, 'can not be empty')];
  return qualifiedName(`${field}.topologyKey`, term.topologyKey);
}

function podAffinityCauses(field: string, affinity: unknown): Causes {
  const a = asObj(affinity);
  if (!a) return [];
  return [
    ...objects(a.requiredDuringSchedulingIgnoredDuringExecution).flatMap((t, i) => podTermCauses(`${field}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`, t)),
    ...objects(a.preferredDuringSchedulingIgnoredDuringExecution).flatMap((w, i) => {
      const at = `${field}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
      return [...weightCauses(`${at}.weight`, w.weight), ...podTermCauses(`${at}.podAffinityTerm`, asObj(w.podAffinityTerm) ?? {})];
    }),
  ];
}

function nodeAffinityCauses(field: string, affinity: unknown): Causes {
  const a = asObj(affinity);
  if (!a) return [];
  const causes: Causes = [];
  const requiredSelector = asObj(a.requiredDuringSchedulingIgnoredDuringExecution);
  if (requiredSelector) {
    const at = `${field}.requiredDuringSchedulingIgnoredDuringExecution`;
    const terms = objects(requiredSelector.nodeSelectorTerms);
    if (terms.length === 0) causes.push(required(`${at}.nodeSelectorTerms`, 'must have at least one node selector term'));
    terms.forEach((t, i) => causes.push(...nodeTermCauses(`${at}.nodeSelectorTerms[${i}]`, t)));
  }
  objects(a.preferredDuringSchedulingIgnoredDuringExecution).forEach((p, i) => {
    const at = `${field}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
    causes.push(...weightCauses(`${at}.weight`, p.weight), ...nodeTermCauses(`${at}.preference`, asObj(p.preference) ?? {}));
  });
  return causes;
}

function spreadCauses(field: string, constraints: unknown): Causes {
  const causes: Causes = [];
  const seen = new Set<string>();
  objects(constraints).forEach((c, i) => {
    const at = `${field}[${i}]`;
    if (typeof c.maxSkew !== 'number' || c.maxSkew <= 0) causes.push(invalid(`${at}.maxSkew`, c.maxSkew, 'must be greater than zero'));
    if (typeof c.topologyKey !== 'string' || c.topologyKey === '') causes.push(required(`${at}.topologyKey`, 'can not be empty'));
    causes.push(...oneOf(`${at}.whenUnsatisfiable`, c.whenUnsatisfiable, SPREAD_ACTIONS, true));
    if (typeof c.minDomains === 'number' && c.minDomains <= 0) causes.push(invalid(`${at}.minDomains`, c.minDomains, 'must be greater than 0'));
    const pair = `${c.topologyKey}/${c.whenUnsatisfiable}`;
    if (seen.has(pair)) causes.push(duplicate(`${at}.{topologyKey, whenUnsatisfiable}`, `{${c.topologyKey}, ${c.whenUnsatisfiable}}`));
    seen.add(pair);
  });
  return causes;
}

/** Affinity, anti-affinity and topology spread of a pod spec. */
export function schedulingCauses(field: string, spec: Obj): Causes {
  const affinity = asObj(spec.affinity) ?? {};
  return [
    ...nodeAffinityCauses(`${field}.affinity.nodeAffinity`, affinity.nodeAffinity),
    ...podAffinityCauses(`${field}.affinity.podAffinity`, affinity.podAffinity),
    ...podAffinityCauses(`${field}.affinity.podAntiAffinity`, affinity.podAntiAffinity),
    ...spreadCauses(`${field}.topologySpreadConstraints`, spec.topologySpreadConstraints),
  ];
}
