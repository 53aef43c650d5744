// The authentication service process.
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { authnFlags } from '../../internal/config/services.js';
import { initTracing } from '../../internal/tracing/index.js';
import { runServer } from '../../internal/rpc/index.js';
import { Registry } from 'prom-client';
import { authnService, buildAuthenticationChain, oidcFlags, type BuiltChain } from '../../internal/authn/index.js';
import { metricsService } from '../../internal/metrics/index.js';

const flags = parseArgsOrExit('authn', authnFlags);
const registry = new Registry();
initTracing('authn');

let built: BuiltChain;
try {
  built = buildAuthenticationChain({
    clientCaFile: flags.string('client-ca-file'),
    tokenAuthFile: flags.string('token-auth-file'),
    anonymousAuth: flags.bool('anonymous-auth'),
    authorizationModes: flags.list('authorization-mode'),
    webhook: {
      configFile: flags.string('authentication-token-webhook-config-file'),
      version: flags.string('authentication-token-webhook-version'),
      cacheTtlMs: flags.duration('authentication-token-webhook-cache-ttl'),
    },
    requestHeader: {
      clientCaFile: flags.string('requestheader-client-ca-file'),
      usernameHeaders: flags.list('requestheader-username-headers').map((h) => h.toLowerCase()),
      groupHeaders: flags.list('requestheader-group-headers').map((h) => h.toLowerCase()),
      extraHeaderPrefixes: flags.list('requestheader-extra-headers-prefix').map((h) => h.toLowerCase()),
      allowedNames: flags.list('requestheader-allowed-names'),
    },
    jwt: {
      oidc: oidcFlags(flags),
      authenticationConfigFile: flags.string('authentication-config'),
      anonymousAuthSet: flags.given.has('anonymous-auth'),
      registry,
      log: (message) => process.stderr.write(`authn: ${message}\n`),
    },
  });
} catch (err) {
  process.stderr.write(`authn: ${(err as Error).message}\n`);
  process.exit(1);
}
for (const warning of built.warnings) process.stderr.write(`authn: warning: ${warning}\n`);

const logRefusal = (remote: string, error: string) =>
  process.stderr.write(`authn: unable to authenticate the request from ${remote || 'unknown'}: ${error}\n`);
await runServer('authn', flags.string('listen'), [authnService(built, logRefusal), metricsService(registry)], { afterStop: () => built.close() });
