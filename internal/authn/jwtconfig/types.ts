// AuthenticationConfiguration (apiserver.config.svc.io/v1, v1beta1): JWT
// authenticators and the anonymous section, as read from --authentication-config.

export interface Issuer {
  url: string;
  /** Where discovery is read instead of `{url}/.well-known/openid-configuration`. */
  discoveryURL: string;
  /** PEM CAs for the provider's connections; the system roots when empty. */
  certificateAuthority: string;
  audiences: string[];
  audienceMatchPolicy: string;
  egressSelectorType: string;
}

export interface ClaimValidationRule {
  claim: string;
  requiredValue: string;
  expression: string;
  message: string;
}

export interface PrefixedClaimOrExpression {
  claim: string;
  /** Absent and empty differ: a claim needs a prefix, which may be empty. */
  prefix?: string;
  expression: string;
}

export interface ClaimOrExpression {
  claim: string;
  expression: string;
}

export interface ExtraMapping {
  key: string;
  valueExpression: string;
}

export interface ClaimMappings {
  username: PrefixedClaimOrExpression;
  groups: PrefixedClaimOrExpression;
  uid: ClaimOrExpression;
  extra: ExtraMapping[];
}

export interface UserValidationRule {
  expression: string;
  message: string;
}

export interface JWTAuthenticatorConfig {
  issuer: Issuer;
  claimValidationRules: ClaimValidationRule[];
  claimMappings: ClaimMappings;
  userValidationRules: UserValidationRule[];
}

export interface AnonymousConfig {
  enabled: boolean;
  /** Paths anonymous requests may reach; empty: every path. */
  conditions: Array<{ path: string }>;
}

export interface AuthenticationConfiguration {
  jwt: JWTAuthenticatorConfig[];
  anonymous?: AnonymousConfig;
}
