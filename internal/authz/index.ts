// The authorization service: authorizers, their chain and the RPC handler.
export * from './types.js';
export { AlwaysAllowAuthorizer, AlwaysDenyAuthorizer, PrivilegedGroupAuthorizer } from './builtin.js';
export { UnionAuthorizer } from './chain.js';
export { AUTHORIZATION_MODES, AuthzConfigError, buildAuthorizer, validateModes, type AuthorizerContext } from './modes.js';
export { AUTHZ_SERVICE_NAME, attributesOf, authorizeHandler, authzService } from './service.js';
