// The ResourceQuota plugin's configuration: `limitedResources`, the resources
// whose consumption needs a covering quota. ResourceQuotaConfiguration in the
// config group (v1), or Configuration in the plugin's own group (v1beta1,
// v1alpha1), each in both spellings; unknown fields or bad entries stop the process.
import { isObject } from '../../apimachinery/meta.js';
import { GROUP_APISERVER_CONFIG, group, upstreamGroup } from '../../names/index.js';
import { AdmissionFileError } from '../config.js';
import type { LimitedResource } from './resourcequota-check.js';

const QUOTA_GROUP = group('resourcequota.admission');
const KINDS: Record<string, string> = Object.fromEntries([
  ...[`${GROUP_APISERVER_CONFIG}/v1`].map((gv) => [gv, 'ResourceQuotaConfiguration']),
  ...['v1beta1', 'v1alpha1'].map((v) => [`${QUOTA_GROUP}/${v}`, 'Configuration']),
].flatMap(([gv, kind]) => [[gv, kind], [`${upstreamGroup(gv.slice(0, gv.indexOf('/')))}${gv.slice(gv.indexOf('/'))}`, kind]]));

const SCOPES = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity', 'VolumeAttributesClass'];
const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];
const ENTRY_FIELDS = ['apiGroup', 'resource', 'matchContains', 'matchScopes'];

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

function decodeEntry(value: unknown, at: string, errors: string[]): LimitedResource {
  if (!isObject(value)) {
    errors.push(`${at}: expected an object`);
    return { resource: '' };
  }
  for (const key of Object.keys(value)) if (!ENTRY_FIELDS.includes(key)) errors.push(`unknown field "${at}.${key}"`);
  if (typeof value.resource !== 'string' || !value.resource) errors.push(`${at}.resource: Required value`);
  if (value.matchContains !== undefined && !strings(value.matchContains)) errors.push(`${at}.matchContains: expected a list of strings`);
  const scopes = value.matchScopes ?? [];
  if (!Array.isArray(scopes)) errors.push(`${at}.matchScopes: expected a list`);
  (Array.isArray(scopes) ? scopes : []).forEach((s, i) => {
    const where = `${at}.matchScopes[${i}]`;
    if (!isObject(s) || !SCOPES.includes(String(s.scopeName))) errors.push(`${where}.scopeName: Unsupported value: ${JSON.stringify(isObject(s) ? s.scopeName : s)}`);
    else if (!OPERATORS.includes(String(s.operator))) errors.push(`${where}.operator: Unsupported value: ${JSON.stringify(s.operator)}`);
    else if (s.values !== undefined && !strings(s.values)) errors.push(`${where}.values: expected a list of strings`);
  });
  return value as unknown as LimitedResource;
}

/** The limited resources a configuration lists; none without one. */
export function limitedResources(config: unknown): LimitedResource[] {
  if (config === undefined || config === null) return [];
  const fail = (detail: string) => new AdmissionFileError(`ResourceQuota configuration: ${detail}`);
  if (!isObject(config)) throw fail('not an object');
  const expected = KINDS[String(config.apiVersion)];
  if (!expected || config.kind !== expected) {
    throw fail(`no kind ${JSON.stringify(config.kind)} is registered for version ${JSON.stringify(config.apiVersion)}`);
  }
  const errors: string[] = [];
  for (const key of Object.keys(config)) if (!['apiVersion', 'kind', 'limitedResources'].includes(key)) errors.push(`unknown field "${key}"`);
  const raw = config.limitedResources ?? [];
  if (!Array.isArray(raw)) errors.push('limitedResources: expected a list');
  const out = (Array.isArray(raw) ? raw : []).map((e, i) => decodeEntry(e, `limitedResources[${i}]`, errors));
  if (errors.length) throw fail(errors.join(', '));
  return out;
}
