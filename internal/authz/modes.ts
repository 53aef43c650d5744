// --authorization-mode: the named authorizers, in the order given, behind the
// privileged-group authorizer that lets system:masters do everything. The
// Webhook mode takes its settings from the --authorization-webhook-* flags.
import { AbacAuthorizer } from './abac.js';
import { AlwaysAllowAuthorizer, AlwaysDenyAuthorizer, PrivilegedGroupAuthorizer } from './builtin.js';
import { UnionAuthorizer } from './chain.js';
import { AuthzMetrics, MeasuredAuthorizer } from './metrics.js';
import { NodeAuthorizer } from './node/authorizer.js';
import type { NodeGraph } from './node/graph.js';
import { webhookAuthorizer } from './remote/build.js';
import type { SarVersion } from './remote/sar.js';
import type { Authorizer } from './types.js';
import type { RBACAuthorizer } from '../rbac/authorizer.js';

/** The --authorization-webhook-* flags. */
export interface WebhookFlags {
  configFile: string;
  version: SarVersion;
  authorizedTTLMs: number;
  unauthorizedTTLMs: number;
}

/** What an authorizer may need to build itself. */
export interface AuthorizerContext {
  storageAddress: string;
  natsUrl: string;
  metrics?: AuthzMetrics;
  /** The node graph, fed from storage (started on first use). */
  nodeGraph?: () => NodeGraph;
  /** --authorization-policy-file, for ABAC. */
  policyFile?: string;
  webhook?: WebhookFlags;
  /** The RBAC authorizer over the service's policy index (which escalation checks use whatever the modes). */
  rbac?: RBACAuthorizer;
  /** Called when the chain itself changed (a reloaded configuration file): the generation moves. */
  policyChanged?: () => void;
}

type AuthorizerFactory = (context: AuthorizerContext) => Authorizer;

/** The webhook of the flags: upstream's fixed 30s timeout, no opinion on failure. */
const WEBHOOK_FLAGS_TIMEOUT_MS = 30_000;

function flagWebhook(context: AuthorizerContext): Authorizer {
  const w = context.webhook;
  if (!w?.configFile) throw new AuthzConfigError('authorization-mode Webhook needs --authorization-webhook-config-file');
  return webhookAuthorizer({
    type: 'Webhook', name: 'webhook', timeoutMs: WEBHOOK_FLAGS_TIMEOUT_MS, failurePolicy: 'NoOpinion', matchConditions: [],
    authorizedTTLMs: w.authorizedTTLMs, unauthorizedTTLMs: w.unauthorizedTTLMs,
  }, w.configFile, w.version, context.metrics ?? new AuthzMetrics());
}

function nodeAuthorizer(context: AuthorizerContext): Authorizer {
  if (!context.nodeGraph) throw new AuthzConfigError('the Node authorizer needs the node graph');
  return new NodeAuthorizer(context.nodeGraph());
}

/** Every mode this server knows, by its flag name. */
export const AUTHORIZATION_MODES: Record<string, AuthorizerFactory> = {
  AlwaysAllow: () => new AlwaysAllowAuthorizer(),
  AlwaysDeny: () => new AlwaysDenyAuthorizer(),
  ABAC: (context) => AbacAuthorizer.fromFile(context.policyFile ?? ''),
  Node: nodeAuthorizer,
  RBAC: (context) => {
    if (!context.rbac) throw new AuthzConfigError('authorization-mode "RBAC" needs the RBAC policy index');
    return context.rbac;
  },
  Webhook: flagWebhook,
};

/** A mode list or configuration the service cannot start with. */
export class AuthzConfigError extends Error {}

export function validateModes(modes: string[]): void {
  if (modes.length === 0) throw new AuthzConfigError('at least one authorization-mode must be passed');
  const seen = new Set<string>();
  for (const mode of modes) {
    if (!Object.hasOwn(AUTHORIZATION_MODES, mode)) {
      throw new AuthzConfigError(
        `authorization-mode "${mode}" is not a valid mode (valid modes: ${Object.keys(AUTHORIZATION_MODES).join(', ')})`);
    }
    if (seen.has(mode)) throw new AuthzConfigError(`authorization-mode "${mode}" has mode specified more than once`);
    seen.add(mode);
  }
}

/** The chain of named authorizers behind system:masters; each counted under its type and name. */
export function privilegedChain(entries: Array<{ type: string; name: string; authorizer: Authorizer }>, context: AuthorizerContext): UnionAuthorizer {
  const { metrics } = context;
  const links = entries.map((e) => (metrics ? new MeasuredAuthorizer(e.type, e.name, e.authorizer, metrics) : e.authorizer));
  return new UnionAuthorizer([new PrivilegedGroupAuthorizer(), ...links]);
}

/** The chain for a mode list; unknown or repeated modes throw AuthzConfigError. */
export function buildAuthorizer(modes: string[], context: AuthorizerContext): UnionAuthorizer {
  validateModes(modes);
  const entries = modes.map((type) => ({ type, name: type.toLowerCase(), authorizer: AUTHORIZATION_MODES[type](context) }));
  return privilegedChain(entries, context);
}
