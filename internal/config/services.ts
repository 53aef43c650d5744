// The flags of every service, in one place: each program parses its own set and
// the launcher routes each flag it is given to the services that own it.
import type { FlagSet } from './flags.js';
import { CONTROLLER_MANAGER_NAME, NAMESPACE_SYSTEM } from '../names/index.js';

const listen = (port: number): FlagSet => ({
  listen: { type: 'string', default: `127.0.0.1:${port}`, help: 'gRPC listen address: host:port (port 0 picks a free one) or unix:///absolute/path' },
});
const natsUrl: FlagSet = { 'nats-url': { type: 'string', default: 'nats://127.0.0.1:4222', help: 'NATS server URL, or a comma list of the URLs of a NATS cluster\'s nodes (connects to any, moves to another when it goes)' } };
const storagePeer: FlagSet = { 'storage-address': { type: 'string', default: '127.0.0.1:7001', help: 'address of the storage service (host:port or unix:///path), or a comma list of its replicas\' (calls go to the first that serves)' } };
const dataDir: FlagSet = { 'data-dir': { type: 'string', default: './data', help: 'directory holding the data of the server' } };

export const DEFAULT_PORTS = { storage: 7001, authn: 7002, authz: 7003, admission: 7004 } as const;

export const storageFlags: FlagSet = {
  ...listen(DEFAULT_PORTS.storage), ...natsUrl, ...dataDir,
  'history-window': { type: 'duration', default: '5m', help: 'how long history is kept for watches, older reads and continue tokens (etcd3: the compaction interval, unless --etcd-compaction-interval is given)' },
  'storage-backend': { type: 'string', default: 'leveldb', help: 'where objects are kept: leveldb (embedded, under --data-dir) or etcd3 (--etcd-servers)' },
  'etcd-servers': { type: 'list', default: '', help: 'etcd servers (etcd3): http(s)://host:port,...' },
  'etcd-prefix': { type: 'string', default: '/registry', help: 'prefix of every key in etcd (etcd3)' },
  'etcd-cafile': { type: 'string', default: '', help: 'CA bundle that verifies the etcd servers (etcd3, https)' },
  'etcd-certfile': { type: 'string', default: '', help: 'client certificate presented to etcd (etcd3, https)' },
  'etcd-keyfile': { type: 'string', default: '', help: 'key of --etcd-certfile' },
  'etcd-compaction-interval': { type: 'duration', default: '', help: 'etcd3: how often etcd is compacted (default 5m, 0: never); leveldb: alias of --history-window' },
};

// Authn reads it too (anonymous access is off when AlwaysAllow is among the modes), and admission
// (NodeRestriction goes with Node).
const authorizationMode: FlagSet = {
  'authorization-mode': { type: 'list', default: 'Node,RBAC', help: 'ordered authorizers: Node, RBAC, ABAC, Webhook, AlwaysAllow, AlwaysDeny' },
  'authorization-config': { type: 'string', default: '', help: 'AuthorizationConfiguration file (apiserver.config.svc.io/v1); excludes --authorization-mode and --authorization-webhook-*' },
};

/** Token webhook (authn). */
const tokenWebhookFlags: FlagSet = {
  'authentication-token-webhook-config-file': { type: 'string', default: '', help: 'kubeconfig-format file naming the TokenReview webhook (server, CA) and this server\'s client credentials' },
  'authentication-token-webhook-version': { type: 'string', default: 'v1beta1', help: 'version of the TokenReview sent to the webhook: v1beta1 or v1' },
  'authentication-token-webhook-cache-ttl': { type: 'duration', default: '2m', help: 'how long webhook answers are cached' },
};

/** The authenticating proxy; authn reads all of them, the gateway asks clients for certificates of its CA. */
const requestHeaderCa: FlagSet = {
  'requestheader-client-ca-file': { type: 'string', default: '', help: "CA bundle that verifies the authenticating proxy's client certificate before its headers are trusted" },
};
const requestHeaderFlags: FlagSet = {
  ...requestHeaderCa,
  'requestheader-username-headers': { type: 'list', default: '', help: 'headers holding the user name, first non-empty wins (e.g. X-Remote-User)' },
  'requestheader-group-headers': { type: 'list', default: '', help: 'headers whose every value is a group (e.g. X-Remote-Group)' },
  'requestheader-extra-headers-prefix': { type: 'list', default: '', help: 'header prefixes of extra fields (e.g. X-Remote-Extra-)' },
  'requestheader-allowed-names': { type: 'list', default: '', help: "common names allowed for the proxy's certificate (empty: any the CA signed)" },
};

