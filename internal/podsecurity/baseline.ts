// The baseline checks of the Pod Security Standards (kube-apiserver 1.34),
// with the platform's reasons and details word for word.
import {
  APPARMOR_CONTAINER_ANNOTATION_PREFIX, SECCOMP_CONTAINER_ANNOTATION_PREFIX, SECCOMP_POD_ANNOTATION,
} from '../names/index.js';
import {
  ALLOWED, containers, containersPhrase, joinQuote, nameOf, pluralize, present, refused, sortedSet, volumes,
  type Check, type CheckResult, type Json,
} from './check.js';

const securityContext = (c: Json): Json | undefined => c.securityContext ?? undefined;

function privileged(_m: Json, spec: Json): CheckResult {
  const bad = containers(spec).filter((c) => securityContext(c)?.privileged === true).map(nameOf);
  return bad.length ? refused('privileged', `${containersPhrase(bad)} must not set securityContext.privileged=true`) : ALLOWED;
}

function hostNamespaces(_m: Json, spec: Json): CheckResult {
  const set = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((f) => spec[f] === true).map((f) => `${f}=true`);
  return set.length ? refused('host namespaces', set.join(', ')) : ALLOWED;
}

export const HOST_PATH_VOLUMES = 'hostPathVolumes';
function hostPathVolumes(_m: Json, spec: Json): CheckResult {
  const bad = volumes(spec).filter((v) => present(v.hostPath)).map(nameOf);
  return bad.length ? refused('hostPath volumes', `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)}`) : ALLOWED;
}

function hostPorts(_m: Json, spec: Json): CheckResult {
  const bad: string[] = [];
  const ports = new Set<string>();
  for (const c of containers(spec)) {
    const used = (Array.isArray(c.ports) ? c.ports : []).map((p: Json) => Number(p?.hostPort ?? 0)).filter((p: number) => p !== 0);
    if (!used.length) continue;
    bad.push(nameOf(c));
    for (const p of used) ports.add(String(p));
  }
  if (!bad.length) return ALLOWED;
  return refused('hostPort', `${containersPhrase(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', ports.size)} ${sortedSet(ports).join(', ')}`);
}

/** The host a probe or lifecycle handler names, if any. */
function handlerHosts(handler: Json | undefined): string[] {
  if (!handler) return [];
  return [handler.httpGet?.host, handler.tcpSocket?.host].filter((h): h is string => typeof h === 'string' && h !== '');
}

function hostProbesAndHostLifecycle(_m: Json, spec: Json): CheckResult {
  const bad = new Set<string>();
  const hosts = new Set<string>();
  for (const c of containers(spec)) {
    const found = [c.livenessProbe, c.readinessProbe, c.startupProbe, c.lifecycle?.postStart, c.lifecycle?.preStop].flatMap(handlerHosts);
    if (!found.length) continue;
    bad.add(nameOf(c));
    for (const h of found) hosts.add(h);
  }
  if (!bad.size) return ALLOWED;
  return refused('probe or lifecycle host', `${containersPhrase(sortedSet(bad))} ${pluralize('uses', 'use', bad.size)} `
    + `${pluralize('probe or lifecycle host', 'probe or lifecycle hosts', hosts.size)} ${joinQuote(sortedSet(hosts))}`);
}

const DEFAULT_CAPABILITIES = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD',
  'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);

export const CAPABILITIES_BASELINE = 'capabilities_baseline';
function capabilitiesBaseline(_m: Json, spec: Json): CheckResult {
  const bad: string[] = [];
  const caps = new Set<string>();
  for (const c of containers(spec)) {
    const added: unknown[] = securityContext(c)?.capabilities?.add ?? [];
    const extra = (Array.isArray(added) ? added : []).map(String).filter((cap) => !DEFAULT_CAPABILITIES.has(cap));
    if (!extra.length) continue;
    bad.push(nameOf(c));
    for (const cap of extra) caps.add(cap);
  }
  return bad.length
    ? refused('non-default capabilities', `${containersPhrase(bad)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`)
    : ALLOWED;
}

