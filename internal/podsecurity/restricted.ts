// The restricted checks of the Pod Security Standards (kube-apiserver 1.34),
// evaluated with the baseline ones they do not replace.
import { CAPABILITIES_BASELINE, HOST_PATH_VOLUMES, SECCOMP_BASELINE, validSeccompType } from './baseline.js';
import {
  ALLOWED, containers, containersPhrase, joinQuote, nameOf, pluralize, present, refused, sortedSet, volumes, windowsPod,
  type Check, type CheckFn, type CheckResult, type Json,
} from './check.js';

/** From v1.25 a Windows pod passes the checks Windows cannot honour. */
const exceptWindows = (check: CheckFn): CheckFn => (metadata, spec) => (windowsPod(spec) ? ALLOWED : check(metadata, spec));

function allowPrivilegeEscalation(_m: Json, spec: Json): CheckResult {
  const bad = containers(spec).filter((c) => c.securityContext?.allowPrivilegeEscalation !== false).map(nameOf);
  return bad.length
    ? refused('allowPrivilegeEscalation != false', `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`)
    : ALLOWED;
}

function capabilitiesRestricted(_m: Json, spec: Json): CheckResult {
  const missingDropAll: string[] = [];
  const adding: string[] = [];
  const forbidden = new Set<string>();
  for (const c of containers(spec)) {
    const caps = c.securityContext?.capabilities;
    if (!present(caps)) {
      missingDropAll.push(nameOf(c));
      continue;
    }
    const drop: unknown[] = Array.isArray(caps.drop) ? caps.drop : [];
    if (!drop.includes('ALL')) missingDropAll.push(nameOf(c));
    const extra = (Array.isArray(caps.add) ? caps.add : []).map(String).filter((cap: string) => cap !== 'NET_BIND_SERVICE');
    if (!extra.length) continue;
    adding.push(nameOf(c));
    for (const cap of extra) forbidden.add(cap);
  }
  const details = [
    ...(missingDropAll.length ? [`${containersPhrase(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`] : []),
    ...(adding.length ? [`${containersPhrase(adding)} must not include ${joinQuote(sortedSet(forbidden))} in securityContext.capabilities.add`] : []),
  ];
  return details.length ? refused('unrestricted capabilities', details.join('; ')) : ALLOWED;
}

const ALLOWED_VOLUME_SOURCES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret'];
const RESTRICTED_VOLUME_SOURCES = ['hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd',
  'flexVolume', 'cinder', 'cephfs', 'flocker', 'fc', 'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk',
  'portworxVolume', 'scaleIO', 'storageos'];

function restrictedVolumes(_m: Json, spec: Json): CheckResult {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const v of volumes(spec)) {
    if (ALLOWED_VOLUME_SOURCES.some((s) => present(v[s]))) continue;
    bad.push(nameOf(v));
    types.add(RESTRICTED_VOLUME_SOURCES.find((s) => present(v[s])) ?? 'unknown');
  }
  if (!bad.length) return ALLOWED;
  return refused('restricted volume types', `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} `
    + `${pluralize('restricted volume type', 'restricted volume types', types.size)} ${joinQuote(sortedSet(types))}`);
}

/** Who sets a forbidden value: `pod` and/or `containers "a", "b"`. */
const setters = (pod: boolean, bad: string[]): string[] => [...(pod ? ['pod'] : []), ...(bad.length ? [containersPhrase(bad)] : [])];

function runAsNonRoot(_m: Json, spec: Json): CheckResult {
  const podValue = spec.securityContext?.runAsNonRoot;
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const value = c.securityContext?.runAsNonRoot;
    if (present(value)) {
      if (value !== true) explicit.push(nameOf(c));
    } else if (podValue !== true) {
      implicit.push(nameOf(c));
    }
  }
  const who = setters(present(podValue) && podValue !== true, explicit);
  if (who.length) return refused('runAsNonRoot != true', `${who.join(' and ')} must not set securityContext.runAsNonRoot=false`);
  if (implicit.length) return refused('runAsNonRoot != true', `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true`);
  return ALLOWED;
}

function runAsUser(_m: Json, spec: Json): CheckResult {
  const bad = containers(spec).filter((c) => c.securityContext?.runAsUser === 0).map(nameOf);
  const who = setters(spec.securityContext?.runAsUser === 0, bad);
  return who.length ? refused('runAsUser=0', `${who.join(' and ')} must not set runAsUser=0`) : ALLOWED;
}

function seccompRestricted(_m: Json, spec: Json): CheckResult {
  const values = new Set<string>();
  const podProfile = spec.securityContext?.seccompProfile;
  const podBad = present(podProfile) && !validSeccompType(podProfile.type);
  if (podBad) values.add(String(podProfile.type ?? ''));
  const podSet = present(podProfile) && !podBad;
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const profile = c.securityContext?.seccompProfile;
    if (present(profile)) {
      if (validSeccompType(profile.type)) continue;
      explicit.push(nameOf(c));
      values.add(String(profile.type ?? ''));
    } else if (!podSet) {
      implicit.push(nameOf(c));
    }
  }
  const who = setters(podBad, explicit);
  if (who.length) return refused('seccompProfile', `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`);
  if (implicit.length) {
    return refused('seccompProfile', `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`);
  }
  return ALLOWED;
}

export const RESTRICTED_CHECKS: Check[] = [
  {
    id: 'allowPrivilegeEscalation', level: 'restricted',
    versions: [{ minimum: 8, check: allowPrivilegeEscalation }, { minimum: 25, check: exceptWindows(allowPrivilegeEscalation) }],
  },
  {
    id: 'capabilities_restricted', level: 'restricted', versions: [
      { minimum: 22, check: capabilitiesRestricted, overrides: [CAPABILITIES_BASELINE] },
      { minimum: 25, check: exceptWindows(capabilitiesRestricted), overrides: [CAPABILITIES_BASELINE] },
    ],
  },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ minimum: 0, check: restrictedVolumes, overrides: [HOST_PATH_VOLUMES] }] },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ minimum: 0, check: runAsNonRoot }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ minimum: 23, check: runAsUser }] },
  {
    id: 'seccompProfile_restricted', level: 'restricted', versions: [
      { minimum: 19, check: seccompRestricted, overrides: [SECCOMP_BASELINE] },
      { minimum: 25, check: exceptWindows(seccompRestricted), overrides: [SECCOMP_BASELINE] },
    ],
  },
];