const oidcFlags: FlagSet = {
  'oidc-issuer-url': { type: 'string', default: '', help: 'https URL of the OpenID issuer whose ID tokens are accepted' },
  'oidc-client-id': { type: 'string', default: '', help: 'client ID every ID token must be issued for (its aud)' },
  'oidc-ca-file': { type: 'string', default: '', help: "PEM CAs of the issuer's web certificate (default: the host's roots)" },
  'oidc-username-claim': { type: 'string', default: 'sub', help: 'claim used as the user name' },
  'oidc-username-prefix': { type: 'string', default: '', help: "prefix of user names (default '<issuer>#' unless the claim is email; '-' for none)" },
  'oidc-groups-claim': { type: 'string', default: '', help: 'claim (string or list of strings) used as groups' },
  'oidc-groups-prefix': { type: 'string', default: '', help: 'prefix of groups' },
  'oidc-required-claim': { type: 'array', default: '', help: 'key=value a claim must have; repeatable' },
  'oidc-signing-algs': { type: 'list', default: 'RS256', help: 'accepted signing algorithms: RS256,RS384,RS512,ES256,ES384,ES512,PS256,PS384,PS512' },
};

/** Bootstrap and service-account tokens (authn); the launcher fills in the serving key and the data dir. */
const serviceAccountTokenFlags: FlagSet = {
  'enable-bootstrap-token-auth': { type: 'bool', default: 'false', help: 'accept bootstrap tokens (Secrets of type bootstrap.svc.io/token in svc-system)' },
  'service-account-key-file': { type: 'array', default: '', help: 'PEM file of RSA/ECDSA keys (public or private) that verify service-account tokens; repeatable (default: the serving key)' },
  'service-account-signing-key-file': { type: 'string', default: '', help: 'PEM private key that signs service-account tokens (default: the serving key)' },
  'service-account-issuer': { type: 'array', default: 'https://kubernetes.default.svc.cluster.local', help: 'issuer of service-account tokens; repeatable: the first signs, all are accepted' },
  'api-audiences': { type: 'list', default: '', help: "the API's audiences, which tokens must name (default: the issuers)" },
  'service-account-max-token-expiration': { type: 'duration', default: '', help: 'longest lifetime of a requested token (default: no limit)' },
  'service-account-extend-token-expiration': { type: 'bool', default: 'true', help: "give node agents' pod-bound tokens of 3607s a year, warning after 3607s" },
  'service-account-lookup': { type: 'bool', default: 'true', help: 'refuse Secret-based tokens whose Secret or ServiceAccount is gone' },
  'service-account-jwks-uri': { type: 'string', default: '', help: 'jwks_uri of the issuer discovery document (default: the API server\'s /openid/v1/jwks)' },
  'tls-private-key-file': { type: 'string', default: '', help: 'key of --tls-cert-file' },
  ...dataDir,
};

export const authnFlags: FlagSet = {
  ...listen(DEFAULT_PORTS.authn), ...storagePeer, ...natsUrl, ...authorizationMode,
  'token-auth-file': { type: 'string', default: '', help: 'CSV file of static bearer tokens: token,user,uid,"group1,group2"' },
  'client-ca-file': { type: 'string', default: '', help: 'PEM bundle of CAs that sign accepted client certificates' },
  'anonymous-auth': { type: 'bool', default: 'true', help: 'treat requests without credentials as system:anonymous (never with --authorization-mode=AlwaysAllow)' },
  ...tokenWebhookFlags, ...requestHeaderFlags,
  ...oidcFlags,
  'authentication-config': { type: 'string', default: '', help: 'AuthenticationConfiguration file (JWT authenticators, anonymous section); reloaded when it changes; not with --oidc-* flags' },
  ...serviceAccountTokenFlags,
};

