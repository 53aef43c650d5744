// One webhook of a stored Mutating/ValidatingWebhookConfiguration, as dispatch
// uses it: its fields with their defaults, selectors parsed and match conditions
// compiled once when the configuration is seen, never per request.
import { compile, STATIC_ESTIMATED_COST_LIMIT, type Program } from '../../cel/index.js';
import type { WebhookClient } from '../../webhook/client.js';
import { asList, asObj, objects, str } from '../../registry/values.js';

export interface Rule {
  operations: string[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope: string;
}

export interface ClientConfig {
  url?: string;
  service?: { namespace: string; name: string; port: number; path: string };
  /** PEM CAs trusted for the webhook's certificate; undefined: the system's roots. */
  ca?: Buffer;
}

/** A match condition: compiled, or the compile error that makes it fail at admission (failurePolicy decides). */
export interface Condition {
  name: string;
  program?: Program;
  error?: string;
}

export interface Hook {
  configuration: string;
  name: string;
  mutating: boolean;
  rules: Rule[];
  matchPolicy: 'Exact' | 'Equivalent';
  /** Label selectors; undefined when they select everything. */
  namespaceSelector?: Record<string, unknown>;
  objectSelector?: Record<string, unknown>;
  conditions: Condition[];
  failurePolicy: 'Fail' | 'Ignore';
  timeoutMs: number;
  sideEffects: string;
  reviewVersions: string[];
  reinvocation: 'Never' | 'IfNeeded';
  client: ClientConfig;
  /** A client per address called, keeping connections open between calls; closed when the configuration changes. */
  clients: Map<string, WebhookClient>;
}

const DEFAULT_TIMEOUT_S = 10;
const MAX_TIMEOUT_S = 30;
/** Variables of a webhook's match conditions. */
const CONDITION_VARIABLES = ['object', 'oldObject', 'request'];

function rulesOf(list: unknown): Rule[] {
  return objects(list).map((r) => ({
    operations: asList(r.operations).map(String), apiGroups: asList(r.apiGroups).map(String),
    apiVersions: asList(r.apiVersions).map(String), resources: asList(r.resources).map(String), scope: str(r.scope) ?? '*',
  }));
}

function clientOf(config: Record<string, unknown>): ClientConfig {
  const service = asObj(config.service);
  const caBundle = str(config.caBundle);
  return {
    ...(typeof config.url === 'string' ? { url: config.url } : {}),
    ...(service ? {
      service: {
        namespace: str(service.namespace) ?? '', name: str(service.name) ?? '',
        port: typeof service.port === 'number' ? service.port : 443, path: str(service.path) ?? '',
      },
    } : {}),
    ...(caBundle ? { ca: Buffer.from(caBundle, 'base64') } : {}),
  };
}

function conditionsOf(list: unknown): Condition[] {
  return objects(list).map((c) => {
    const name = str(c.name) ?? '';
    try {
      const program = compile(str(c.expression) ?? '', { variables: CONDITION_VARIABLES, dynamic: CONDITION_VARIABLES, costLimit: STATIC_ESTIMATED_COST_LIMIT });
      return { name, program };
    } catch (err) {
      return { name, error: (err as Error).message };
    }
  });
}

/** A selector that selects something: one with labels or expressions to match. */
function selector(value: unknown): Record<string, unknown> | undefined {
  const sel = asObj(value);
  return sel && (Object.keys(asObj(sel.matchLabels) ?? {}).length || asList(sel.matchExpressions).length) ? sel : undefined;
}

/** The webhooks of one stored configuration, in their order. */
export function hooksOf(configuration: Record<string, unknown>, mutating: boolean): Hook[] {
  const name = str(asObj(configuration.metadata)?.name) ?? '';
  return objects(configuration.webhooks).map((w) => {
    const client = clientOf(asObj(w.clientConfig) ?? {});
    const seconds = typeof w.timeoutSeconds === 'number' ? Math.min(Math.max(w.timeoutSeconds, 1), MAX_TIMEOUT_S) : DEFAULT_TIMEOUT_S;
    return {
      configuration: name, name: str(w.name) ?? '', mutating, rules: rulesOf(w.rules),
      matchPolicy: w.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
      namespaceSelector: selector(w.namespaceSelector), objectSelector: selector(w.objectSelector),
      conditions: conditionsOf(w.matchConditions),
      failurePolicy: w.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
      timeoutMs: seconds * 1000,
      sideEffects: str(w.sideEffects) ?? '',
      reviewVersions: asList(w.admissionReviewVersions).map(String),
      reinvocation: w.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
      client,
      clients: new Map(),
    };
  });
}

/** Closes the connections a webhook keeps. */
export function retire(hook: Hook): void {
  for (const client of hook.clients.values()) client.close();
  hook.clients.clear();
}
