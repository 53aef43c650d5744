// An authorizer chain from a validated configuration file: remote authorizers
// from their settings, the others as their modes build them.
import { AUTHORIZATION_MODES, AuthzConfigError, privilegedChain, type AuthorizerContext } from '../modes.js';
import { AuthzMetrics } from '../metrics.js';
import { grpcAuthorizer, webhookAuthorizer } from '../remote/build.js';
import type { UnionAuthorizer } from '../chain.js';
import type { Authorizer } from '../types.js';
import type { AuthorizerConfig } from './file.js';

function buildOne(entry: AuthorizerConfig, context: AuthorizerContext, metrics: AuthzMetrics): Authorizer {
  switch (entry.type) {
    case 'Webhook':
      if (!entry.kubeConfigFile) throw new AuthzConfigError(`authorizer ${entry.name}: connectionInfo.type InClusterConfig is not available to the API server's own authorizers`);
      return webhookAuthorizer({ type: entry.type, name: entry.name, ...entry.remote }, entry.kubeConfigFile, entry.sarVersion, metrics);
    case 'GRPC':
      return grpcAuthorizer({ type: entry.type, name: entry.name, ...entry.remote }, entry.address, entry.tls, metrics);
    default: {
      const factory = AUTHORIZATION_MODES[entry.type];
      if (!factory) throw new AuthzConfigError(`authorizer ${entry.name}: type ${entry.type} is not available in this server`);
      return factory(context);
    }
  }
}

/** The chain for the file's authorizers, in order; a failing build closes what it built. */
export function buildFromConfig(entries: AuthorizerConfig[], context: AuthorizerContext): UnionAuthorizer {
  const metrics = context.metrics ?? new AuthzMetrics();
  const built: Array<{ type: string; name: string; authorizer: Authorizer }> = [];
  try {
    for (const entry of entries) built.push({ type: entry.type, name: entry.name, authorizer: buildOne(entry, context, metrics) });
  } catch (err) {
    for (const b of built) b.authorizer.close?.();
    throw err;
  }
  return privilegedChain(built, { ...context, metrics });
}