export const authzFlags: FlagSet = {
  ...listen(DEFAULT_PORTS.authz), ...storagePeer, ...natsUrl, ...authorizationMode,
  'authorization-policy-file': { type: 'string', default: '', help: 'ABAC policy file, one JSON policy a line (with --authorization-mode=ABAC)' },
  'authorization-webhook-config-file': { type: 'string', default: '', help: 'client configuration file of the authorization webhook (with --authorization-mode=Webhook)' },
  'authorization-webhook-version': { type: 'string', default: 'v1beta1', help: 'SubjectAccessReview version sent to the webhook: v1beta1 or v1' },
  'authorization-webhook-cache-authorized-ttl': { type: 'duration', default: '5m', help: 'how long allowed webhook answers are kept' },
  'authorization-webhook-cache-unauthorized-ttl': { type: 'duration', default: '30s', help: 'how long other webhook answers are kept' },
};

const authzPeer: FlagSet = {
  'authz-address': { type: 'string', default: `127.0.0.1:${DEFAULT_PORTS.authz}`, help: 'address of the authorization service (host:port or unix:///path), or a comma list of its replicas\' (calls go to the first that serves)' },
};

export const admissionFlags: FlagSet = {
  ...listen(DEFAULT_PORTS.admission), ...storagePeer, ...natsUrl, ...authorizationMode, ...authzPeer,
  'enable-admission-plugins': { type: 'list', default: '', help: 'admission plugins to enable besides the defaults' },
  'disable-admission-plugins': { type: 'list', default: '', help: 'default admission plugins to disable' },
  'admission-control-config-file': { type: 'string', default: '', help: 'AdmissionConfiguration file (apiserver.config.svc.io/v1) giving plugins their configuration' },
  'default-not-ready-toleration-seconds': { type: 'int', default: '300', help: 'tolerationSeconds of the not-ready:NoExecute toleration DefaultTolerationSeconds gives pods without one' },
  'default-unreachable-toleration-seconds': { type: 'int', default: '300', help: 'tolerationSeconds of the unreachable:NoExecute toleration DefaultTolerationSeconds gives pods without one' },
  'feature-gates': { type: 'string', default: '', help: 'feature gates to switch: Name=true|false,...' },
};

export const gatewayFlags: FlagSet = {
  ...natsUrl, ...dataDir, ...storagePeer,
  'bind-address': { type: 'string', default: '127.0.0.1', help: 'address the HTTPS server listens on' },
  'secure-port': { type: 'int', default: '6443', help: 'HTTPS port (0 picks a free one)' },
  'authn-address': { type: 'string', default: `127.0.0.1:${DEFAULT_PORTS.authn}`, help: 'address of the authentication service (host:port or unix:///path), or a comma list of its replicas\' (calls go to the first that serves)' },
  ...authzPeer,
  'admission-address': { type: 'string', default: `127.0.0.1:${DEFAULT_PORTS.admission}`, help: 'address of the admission service (host:port or unix:///path), or a comma list of its replicas\' (calls go to the first that serves)' },
  'tls-cert-file': { type: 'string', default: '', help: 'serving certificate (default: generated under --data-dir/pki)' },
  'tls-private-key-file': { type: 'string', default: '', help: 'key of --tls-cert-file' },
  'client-ca-file': { type: 'string', default: '', help: 'CA bundle of client certificates (asked for in the TLS handshake; authn verifies them)' },
  ...requestHeaderCa,
  'request-timeout': { type: 'duration', default: '60s', help: 'deadline of every request that is not long-running (watch, proxy, log, exec); past it the answer is 504 (0s: none)' },
  'max-requests-inflight': { type: 'int', default: '400', help: 'most read-only requests served at once (watches excluded); more are answered 429 (0: no limit)' },
  'max-mutating-requests-inflight': { type: 'int', default: '200', help: 'most mutating requests served at once; more are answered 429 (0: no limit)' },
  'min-request-timeout': { type: 'int', default: '1800', help: 'minimum seconds a watch stays open before the server ends it' },
  'feature-gates': { type: 'string', default: '', help: 'feature gates to switch: Name=true|false,...' },
  'serve-upstream-group-names': { type: 'bool', default: 'true', help: 'serve each renamed group (x.svc.io) under its upstream name (x.k8s.io) too, as an alias of the same objects; false serves only the svc.io names' },
  'runtime-config': { type: 'string', default: '', help: 'group versions or resources to serve or not: batch/v1=false,storage.svc.io/v1beta1,api/beta=true,...' },
  'livez-grace-period': { type: 'duration', default: '0s', help: 'how long after start /livez may fail before it reports the process as dead' },
  'shutdown-delay-duration': { type: 'duration', default: '0s', help: 'on SIGTERM, how long /readyz fails while requests are still served, before shutting down' },
};

