// Secret-based (legacy) service-account tokens, as the token controller writes
// them into Secrets: a JWT of the legacy issuer with flat claims naming the
// namespace, the Secret and the service account, without audience or expiry.
import { SignJWT } from 'jose';
import { LEGACY_SERVICE_ACCOUNT_ISSUER } from '../names/index.js';
import { LEGACY_CLAIMS, usernameOf } from './claims.js';
import type { TokenKey } from './keys.js';

export interface LegacyTokenSubject {
  namespace: string;
  secretName: string;
  serviceAccount: { name: string; uid: string };
}

export function issueLegacyToken(key: TokenKey, s: LegacyTokenSubject): Promise<string> {
  return new SignJWT({
    [LEGACY_CLAIMS.namespace]: s.namespace, [LEGACY_CLAIMS.secretName]: s.secretName,
    [LEGACY_CLAIMS.serviceAccountName]: s.serviceAccount.name, [LEGACY_CLAIMS.serviceAccountUid]: s.serviceAccount.uid,
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid })
    .setIssuer(LEGACY_SERVICE_ACCOUNT_ISSUER)
    .setSubject(usernameOf(s.namespace, s.serviceAccount.name))
    .sign(key.key);
}
