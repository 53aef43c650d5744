// JWT authentication as the options ask for it: the --oidc-* flags or the
// --authentication-config file (never both), the file's anonymous section, and
// the reloading of the file.
import { Registry } from 'prom-client';
import { JWTAuthenticatorSet, type JWTEntry } from './jwt/set.js';
import { oidcAuthenticatorConfig, OidcFlagsError, type OidcFlags } from './jwt/oidcflags.js';
import { AuthenticationConfigError, AuthenticationConfigReloader, loadAuthenticationConfig, type LoadedConfig } from './jwtconfig/file.js';
import { aggregate } from './jwtconfig/fielderrors.js';
import { validateJWTAuthenticator } from './jwtconfig/validate.js';
import type { AnonymousConfig } from './jwtconfig/types.js';
import { AuthenticationConfigMetrics } from './metrics.js';

export interface JWTOptions {
  oidc?: OidcFlags;
  authenticationConfigFile?: string;
  /** --anonymous-auth was given on the command line. */
  anonymousAuthSet?: boolean;
  /** Issuers JWT authenticators may not claim (the service-account issuers). */
  disallowedIssuers?: string[];
  /** The API's own audiences: ID tokens are valid for these only (a review asking for others does not recognise them). */
  apiAudiences?: string[];
  /** Where the reload metrics are registered. */
  registry?: Registry;
  /** Told of a change that may revoke tokens: a reloaded configuration, a provider's keys replaced. */
  revoked?: () => void;
  log?: (message: string) => void;
}

export interface JWTSetup {
  authenticators: JWTAuthenticatorSet;
  /** The file's anonymous section, which replaces --anonymous-auth. */
  anonymous?: AnonymousConfig;
  close(): void;
}

const entriesOf = (loaded: LoadedConfig): JWTEntry[] => loaded.config.jwt.map((config, i) => ({ config, rules: loaded.rules[i] }));

function fromFlags(flags: OidcFlags, disallowed: string[]): JWTEntry | undefined {
  const described = oidcAuthenticatorConfig(flags);
  if (!described) return undefined;
  const { errors, rules } = validateJWTAuthenticator(described.config, 'jwt[0]', disallowed);
  if (errors.length) throw new OidcFlagsError(`invalid authentication configuration: ${aggregate(errors)}`);
  return { config: described.config, rules, algorithms: described.algorithms };
}

/** Builds the JWT authenticators; undefined when neither flags nor file ask for any. Throws on a bad setup. */
export function setUpJWT(opts: JWTOptions): JWTSetup | undefined {
  const log = opts.log ?? (() => undefined);
  const disallowed = opts.disallowedIssuers ?? [];
  const file = opts.authenticationConfigFile;
  if (!file) {
    const entry = opts.oidc && fromFlags(opts.oidc, disallowed);
    if (!entry) return undefined;
    const authenticators = new JWTAuthenticatorSet(opts.apiAudiences ?? [], { log, changed: opts.revoked });
    authenticators.replace([entry]);
    return { authenticators, close: () => authenticators.close() };
  }
  if (opts.oidc?.anySet) throw new AuthenticationConfigError('authentication-config file and oidc-* flags are mutually exclusive');
  const loaded = loadAuthenticationConfig(file, disallowed);
  if (loaded.config.anonymous && opts.anonymousAuthSet) {
    throw new AuthenticationConfigError('anonymous: Forbidden: --anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file');
  }
  const authenticators = new JWTAuthenticatorSet(opts.apiAudiences ?? [], { log, changed: opts.revoked });
  authenticators.replace(entriesOf(loaded));
  const metrics = new AuthenticationConfigMetrics(opts.registry ?? new Registry());
  const reloader = new AuthenticationConfigReloader({
    path: file, initial: loaded, metrics, disallowedIssuers: disallowed, log,
    apply: (next) => { authenticators.replace(entriesOf(next)); opts.revoked?.(); },
  }).start();
  return { authenticators, anonymous: loaded.config.anonymous, close: () => { reloader.stop(); authenticators.close(); } };
}