export const controllerManagerFlags: FlagSet = {
  ...dataDir,
  server: { type: 'string', default: 'https://127.0.0.1:6443', help: "the gateway to work through (its client certificate and CA come from --data-dir's PKI)" },
  controllers: { type: 'list', default: '*', help: "controllers to run: '*' the default ones, 'name' adds one, '-name' removes one (bootstrapsigner, tokencleaner and root-ca-cert-publisher are off by default)" },
  'resource-quota-sync-period': { type: 'duration', default: '5m', help: 'how often every quota\'s usage is recomputed in full' },
  'concurrent-resource-quota-syncs': { type: 'int', default: '5', help: 'quotas recomputed at once' },
  'concurrent-job-syncs': { type: 'int', default: '5', help: 'Jobs synced at once' },
  'concurrent-ttl-after-finished-syncs': { type: 'int', default: '5', help: 'finished Jobs deleted at once' },
  'service-account-private-key-file': { type: 'string', default: '', help: "PEM private key that signs legacy service-account token Secrets (default: --data-dir's serving key, as the authn service signs with by default)" },
  'use-service-account-credentials': { type: 'bool', default: 'true', help: "each controller acts as its own ServiceAccount in svc-system (made if missing, with short-lived tokens from the TokenRequest API) and so has only its role's rights; false: every controller acts as the controller-manager" },
  'root-ca-file': { type: 'string', default: '', help: "the cluster CA published in every namespace and in token Secrets (default: --data-dir's CA)" },
  'leader-elect': { type: 'bool', default: 'true', help: 'run the controllers only while holding the leader Lease, so several controller-managers can run and one acts' },
  'leader-elect-lease-duration': { type: 'duration', default: '15s', help: "how long a candidate waits after the leader's last renewal before taking the Lease over" },
  'leader-elect-renew-deadline': { type: 'duration', default: '10s', help: 'how long the leader keeps trying to renew before it stops leading (and exits)' },
  'leader-elect-retry-period': { type: 'duration', default: '2s', help: 'how often a candidate tries to take the Lease and the leader renews it' },
  'leader-elect-resource-name': { type: 'string', default: CONTROLLER_MANAGER_NAME, help: 'the name of the leader Lease' },
  'leader-elect-resource-namespace': { type: 'string', default: NAMESPACE_SYSTEM, help: 'the namespace of the leader Lease' },
};

export const SERVICE_FLAGS = {
  storage: storageFlags, authn: authnFlags, authz: authzFlags, admission: admissionFlags, gateway: gatewayFlags,
  'controller-manager': controllerManagerFlags,
} as const;
export type ServiceName = keyof typeof SERVICE_FLAGS;

/**
 * Node options of each service process. V8 lets the young generation of a busy
 * process grow to 128 MB and keeps it; capped at 4 MB semi-spaces, the services grow
 * about half as much per 100k objects written, at the same CPU time. The gateway is
 * the exception: 32 concurrent creates keep each request's objects alive across its
 * calls to admission and storage, so with 4 MB they outlive two scavenges, are
 * promoted and are found again by full collections (14-15% of its CPU under creates);
 * 16 MB semi-spaces bring that to about 5% for some 35-70 MB more resident memory.
 */
export function serviceNodeArgs(service: ServiceName): string[] {
  return [`--max-semi-space-size=${service === 'gateway' ? 16 : 4}`];
}
