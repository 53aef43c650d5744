// Which chain the service starts with: the configuration file, or the mode list
// and webhook flags; never both, as upstream refuses.
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import type { ParsedFlags } from '../config/flags.js';
import { ConfigController } from './config/controller.js';
import { AuthzConfigError, buildAuthorizer, type AuthorizerContext } from './modes.js';
import type { SarVersion } from './remote/sar.js';
import type { Authorizer, RuleLister } from './types.js';

/** The chain in force: it decides, lists rules (SelfSubjectRulesReview) and is closed at the end. */
export type Chain = Authorizer & RuleLister & { close(): void };

const LEGACY_FLAGS = ['authorization-mode', 'authorization-policy-file', 'authorization-webhook-config-file', 'authorization-webhook-version',
  'authorization-webhook-cache-authorized-ttl', 'authorization-webhook-cache-unauthorized-ttl'];

/** The chain the flags select; throws AuthzConfigError (or the file's errors) when the service cannot start. */
export function authorizerFromFlags(flags: ParsedFlags, context: AuthorizerContext): Chain {
  const configFile = flags.string('authorization-config');
  if (configFile) {
    const legacy = LEGACY_FLAGS.filter((f) => flags.given.has(f));
    if (legacy.length) {
      throw new AuthzConfigError(`--authorization-config can not be specified together with ${legacy.map((f) => `--${f}`).join(', ')}: use one or the other`);
    }
    return new ConfigController(configFile, context, () => context.policyChanged?.()).start();
  }
  const version = flags.string('authorization-webhook-version');
  if (version !== 'v1' && version !== 'v1beta1') throw new AuthzConfigError(`--authorization-webhook-version must be v1 or v1beta1, not ${JSON.stringify(version)}`);
  return buildAuthorizer(flags.list('authorization-mode'), {
    ...context,
    policyFile: flags.string('authorization-policy-file'),
    webhook: {
      configFile: flags.string('authorization-webhook-config-file'), version: version as SarVersion,
      authorizedTTLMs: flags.duration('authorization-webhook-cache-authorized-ttl'),
      unauthorizedTTLMs: flags.duration('authorization-webhook-cache-unauthorized-ttl'),
    },
  });
}

/** The authorizer types the flags select, for the services that only need to know them (authn turns
 * anonymous access off with AlwaysAllow, admission adds NodeRestriction with Node). A configuration
 * file that does not read names none: the authorization service reports it. */
export function authorizerTypes(flags: ParsedFlags): string[] {
  const file = flags.string('authorization-config');
  if (!file) return flags.list('authorization-mode');
  try {
    const doc = YAML.parse(readFileSync(file, 'utf8')) as { authorizers?: Array<{ type?: unknown }> };
    return (Array.isArray(doc?.authorizers) ? doc.authorizers : []).map((a) => String(a?.type ?? ''));
  } catch {
    return [];
  }
}
