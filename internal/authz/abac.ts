// ABAC: a file of policies, one JSON object a line, each allowing a subject a
// set of requests; the first match allows, none has no opinion. Lines are the
// versioned form (`abac.authorization.svc.io/v1beta1`, kind Policy, a spec) or
// the unversioned legacy form, converted as upstream converts it. The file is
// read once at start, so answers hold as long as the process runs.
import { readFileSync } from 'node:fs';
import { GROUP_AUTHENTICATED, group, ownGroup } from '../names/index.js';
import { forAnyName, verdict, type Attributes, type Authorizer, type Verdict } from './types.js';

export const ABAC_VERSION = `${group('abac.authorization')}/v1beta1`;

export interface PolicySpec {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

const READ_VERBS = new Set(['get', 'list', 'watch']);

type Json = Record<string, unknown>;
const text = (value: unknown, field: string): string => {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new Error(`${field} must be a string`);
  return value;
};

function versioned(line: Json): PolicySpec {
  if (line.kind !== 'Policy') throw new Error(`kind must be "Policy", not ${JSON.stringify(line.kind)}`);
  const spec = (line.spec ?? {}) as Json;
  if (typeof spec !== 'object' || Array.isArray(spec)) throw new Error('spec must be an object');
  const out: PolicySpec = {
    user: text(spec.user, 'spec.user'), group: text(spec.group, 'spec.group'), readonly: spec.readonly === true,
    apiGroup: text(spec.apiGroup, 'spec.apiGroup'), resource: text(spec.resource, 'spec.resource'),
    namespace: text(spec.namespace, 'spec.namespace'), nonResourcePath: text(spec.nonResourcePath, 'spec.nonResourcePath'),
  };
  // A `*` subject means every authenticated user.
  if (out.user === '*' || out.group === '*') out.group = GROUP_AUTHENTICATED;
  return out;
}

/** The legacy form: empty fields match everything, and every API group. */
function legacy(line: Json): PolicySpec {
  const user = text(line.user, 'user');
  const grp = text(line.group, 'group');
  const namespace = text(line.namespace, 'namespace');
  const resource = text(line.resource, 'resource');
  const everyone = (!user && !grp) || user === '*' || grp === '*';
  return {
    user: user === '*' ? '' : user, group: everyone ? GROUP_AUTHENTICATED : grp, readonly: line.readonly === true,
    apiGroup: '*', namespace: namespace || '*', resource: resource || '*',
    nonResourcePath: !namespace && !resource ? '*' : '',
  };
}

/** Ours, or the upstream spelling of the group. */
function isAbacVersion(apiVersion: string): boolean {
  const [grp, version] = apiVersion.split('/');
  return version === 'v1beta1' && ownGroup(grp) === group('abac.authorization');
}

/** Parses a policy file's text; throws naming the first bad line. */
export function parsePolicies(content: string, file = 'policy file'): PolicySpec[] {
  const policies: PolicySpec[] = [];
  content.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    try {
      const json = JSON.parse(line) as Json;
      if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('a policy must be a JSON object');
      if (json.apiVersion === undefined) policies.push(legacy(json));
      else if (isAbacVersion(String(json.apiVersion))) policies.push(versioned(json));
      else throw new Error(`unknown apiVersion ${JSON.stringify(json.apiVersion)} (want ${ABAC_VERSION})`);
    } catch (err) {
      throw new Error(`error reading policy file ${file}, line ${index + 1}: ${(err as Error).message}`);
    }
  });
  return policies;
}

function subjectMatches(p: PolicySpec, attributes: Attributes): boolean {
  let matched = false;
  if (p.user) {
    if (p.user !== '*' && p.user !== attributes.user.username) return false;
    matched = true;
  }
  if (p.group) {
    if (p.group !== '*' && !attributes.user.groups.includes(p.group)) return false;
    matched = true;
  }
  return matched;
}

const wildcardOrEqual = (pattern: string, value: string): boolean => pattern === '*' || pattern === value;

function requestMatches(p: PolicySpec, attributes: Attributes): boolean {
  const r = attributes.resource;
  if (r) return wildcardOrEqual(p.namespace, r.namespace) && wildcardOrEqual(p.resource, r.resource) && wildcardOrEqual(p.apiGroup, r.group);
  const path = attributes.nonResource?.path ?? '';
  if (!p.nonResourcePath) return false;
  return p.nonResourcePath === '*' || p.nonResourcePath === path
    || (p.nonResourcePath.endsWith('*') && path.startsWith(p.nonResourcePath.slice(0, -1)));
}

const verbOf = (attributes: Attributes): string => attributes.resource?.verb ?? attributes.nonResource?.verb ?? '';

export function policyMatches(p: PolicySpec, attributes: Attributes): boolean {
  return subjectMatches(p, attributes) && (!p.readonly || READ_VERBS.has(verbOf(attributes))) && requestMatches(p, attributes);
}

export class AbacAuthorizer implements Authorizer {
  constructor(private readonly policies: PolicySpec[]) {}

  static fromFile(path: string): AbacAuthorizer {
    if (!path) throw new Error('authorization-mode ABAC needs --authorization-policy-file');
    return new AbacAuthorizer(parsePolicies(readFileSync(path, 'utf8'), path));
  }

  async authorize(attributes: Attributes): Promise<Verdict> {
    const allowed = this.policies.some((p) => policyMatches(p, attributes));
    // ABAC policies name no objects.
    return forAnyName(verdict(allowed ? 'ALLOW' : 'NO_OPINION', allowed ? '' : 'No policy matched.', undefined, 'process'));
  }
}
