// --authorization-mode: the named authorizers, in the order given, behind the
// privileged-group authorizer that lets system:masters do everything.
import { AlwaysAllowAuthorizer, AlwaysDenyAuthorizer, PrivilegedGroupAuthorizer } from './builtin.js';
import { UnionAuthorizer } from './chain.js';
import type { Authorizer } from './types.js';

/** What an authorizer may need to build itself (RBAC, Node and Webhook will). */
export interface AuthorizerContext {
  storageAddress: string;
  natsUrl: string;
}

type AuthorizerFactory = (context: AuthorizerContext) => Authorizer;

/** Every mode this server knows, by its flag name. */
export const AUTHORIZATION_MODES: Record<string, AuthorizerFactory> = {
  AlwaysAllow: () => new AlwaysAllowAuthorizer(),
  AlwaysDeny: () => new AlwaysDenyAuthorizer(),
};

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
export function buildAuthorizer(modes: string[], context: AuthorizerContext): Authorizer {
  validateModes(modes);
  return new UnionAuthorizer([new PrivilegedGroupAuthorizer(), ...modes.map((m) => AUTHORIZATION_MODES[m](context))]);
}