function procMount(_m: Json, spec: Json): CheckResult {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const c of containers(spec)) {
    const mount = securityContext(c)?.procMount;
    if (!present(mount) || mount === 'Default') continue;
    bad.push(nameOf(c));
    types.add(String(mount));
  }
  return bad.length ? refused('procMount', `${containersPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`) : ALLOWED;
}

const SYSCTLS_1_0 = ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start'];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [...SYSCTLS_1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes'];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

const sysctls = (allowed: string[]) => (_m: Json, spec: Json): CheckResult => {
  const given: Json[] = Array.isArray(spec.securityContext?.sysctls) ? spec.securityContext.sysctls : [];
  const bad = given.map((s) => String(s?.name ?? '')).filter((n) => !allowed.includes(n));
  return bad.length ? refused('forbidden sysctls', bad.join(', ')) : ALLOWED;
};

/** Who sets a forbidden value: `pod`, `containers "a", "b"`, ... joined with "and". */
function setters(pod: boolean, badContainers: string[], more: string[] = []): string[] {
  return [...(pod ? ['pod'] : []), ...(badContainers.length ? [containersPhrase(badContainers)] : []), ...more];
}

const APPARMOR_TYPES = new Set(['RuntimeDefault', 'Localhost']);
const allowedAppArmorAnnotation = (v: string): boolean => v === '' || v === 'runtime/default' || v.startsWith('localhost/');
const annotationPrefixes = (known: { own: string; upstream: string }): string[] => [known.own, known.upstream];

