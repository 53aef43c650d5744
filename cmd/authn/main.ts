// The authentication service process.
import { parseArgsOrExit } from '../../internal/config/flags.js';
import { authnFlags } from '../../internal/config/services.js';
import { initTracing } from '../../internal/tracing/index.js';
import { runServer } from '../../internal/rpc/index.js';
import { Registry } from 'prom-client';
import { metricsService } from '../../internal/metrics/index.js';
import { pkiPaths } from '../../internal/pki/index.js';
import { StorageClient } from '../../internal/storage/client.js';
import { authorizerTypes } from '../../internal/authz/startup.js';
import { GenerationPublisher, AnswerGeneration } from '../../internal/rpc/generation.js';
import { NATS_AUTHN_GENERATION_SUBJECT } from '../../internal/names/index.js';
import {
  authnService, buildAuthenticationChain, issuingHandlers, oidcFlags, startStoredTokens, type BuiltChain, type StoredTokens,
} from '../../internal/authn/index.js';

const flags = parseArgsOrExit('authn', authnFlags);
const registry = new Registry();
await initTracing('authn');

/** How long the start waits for the mirrors of stored objects before serving anyway (they keep syncing). */
const SYNC_TIMEOUT_MS = 2_000;

const storage = new StorageClient(flags.string('storage-address'));
// The revocation generation, announced on NATS so gateways drop the answers they keep.
const revocation = new AnswerGeneration();
const publisher = new GenerationPublisher(revocation, { subject: NATS_AUTHN_GENERATION_SUBJECT, program: 'authn' });
const revoked = () => revocation.bump();
let built: BuiltChain;
let stored: StoredTokens;
try {
  stored = startStoredTokens({
    enableBootstrapTokenAuth: flags.bool('enable-bootstrap-token-auth'),
    keyFiles: flags.array('service-account-key-file'),
    signingKeyFile: flags.string('service-account-signing-key-file'),
    defaultKeyFile: flags.string('tls-private-key-file') || pkiPaths(flags.string('data-dir')).servingKey,
    issuers: flags.array('service-account-issuer'),
    apiAudiences: flags.list('api-audiences'),
    maxExpirationSeconds: flags.string('service-account-max-token-expiration') ? Math.floor(flags.duration('service-account-max-token-expiration') / 1000) : 0,
    extendExpiration: flags.bool('service-account-extend-token-expiration'),
    lookup: flags.bool('service-account-lookup'),
    jwksUri: flags.string('service-account-jwks-uri'),
  }, storage, revoked);
  built = buildAuthenticationChain({
    clientCaFile: flags.string('client-ca-file'),
    tokenAuthFile: flags.string('token-auth-file'),
    anonymousAuth: flags.bool('anonymous-auth'),
    authorizationModes: authorizerTypes(flags),
    apiAudiences: stored.apiAudiences,
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
    tokenAuthenticators: stored.authenticators,
    jwt: {
      oidc: oidcFlags(flags),
      authenticationConfigFile: flags.string('authentication-config'),
      anonymousAuthSet: flags.given.has('anonymous-auth'),
      disallowedIssuers: flags.array('service-account-issuer'),
      apiAudiences: stored.apiAudiences,
      registry,
      revoked,
      log: (message) => process.stderr.write(`authn: ${message}\n`),
    },
  });
} catch (err) {
  process.stderr.write(`authn: ${(err as Error).message}\n`);
  process.exit(1);
}
for (const warning of [...stored.warnings, ...built.warnings]) process.stderr.write(`authn: warning: ${warning}\n`);
if (!(await stored.waitForSync(SYNC_TIMEOUT_MS))) process.stderr.write('authn: warning: storage has not answered yet: bootstrap and service-account tokens are accepted once it does\n');

const logRefusal = (remote: string, error: string) =>
  process.stderr.write(`authn: unable to authenticate the request from ${remote || 'unknown'}: ${error}\n`);
publisher.start(flags.string('nats-url'));
await runServer('authn', flags.string('listen'), [
  authnService(built, {
    onRefusal: logRefusal, more: issuingHandlers(stored.issuer, stored.lookup, stored.info), registry,
    revocations: { current: () => (publisher.connected ? revocation.current : '') },
  }),
  metricsService(registry),
], { afterStop: () => { built.close(); stored.stop(); storage.close(); void publisher.close(); } });
