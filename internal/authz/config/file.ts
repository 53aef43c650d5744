// The authorization configuration file (`apiserver.config.svc.io/v1`, kind
// AuthorizationConfiguration): parsed, defaulted and validated by upstream's
// rules, with our GRPC type for external authorizers beside Webhook, Node and
// RBAC. Match conditions are compiled here, so a bad expression fails the load.
import { existsSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import YAML from 'yaml';
import { compile, CompileError, STATIC_ESTIMATED_COST_LIMIT, type Program } from '../../cel/index.js';
import { parseDuration } from '../../config/flags.js';
import { group } from '../../names/index.js';
import type { FailurePolicy } from '../remote/guarded.js';
import type { SarVersion } from '../remote/sar.js';
import type { GrpcTls } from '../remote/grpc.js';
import { AuthorizationConfigError, duplicate, invalid, notSupported, required, tooMany } from './errors.js';

export const CONFIG_API_VERSION = `${group('apiserver.config')}/v1`;
export const CONFIG_KIND = 'AuthorizationConfiguration';
export const KNOWN_TYPES = ['AlwaysAllow', 'AlwaysDeny', 'GRPC', 'Node', 'RBAC', 'Webhook'];
const REPEATABLE_TYPES = new Set(['Webhook', 'GRPC']);
const MAX_MATCH_CONDITIONS = 64;
const MAX_TIMEOUT_MS = 30_000;
const DEFAULT_AUTHORIZED_TTL_MS = 5 * 60_000;
const DEFAULT_UNAUTHORIZED_TTL_MS = 30_000;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** What remote authorizers (webhooks and gRPC) share once validated. */
export interface RemoteSettings {
  authorizedTTLMs: number;
  unauthorizedTTLMs: number;
  timeoutMs: number;
  failurePolicy: FailurePolicy;
  matchConditions: Program[];
}

export type AuthorizerConfig =
  | { type: 'Webhook'; name: string; remote: RemoteSettings; sarVersion: SarVersion; kubeConfigFile?: string }
  | { type: 'GRPC'; name: string; remote: RemoteSettings; address: string; tls?: GrpcTls }
  | { type: 'Node' | 'RBAC' | 'AlwaysAllow' | 'AlwaysDeny'; name: string };

type Json = Record<string, any>;

/** Parses, defaults and validates a file's text; throws AuthorizationConfigError listing every error. */
export function parseAuthorizationConfig(text: string): AuthorizerConfig[] {
  let doc: Json;
  try {
    doc = YAML.parse(text) as Json;
  } catch (err) {
    throw new AuthorizationConfigError([`the file is neither YAML nor JSON: ${(err as Error).message}`]);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new AuthorizationConfigError(['the file does not hold an object']);
  const errors: string[] = [];
  if (doc.apiVersion !== CONFIG_API_VERSION) errors.push(notSupported('apiVersion', doc.apiVersion ?? '', [CONFIG_API_VERSION]));
  if (doc.kind !== CONFIG_KIND) errors.push(notSupported('kind', doc.kind ?? '', [CONFIG_KIND]));
  const authorizers: Json[] = Array.isArray(doc.authorizers) ? doc.authorizers : [];
  if (!authorizers.length) errors.push(required('authorizers', 'at least one authorization mode must be defined'));
  const seenTypes = new Set<string>();
  const seenNames = new Set<string>();
  const out: AuthorizerConfig[] = [];
  authorizers.forEach((a, i) => {
    const entry = validateAuthorizer(a ?? {}, `authorizers[${i}]`, seenTypes, seenNames, errors);
    if (entry) out.push(entry);
  });
  if (errors.length) throw new AuthorizationConfigError(errors);
  return out;
}

function validateAuthorizer(a: Json, path: string, seenTypes: Set<string>, seenNames: Set<string>, errors: string[]): AuthorizerConfig | undefined {
  const type = String(a.type ?? '');
  if (!type) { errors.push(required(`${path}.type`)); return undefined; }
  if (!KNOWN_TYPES.includes(type)) { errors.push(notSupported(`${path}.type`, type, KNOWN_TYPES)); return undefined; }
  if (seenTypes.has(type) && !REPEATABLE_TYPES.has(type)) { errors.push(duplicate(`${path}.type`, type)); return undefined; }
  seenTypes.add(type);
  const name = String(a.name ?? '');
  const before = errors.length;
  if (!name) errors.push(required(`${path}.name`));
  else if (seenNames.has(name)) errors.push(duplicate(`${path}.name`, name));
  else if (name.length > 63 || !DNS_LABEL.test(name)) {
    errors.push(invalid(`${path}.name`, name, "authorizer name is invalid: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
  }
  seenNames.add(name);
  for (const [field, owner] of [['webhook', 'Webhook'], ['grpc', 'GRPC']] as const) {
    if (type === owner && (a[field] === undefined || a[field] === null)) errors.push(required(`${path}.${field}`, `required when type=${owner}`));
    if (type !== owner && a[field] !== undefined && a[field] !== null) errors.push(invalid(`${path}.${field}`, 'non-null', `may only be specified when type=${owner}`));
  }
  if (errors.length > before) return undefined;
  if (type === 'Webhook') return webhook(a.webhook as Json, `${path}.webhook`, name, errors);
  if (type === 'GRPC') return grpcAuthorizer(a.grpc as Json, `${path}.grpc`, name, errors);
  return { type: type as 'Node' | 'RBAC' | 'AlwaysAllow' | 'AlwaysDeny', name };
}

function webhook(w: Json, path: string, name: string, errors: string[]): AuthorizerConfig | undefined {
  const before = errors.length;
  const remote = remoteSettings(w, path, errors);
  const sarVersion = String(w.subjectAccessReviewVersion ?? '');
  if (!sarVersion) errors.push(required(`${path}.subjectAccessReviewVersion`));
  else if (sarVersion !== 'v1' && sarVersion !== 'v1beta1') errors.push(notSupported(`${path}.subjectAccessReviewVersion`, sarVersion, ['v1', 'v1beta1']));
  const matchVersion = String(w.matchConditionSubjectAccessReviewVersion ?? '');
  if (!matchVersion && Array.isArray(w.matchConditions) && w.matchConditions.length) {
    errors.push(required(`${path}.matchConditionSubjectAccessReviewVersion`, 'required if match conditions are specified'));
  } else if (matchVersion && matchVersion !== 'v1') errors.push(notSupported(`${path}.matchConditionSubjectAccessReviewVersion`, matchVersion, ['v1']));
  const kubeConfigFile = connectionInfo((w.connectionInfo ?? {}) as Json, `${path}.connectionInfo`, errors);
  if (errors.length > before || !remote) return undefined;
  return { type: 'Webhook', name, remote, sarVersion: sarVersion as SarVersion, kubeConfigFile };
}

function connectionInfo(c: Json, path: string, errors: string[]): string | undefined {
  const type = String(c.type ?? '');
  const file = c.kubeConfigFile;
  switch (type) {
    case '': errors.push(required(`${path}.type`)); return undefined;
    case 'InClusterConfig':
      if (file !== undefined && file !== null) errors.push(invalid(`${path}.kubeConfigFile`, file, 'can only be set when type=KubeConfigFile'));
      return undefined;
    case 'KubeConfigFile':
      if (!file) errors.push(required(`${path}.kubeConfigFile`));
      else checkFile(String(file), `${path}.kubeConfigFile`, errors);
      return file ? String(file) : undefined;
    default: errors.push(notSupported(`${path}.type`, type, ['InClusterConfig', 'KubeConfigFile'])); return undefined;
  }
}

function checkFile(file: string, path: string, errors: string[]): void {
  if (!isAbsolute(file)) errors.push(invalid(path, file, 'must be an absolute path'));
  else if (!existsSync(file)) errors.push(invalid(path, file, `error loading file: stat ${file}: no such file or directory`));
  else if (!statSync(file).isFile()) errors.push(invalid(path, file, 'must be a regular file'));
}

function grpcAuthorizer(g: Json, path: string, name: string, errors: string[]): AuthorizerConfig | undefined {
  const before = errors.length;
  const remote = remoteSettings(g, path, errors);
  const address = String(g.address ?? '');
  if (!address) errors.push(required(`${path}.address`));
  let tls: GrpcTls | undefined;
  if (g.tls !== undefined && g.tls !== null) {
    tls = {};
    for (const field of ['certificateAuthority', 'clientCertificate', 'clientKey'] as const) {
      if (g.tls[field]) { tls[field] = String(g.tls[field]); checkFile(tls[field]!, `${path}.tls.${field}`, errors); }
    }
    if (Boolean(tls.clientCertificate) !== Boolean(tls.clientKey)) errors.push(invalid(`${path}.tls`, 'clientCertificate', 'clientCertificate and clientKey are set together'));
    if (g.tls.serverName) tls.serverName = String(g.tls.serverName);
  }
  if (errors.length > before || !remote) return undefined;
  return { type: 'GRPC', name, remote, address, tls };
}

/** Timeout, TTLs, failure policy and match conditions; undefined when any is bad. */
function remoteSettings(w: Json, path: string, errors: string[]): RemoteSettings | undefined {
  const before = errors.length;
  const timeoutMs = duration(w.timeout, `${path}.timeout`, errors, 0);
  if (timeoutMs !== undefined) {
    if (timeoutMs === 0) errors.push(required(`${path}.timeout`));
    else if (timeoutMs < 0 || timeoutMs > MAX_TIMEOUT_MS) errors.push(invalid(`${path}.timeout`, String(w.timeout), 'must be > 0s and <= 30s'));
  }
  const ttl = (field: string, fallback: number, cacheField: string): number | undefined => {
    const ms = duration(w[field], `${path}.${field}`, errors, fallback);
    if (ms !== undefined && ms < 0) errors.push(invalid(`${path}.${field}`, String(w[field]), 'must be > 0s'));
    return w[cacheField] === false ? 0 : ms === 0 ? fallback : ms;
  };
  const authorizedTTLMs = ttl('authorizedTTL', DEFAULT_AUTHORIZED_TTL_MS, 'cacheAuthorizedRequests');
  const unauthorizedTTLMs = ttl('unauthorizedTTL', DEFAULT_UNAUTHORIZED_TTL_MS, 'cacheUnauthorizedRequests');
  const failurePolicy = String(w.failurePolicy ?? '');
  if (!failurePolicy) errors.push(required(`${path}.failurePolicy`));
  else if (failurePolicy !== 'NoOpinion' && failurePolicy !== 'Deny') errors.push(notSupported(`${path}.failurePolicy`, failurePolicy, ['NoOpinion', 'Deny']));
  const matchConditions = compileMatchConditions(w.matchConditions, `${path}.matchConditions`, errors);
  if (errors.length > before) return undefined;
  return { timeoutMs: timeoutMs!, authorizedTTLMs: authorizedTTLMs!, unauthorizedTTLMs: unauthorizedTTLMs!, failurePolicy: failurePolicy as FailurePolicy, matchConditions };
}

/** A Go duration (`30s`, `5m0s`, `500ms`); a negative one stays negative. */
function duration(value: unknown, path: string, errors: string[], fallback: number): number | undefined {
  if (value === undefined || value === null || value === '') return fallback;
  const text = String(value);
  const negative = text.startsWith('-');
  try {
    const ms = text === '0' ? 0 : parseDuration(negative ? text.slice(1) : text);
    return negative ? -ms : ms;
  } catch {
    errors.push(invalid(path, text, 'must be a duration such as 30s or 5m0s'));
    return undefined;
  }
}

function compileMatchConditions(value: unknown, path: string, errors: string[]): Program[] {
  const conditions: Json[] = Array.isArray(value) ? value : [];
  if (conditions.length > MAX_MATCH_CONDITIONS) { errors.push(tooMany(path, conditions.length, MAX_MATCH_CONDITIONS)); return []; }
  const seen = new Set<string>();
  const programs: Program[] = [];
  conditions.forEach((c, i) => {
    const at = `${path}[${i}].expression`;
    const expression = String(c?.expression ?? '');
    if (!expression.trim()) { errors.push(required(at)); return; }
    if (seen.has(expression)) { errors.push(duplicate(at, expression)); return; }
    seen.add(expression);
    try {
      const program = compile(expression, { variables: ['request'], costLimit: STATIC_ESTIMATED_COST_LIMIT });
      if (program.outputType !== 'bool') errors.push(invalid(at, expression, `must evaluate to bool, not ${program.outputType}`));
      else programs.push(program);
    } catch (err) {
      errors.push(invalid(at, expression, `compilation failed: ${err instanceof CompileError ? err.message : (err as Error).message}`));
    }
  });
  return programs;
}