function appArmorProfile(metadata: Json, spec: Json): CheckResult {
  const values = new Set<string>();
  const podType = spec.securityContext?.appArmorProfile?.type;
  const podBad = present(spec.securityContext?.appArmorProfile) && !APPARMOR_TYPES.has(podType);
  if (podBad) values.add(String(podType ?? ''));
  const bad: string[] = [];
  for (const c of containers(spec)) {
    const profile = securityContext(c)?.appArmorProfile;
    if (!present(profile) || APPARMOR_TYPES.has(profile.type)) continue;
    bad.push(nameOf(c));
    values.add(String(profile.type ?? ''));
  }
  const annotations: Record<string, string> = metadata.annotations ?? {};
  const prefixes = annotationPrefixes(APPARMOR_CONTAINER_ANNOTATION_PREFIX);
  const badAnnotations = Object.entries(annotations)
    .filter(([k, v]) => prefixes.some((p) => k.startsWith(p)) && !allowedAppArmorAnnotation(String(v)))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`).sort();
  const who = setters(podBad, bad, badAnnotations.length ? [pluralize('annotation', 'annotations', badAnnotations.length)] : []);
  if (!who.length) return ALLOWED;
  const listed = [...sortedSet(values), ...badAnnotations];
  return refused(pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', listed.length),
    `${who.join(' and ')} must not set AppArmor profile type to ${joinQuote(listed)}`);
}

const SELINUX_TYPES_1_0 = ['', 'container_t', 'container_init_t', 'container_kvm_t'];
const SELINUX_TYPES_1_31 = [...SELINUX_TYPES_1_0, 'container_engine_t'];

const seLinuxOptions = (allowedTypes: string[]) => (_m: Json, spec: Json): CheckResult => {
  const badTypes = new Set<string>();
  let user = false;
  let role = false;
  const valid = (opts: Json): boolean => {
    let ok = true;
    const type = typeof opts.type === 'string' ? opts.type : '';
    if (!allowedTypes.includes(type)) { ok = false; badTypes.add(type); }
    if (opts.user) { ok = false; user = true; }
    if (opts.role) { ok = false; role = true; }
    return ok;
  };
  const podOpts = spec.securityContext?.seLinuxOptions;
  const podBad = present(podOpts) && !valid(podOpts);
  const bad = containers(spec).filter((c) => present(securityContext(c)?.seLinuxOptions) && !valid(c.securityContext.seLinuxOptions)).map(nameOf);
  const who = setters(podBad, bad);
  if (!who.length) return ALLOWED;
  const data = [
    ...(badTypes.size ? [`${pluralize('type', 'types', badTypes.size)} ${joinQuote(sortedSet(badTypes))}`] : []),
    ...(user ? ['user may not be set'] : []),
    ...(role ? ['role may not be set'] : []),
  ];
  return refused('seLinuxOptions', `${who.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`);
};

export const SECCOMP_BASELINE = 'seccompProfile_baseline';
export const validSeccompType = (t: unknown): boolean => t === 'Localhost' || t === 'RuntimeDefault';
const validSeccompAnnotation = (v: string): boolean => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');

/** Before v1.19 seccomp was chosen by annotations. */
function seccompBaseline_1_0(metadata: Json, spec: Json): CheckResult {
  const annotations: Record<string, string> = metadata.annotations ?? {};
  const keys = [
    ...annotationPrefixes(SECCOMP_POD_ANNOTATION),
    ...containers(spec).flatMap((c) => annotationPrefixes(SECCOMP_CONTAINER_ANNOTATION_PREFIX).map((p) => `${p}${nameOf(c)}`)),
  ];
  const bad = sortedSet(keys.filter((k) => k in annotations && !validSeccompAnnotation(String(annotations[k])))
    .map((k) => `${k}=${JSON.stringify(annotations[k])}`));
  return bad.length ? refused('seccompProfile', `forbidden ${pluralize('annotation', 'annotations', bad.length)} ${bad.join(', ')}`) : ALLOWED;
}

function seccompBaseline_1_19(_m: Json, spec: Json): CheckResult {
  const values = new Set<string>();
  const podProfile = spec.securityContext?.seccompProfile;
  const podBad = present(podProfile) && !validSeccompType(podProfile.type);
  if (podBad) values.add(String(podProfile.type ?? ''));
  const bad: string[] = [];
  for (const c of containers(spec)) {
    const profile = securityContext(c)?.seccompProfile;
    if (!present(profile) || validSeccompType(profile.type)) continue;
    bad.push(nameOf(c));
    values.add(String(profile.type ?? ''));
  }
  const who = setters(podBad, bad);
  return who.length
    ? refused('seccompProfile', `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`)
    : ALLOWED;
}

function windowsHostProcess(_m: Json, spec: Json): CheckResult {
  const bad = containers(spec).filter((c) => securityContext(c)?.windowsOptions?.hostProcess === true).map(nameOf);
  const who = setters(spec.securityContext?.windowsOptions?.hostProcess === true, bad);
  return who.length ? refused('hostProcess', `${who.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`) : ALLOWED;
}

const once = (id: string, minimum: number, check: Check['versions'][number]['check']): Check =>
  ({ id, level: 'baseline', versions: [{ minimum, check }] });

export const BASELINE_CHECKS: Check[] = [
  once('privileged', 0, privileged),
  once('hostNamespaces', 0, hostNamespaces),
  once(HOST_PATH_VOLUMES, 0, hostPathVolumes),
  once('hostPorts', 0, hostPorts),
  once('hostProbesAndHostLifecycle', 34, hostProbesAndHostLifecycle),
  once(CAPABILITIES_BASELINE, 0, capabilitiesBaseline),
  once('procMount', 0, procMount),
  {
    id: 'sysctls', level: 'baseline', versions: [
      { minimum: 0, check: sysctls(SYSCTLS_1_0) }, { minimum: 27, check: sysctls(SYSCTLS_1_27) },
      { minimum: 29, check: sysctls(SYSCTLS_1_29) }, { minimum: 32, check: sysctls(SYSCTLS_1_32) },
    ],
  },
  once('appArmorProfile', 0, appArmorProfile),
  {
    id: 'seLinuxOptions', level: 'baseline',
    versions: [{ minimum: 0, check: seLinuxOptions(SELINUX_TYPES_1_0) }, { minimum: 31, check: seLinuxOptions(SELINUX_TYPES_1_31) }],
  },
  { id: SECCOMP_BASELINE, level: 'baseline', versions: [{ minimum: 0, check: seccompBaseline_1_0 }, { minimum: 19, check: seccompBaseline_1_19 }] },
  once('windowsHostProcess', 0, windowsHostProcess),
];
