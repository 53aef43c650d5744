// The authentication service: authenticators, their chain and the RPC handler.
export * from './types.js';
export { AuthenticationChain, UnionAuthenticator, withAuthenticatedGroup, anonymous, NO_CREDENTIALS, type Outcome } from './chain.js';
export { BearerTokenAuthenticator, SPACE_BEFORE_TOKEN_WARNING, authenticateToken, bearerToken, parseBearer } from './bearer.js';
export { RequestHeaderAuthenticator, credentialHeaderNames, type RequestHeaderConfig } from './requestheader.js';
export { WebhookTokenAuthenticator, webhookTokenAuthenticator, TOKEN_REVIEW_VERSIONS, type TokenReviewVersion, type WebhookTokenOptions } from './webhook.js';
export { CachedTokenAuthenticator } from './tokencache.js';
export { TokenFileAuthenticator, TokenFileError, loadTokenFile, parseTokenFile, type TokenFile } from './tokenfile.js';
export { X509Authenticator, Certificate, parseCaBundle, verifyClientChain } from './x509.js';
export { parseCsv, CsvError } from './csv.js';
export {
  AUTHN_SERVICE_NAME, AuthnConfigError, authenticateHandler, authenticateTokenHandler, authnService, buildAuthenticationChain, credentialsOf, toUserInfo,
  type AuthnOptions, type AuthnServiceOptions, type BuiltChain,
} from './service.js';
export { oidcFlags, type OidcFlags } from './jwt/oidcflags.js';
export { JWTAuthenticator, ALL_SIGNING_ALGORITHMS } from './jwt/authenticator.js';
export { JWTAuthenticatorSet } from './jwt/set.js';
export { ProviderKeys } from './jwt/keys.js';
export { decodeAuthenticationConfiguration, DecodeError } from './jwtconfig/decode.js';
export { validateAuthenticationConfiguration, validateJWTAuthenticator, type CompiledRules } from './jwtconfig/validate.js';
export { parseAuthenticationConfig, loadAuthenticationConfig, AuthenticationConfigReloader, AuthenticationConfigError } from './jwtconfig/file.js';
export { AuthenticationConfigMetrics, apiServerId } from './metrics.js';
export { setUpJWT, type JWTOptions } from './jwtsetup.js';
export { BootstrapTokenAuthenticator } from './bootstraptoken.js';
export { ServiceAccountTokenAuthenticator, type ServiceAccountTokenOptions } from './serviceaccounttoken.js';
export { startStoredTokens, type StoredTokens, type TokenOptions } from './tokens.js';
export { issuingHandlers } from './issuing.js';
export { SUCCESS_CACHE_TTL_MS, cacheTtl, type Revocations } from './caching.js';
