// The authorization service: authorizers, their chain and the RPC handler.
export * from './types.js';
export { AlwaysAllowAuthorizer, AlwaysDenyAuthorizer, PrivilegedGroupAuthorizer } from './builtin.js';
export { UnionAuthorizer } from './chain.js';
export { AbacAuthorizer, parsePolicies, ABAC_VERSION } from './abac.js';
export {
  AUTHORIZATION_MODES, AuthzConfigError, buildAuthorizer, privilegedChain, validateModes, type AuthorizerContext, type WebhookFlags,
} from './modes.js';
export { AuthzMetrics, MeasuredAuthorizer } from './metrics.js';
export { NodeAuthorizer, nodeIdentity, NODE_USER_PREFIX, NODES_GROUP } from './node/authorizer.js';
export { NodeGraph } from './node/graph.js';
export { NodeGraphPopulator } from './node/populator.js';
export { ConfigController } from './config/controller.js';
export { parseAuthorizationConfig, CONFIG_API_VERSION, CONFIG_KIND } from './config/file.js';
export { AuthorizationConfigError } from './config/errors.js';
export { AUTHZ_SERVICE_NAME, attributesOf, authorizeHandler, authzService } from './service.js';
export { authorizerFromFlags, authorizerTypes, type Chain } from './startup.js';
