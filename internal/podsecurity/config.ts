// The PodSecurity plugin's configuration (PodSecurityConfiguration,
// `pod-security.admission.config.<domain>/v1`, v1beta1 or v1alpha1): the policy
// of namespaces without labels, and the users, runtime classes and namespaces
// exempt from it. Read strictly and validated as kube-apiserver does.
import { isObject } from '../apimachinery/meta.js';
import { dns1123Label, dns1123Subdomain } from '../apimachinery/validation.js';
import { GROUP_POD_SECURITY_CONFIG, upstreamGroup } from '../names/index.js';
import { LEVEL_ERROR, VERSION_ERROR, parseLevel, parseVersion, type Level, type Policy, type Version } from './policy.js';

export const POD_SECURITY_CONFIGURATION = 'PodSecurityConfiguration';
export const POD_SECURITY_CONFIG_VERSIONS: readonly string[] = ['v1', 'v1beta1', 'v1alpha1']
  .flatMap((v) => [`${GROUP_POD_SECURITY_CONFIG}/${v}`, `${upstreamGroup(GROUP_POD_SECURITY_CONFIG)}/${v}`]);

export interface PodSecurityConfiguration {
  defaults: Policy;
  exemptions: { usernames: string[]; namespaces: string[]; runtimeClasses: string[] };
}

export class PodSecurityConfigError extends Error {}

const DEFAULT_KEYS = ['enforce', 'enforce-version', 'audit', 'audit-version', 'warn', 'warn-version'];
const EXEMPTION_KEYS = ['usernames', 'namespaces', 'runtimeClasses'] as const;

function unknownFields(obj: Record<string, unknown>, known: readonly string[], path: string, errors: string[]): void {
  for (const key of Object.keys(obj)) if (!known.includes(key)) errors.push(`unknown field "${path}${key}"`);
}

function strings(value: unknown, path: string, errors: string[]): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  errors.push(`${path}: expected a list of strings`);
  return [];
}

/** Invalid and duplicate entries of an exemption list. */
function checkList(values: string[], path: string, validate: (field: string, v: string) => string[], errors: string[]): void {
  const seen = new Set<string>();
  values.forEach((v, i) => {
    const problems = validate(`${path}[${i}]`, v);
    if (problems.length) errors.push(...problems);
    else if (seen.has(v)) errors.push(`${path}[${i}]: Duplicate value: ${JSON.stringify(v)}`);
    seen.add(v);
  });
}

const causeText = (c: { field?: string; message?: string }) => `${c.field}: ${c.message}`;
const namespaceName = (field: string, v: string) => dns1123Label(field, v).map(causeText);
const runtimeClassName = (field: string, v: string) => dns1123Subdomain(field, v).map(causeText);
const username = (field: string, v: string) => (v === '' ? [`${field}: Invalid value: "": username must not be empty`] : []);

function defaultsOf(raw: Record<string, unknown>, errors: string[]): Policy {
  const text = (key: string, fallback: string): string => {
    const v = raw[key];
    if (v === undefined || v === null || v === '') return fallback;
    if (typeof v === 'string') return v;
    errors.push(`defaults.${key}: expected a string`);
    return fallback;
  };
  const level = (key: string): Level => {
    const v = text(key, 'privileged');
    const parsed = parseLevel(v);
    if (!parsed) errors.push(`defaults.${key}: Invalid value: ${JSON.stringify(v)}: ${LEVEL_ERROR}`);
    return parsed ?? 'privileged';
  };
  const version = (key: string): Version => {
    const v = text(key, 'latest');
    const parsed = parseVersion(v);
    if (parsed === undefined) errors.push(`defaults.${key}: Invalid value: ${JSON.stringify(v)}: ${VERSION_ERROR}`);
    return parsed ?? Number.POSITIVE_INFINITY;
  };
  return {
    enforce: { level: level('enforce'), version: version('enforce-version') },
    audit: { level: level('audit'), version: version('audit-version') },
    warn: { level: level('warn'), version: version('warn-version') },
  };
}

/** The configuration from the plugin's entry of the AdmissionConfiguration; none gives privileged:latest everywhere. */
export function decodePodSecurityConfiguration(doc: unknown): PodSecurityConfiguration {
  if (doc === undefined || doc === null) doc = { apiVersion: POD_SECURITY_CONFIG_VERSIONS[0], kind: POD_SECURITY_CONFIGURATION };
  if (!isObject(doc)) throw new PodSecurityConfigError('expected a PodSecurityConfiguration object');
  if (doc.kind !== POD_SECURITY_CONFIGURATION || !POD_SECURITY_CONFIG_VERSIONS.includes(String(doc.apiVersion))) {
    throw new PodSecurityConfigError(`no kind ${JSON.stringify(doc.kind ?? '')} is registered for version ${JSON.stringify(doc.apiVersion ?? '')}`
      + ` (expected ${POD_SECURITY_CONFIGURATION} in ${POD_SECURITY_CONFIG_VERSIONS.join(', ')})`);
  }
  const errors: string[] = [];
  unknownFields(doc, ['apiVersion', 'kind', 'defaults', 'exemptions'], '', errors);
  const rawDefaults = isObject(doc.defaults) ? doc.defaults : {};
  const rawExemptions = isObject(doc.exemptions) ? doc.exemptions : {};
  unknownFields(rawDefaults, DEFAULT_KEYS, 'defaults.', errors);
  unknownFields(rawExemptions, EXEMPTION_KEYS, 'exemptions.', errors);
  const defaults = defaultsOf(rawDefaults, errors);
  const [usernames, namespaces, runtimeClasses] = EXEMPTION_KEYS.map((k) => strings(rawExemptions[k], `exemptions.${k}`, errors));
  checkList(namespaces, 'exemptions.namespaces', namespaceName, errors);
  checkList(runtimeClasses, 'exemptions.runtimeClasses', runtimeClassName, errors);
  checkList(usernames, 'exemptions.usernames', username, errors);
  if (errors.length) throw new PodSecurityConfigError(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
  return { defaults, exemptions: { usernames, namespaces, runtimeClasses } };
}
