// The claims of service-account tokens and the user they stand for. Bound
// tokens carry a private claim under the platform's domain: the namespace, the
// service account and the object the token is bound to; Secret-based (legacy)
// tokens carry flat claims instead.
import {
  GROUP_SERVICEACCOUNTS, SERVICE_ACCOUNT_CLAIM, SERVICE_ACCOUNT_USER_PREFIX, legacyServiceAccountClaim, serviceAccountExtraKey,
} from '../names/index.js';

export interface Ref {
  name: string;
  uid?: string;
}

/** The private claim of a bound token. */
export interface PrivateClaim {
  namespace: string;
  serviceaccount: Ref;
  pod?: Ref;
  secret?: Ref;
  node?: Ref;
  /** An extended token: when it should have expired (seconds since the epoch). */
  warnafter?: number;
}

export interface TokenClaims {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  exp?: number;
  nbf?: number;
  iat?: number;
  jti?: string;
  [SERVICE_ACCOUNT_CLAIM]?: PrivateClaim;
  [legacy: string]: unknown;
}

export const LEGACY_CLAIMS = {
  namespace: legacyServiceAccountClaim('namespace'),
  secretName: legacyServiceAccountClaim('secret.name'),
  serviceAccountName: legacyServiceAccountClaim('service-account.name'),
  serviceAccountUid: legacyServiceAccountClaim('service-account.uid'),
};

export const EXTRA_KEYS = {
  podName: serviceAccountExtraKey('pod-name'),
  podUid: serviceAccountExtraKey('pod-uid'),
  nodeName: serviceAccountExtraKey('node-name'),
  nodeUid: serviceAccountExtraKey('node-uid'),
  credentialId: serviceAccountExtraKey('credential-id'),
};

export const usernameOf = (namespace: string, name: string): string => `${SERVICE_ACCOUNT_USER_PREFIX}${namespace}:${name}`;

/** What a validated token says about its caller. */
export interface ServiceAccountInfo {
  namespace: string;
  name: string;
  uid: string;
  pod?: Ref;
  node?: Ref;
  /** `JTI=<jti>` for tokens with an id. */
  credentialId?: string;
}

/** The user of a service account, with the extra the platform adds for bound tokens. */
export function userOf(info: ServiceAccountInfo): { username: string; uid: string; groups: string[]; extra: Record<string, string[]> } {
  const extra: Record<string, string[]> = {};
  if (info.pod?.name && info.pod.uid) {
    extra[EXTRA_KEYS.podName] = [info.pod.name];
    extra[EXTRA_KEYS.podUid] = [info.pod.uid];
  }
  if (info.credentialId) extra[EXTRA_KEYS.credentialId] = [info.credentialId];
  if (info.node?.name) {
    extra[EXTRA_KEYS.nodeName] = [info.node.name];
    if (info.node.uid) extra[EXTRA_KEYS.nodeUid] = [info.node.uid];
  }
  return {
    username: usernameOf(info.namespace, info.name), uid: info.uid,
    groups: [GROUP_SERVICEACCOUNTS, `${GROUP_SERVICEACCOUNTS}:${info.namespace}`], extra,
  };
}
