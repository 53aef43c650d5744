// The --oidc-* flags: one JWT authenticator, described as the configuration
// file would describe it and checked by the same rules.
import { readFileSync } from 'node:fs';
import type { JWTAuthenticatorConfig } from '../jwtconfig/types.js';
import { ALL_SIGNING_ALGORITHMS } from './authenticator.js';

export interface OidcFlags {
  issuerUrl: string;
  clientId: string;
  caFile: string;
  usernameClaim: string;
  usernamePrefix: string;
  groupsClaim: string;
  groupsPrefix: string;
  signingAlgs: string[];
  /** `key=value` each. */
  requiredClaims: string[];
  /** Whether any --oidc-* flag was given. */
  anySet: boolean;
}

export class OidcFlagsError extends Error {}

/** The username prefix of the flags: `<issuer>#` for claims other than email unless one is given; `-` for none. */
function usernamePrefix(f: OidcFlags): string {
  if (f.usernamePrefix === '-') return '';
  if (f.usernamePrefix === '' && f.usernameClaim !== 'email') return `${f.issuerUrl}#`;
  return f.usernamePrefix;
}

function requiredClaimRules(values: string[]) {
  return values.map((kv) => {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new OidcFlagsError(`invalid --oidc-required-claim "${kv}": must be key=value`);
    return { claim: kv.slice(0, eq), requiredValue: kv.slice(eq + 1), expression: '', message: '' };
  });
}

/** The authenticator the flags describe, or undefined when OIDC is off. */
export function oidcAuthenticatorConfig(f: OidcFlags): { config: JWTAuthenticatorConfig; algorithms: string[] } | undefined {
  if (!f.anySet) return undefined;
  if (!f.issuerUrl || !f.clientId) throw new OidcFlagsError('oidc-issuer-url and oidc-client-id must be specified together when any oidc-* flags are set');
  const unsupported = f.signingAlgs.find((alg) => !ALL_SIGNING_ALGORITHMS.includes(alg));
  if (unsupported) throw new OidcFlagsError(`oidc: unsupported signing alg: "${unsupported}"`);
  let certificateAuthority = '';
  if (f.caFile) {
    try {
      certificateAuthority = readFileSync(f.caFile, 'utf8');
    } catch (err) {
      throw new OidcFlagsError(`cannot read --oidc-ca-file: ${(err as Error).message}`);
    }
  }
  const config: JWTAuthenticatorConfig = {
    issuer: { url: f.issuerUrl, discoveryURL: '', certificateAuthority, audiences: [f.clientId], audienceMatchPolicy: '', egressSelectorType: '' },
    claimValidationRules: requiredClaimRules(f.requiredClaims),
    claimMappings: {
      username: { claim: f.usernameClaim, prefix: usernamePrefix(f), expression: '' },
      groups: f.groupsClaim ? { claim: f.groupsClaim, prefix: f.groupsPrefix, expression: '' } : { claim: '', expression: '' },
      uid: { claim: '', expression: '' },
      extra: [],
    },
    userValidationRules: [],
  };
  return { config, algorithms: f.signingAlgs.length ? f.signingAlgs : ['RS256'] };
}

/** The --oidc-* flags of a parsed command line. */
export function oidcFlags(flags: { string(n: string): string; list(n: string): string[]; array(n: string): string[]; given: Map<string, string> }): OidcFlags {
  return {
    issuerUrl: flags.string('oidc-issuer-url'),
    clientId: flags.string('oidc-client-id'),
    caFile: flags.string('oidc-ca-file'),
    usernameClaim: flags.string('oidc-username-claim'),
    usernamePrefix: flags.string('oidc-username-prefix'),
    groupsClaim: flags.string('oidc-groups-claim'),
    groupsPrefix: flags.string('oidc-groups-prefix'),
    signingAlgs: flags.list('oidc-signing-algs'),
    requiredClaims: flags.array('oidc-required-claim'),
    anySet: [...flags.given.keys()].some((name) => name.startsWith('oidc-')),
  };
}
