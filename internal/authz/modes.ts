// --authorization-mode: the named authorizers, in the order given, behind the
// privileged-group authorizer that lets system:masters do everything.
import { AlwaysAllowAuthorizer, AlwaysDenyAuthorizer, PrivilegedGroupAuthorizer } from './builtin.js';
import { UnionAuthorizer } from './chain.js';
import type { Authorizer } from './types.js';
import type { RBACAuthorizer } from '../rbac/authorizer.js';

/** What an authorizer may need to build itself (RBAC, Node and Webhook will). */
export interface AuthorizerContext {
  storageAddress: string;
  natsUrl: string;
  /** The RBAC authorizer over the service's policy index (which escalation checks use whatever the modes). */
  rbac?: RBACAuthorizer;
}

type AuthorizerFactory = (context: AuthorizerContext) => Authorizer;

/** Every mode this server knows, by its flag name. */
export const AUTHORIZATION_MODES: Record<string, AuthorizerFactory> = {
  AlwaysAllow: () => new AlwaysAllowAuthorizer(),
  AlwaysDeny: () => new AlwaysDenyAuthorizer(),
  RBAC: (context) => {
    if (!context.rbac) throw new AuthzConfigError('authorization-mode "RBAC" needs the RBAC policy index');
    return context.rbac;
  },
};

/** `Node` is accepted in a mode list before its graph authorizer is registered; until then it has no opinion
 * (and lists no rules, as the node authorizer answers every user but nodes). */
if (!Object.hasOwn(AUTHORIZATION_MODES, 'Node')) {
  AUTHORIZATION_MODES.Node = () => ({
    authorize: async () => ({ decision: 'NO_OPINION', reason: '' }),
    rulesFor: async () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
  }) as Authorizer;
}

/** A mode list the service cannot start with. */
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

/** The chain for a mode list; unknown or repeated modes throw AuthzConfigError. */
export function buildAuthorizer(modes: string[], context: AuthorizerContext): UnionAuthorizer {
  validateModes(modes);
  return new UnionAuthorizer([new PrivilegedGroupAuthorizer(), ...modes.map((m) => AUTHORIZATION_MODES[m](context))]);
}
