// Checks of a verified token against the objects it names, from memory: the
// service account must still exist with the same uid, and so must the Secret,
// Pod or Node a token is bound to. Objects deleted more than a minute ago (or
// gone) revoke the token.
import { SERVICE_ACCOUNT_CLAIM } from '../names/index.js';
import { LEGACY_CLAIMS, type Ref, type ServiceAccountInfo, type TokenClaims } from './claims.js';
import type { BoundResource, ObjectLookup, ObjectRecord } from './lookup.js';

/** Clock skew allowed for times in tokens and deletions, as upstream. */
export const LEEWAY_MS = 60_000;

/** A token that is well signed but not (or no longer) valid. */
export class TokenValidationError extends Error {}

const fail = (message: string): never => { throw new TokenValidationError(message); };

const deletedBefore = (record: ObjectRecord, limit: number): boolean =>
  Boolean(record.deletionTimestamp) && Date.parse(record.deletionTimestamp!) < limit;

/** Where the checks note when the token stops being valid because an object it names is being deleted (ms since the epoch). */
export interface Deadline {
  at: number;
}

/** An object being deleted vouches for the token until its deletion is a leeway old. */
function noteDeletion(record: ObjectRecord, deadline?: Deadline): void {
  if (deadline && record.deletionTimestamp) deadline.at = Math.min(deadline.at, Date.parse(record.deletionTimestamp) + LEEWAY_MS);
}

/** The object a claim names, present and not long deleted; `invalid` is the message otherwise. */
function present(lookup: ObjectLookup, resource: BoundResource, namespace: string, ref: Ref, now: number, invalid: string, deadline?: Deadline): ObjectRecord {
  const record = lookup.get(resource, namespace, ref.name ?? '');
  if (!record || deletedBefore(record, now - LEEWAY_MS)) return fail(invalid);
  noteDeletion(record, deadline);
  return record;
}

const uidMismatch = (what: string, actual: string, claimed: string | undefined) =>
  new TokenValidationError(`${what} UID (${actual}) does not match ${what === 'service account' ? 'claim' : `service account ${what} ref claim`} (${claimed ?? ''})`);

/** The exp, nbf and iat of a token, within the leeway. */
export function checkTimes(claims: TokenClaims, now: number): void {
  if (typeof claims.exp === 'number' && now - LEEWAY_MS > claims.exp * 1000) fail('service account token has expired');
  if (typeof claims.nbf === 'number' && now + LEEWAY_MS < claims.nbf * 1000) fail('service account token is not valid yet');
  if (typeof claims.iat === 'number' && now + LEEWAY_MS < claims.iat * 1000) fail('service account token claims could not be validated due to unexpected validation error');
}

function serviceAccount(lookup: ObjectLookup, namespace: string, ref: Ref, now: number, deadline?: Deadline): ObjectRecord {
  const sa = lookup.get('serviceaccounts', namespace, ref.name ?? '');
  if (!sa) return fail(`serviceaccounts "${ref.name ?? ''}" not found`);
  if (deletedBefore(sa, now - LEEWAY_MS)) fail(`service account ${namespace}/${ref.name} has been deleted`);
  noteDeletion(sa, deadline);
  return sa;
}

/** A bound token (TokenRequest): its service account and bound objects must still be there. */
export function validateBound(claims: TokenClaims, lookup: ObjectLookup, now: number, deadline?: Deadline): ServiceAccountInfo {
  const claim = claims[SERVICE_ACCOUNT_CLAIM];
  if (!claim || typeof claim !== 'object' || !claim.namespace || !claim.serviceaccount?.name) return fail('service account token claims are missing');
  const { namespace } = claim;
  const sa = serviceAccount(lookup, namespace, claim.serviceaccount, now, deadline);
  if (sa.uid !== claim.serviceaccount.uid) throw uidMismatch('service account', sa.uid, claim.serviceaccount.uid);
  const invalidated = 'service account token has been invalidated';
  if (claim.secret) {
    const secret = present(lookup, 'secrets', namespace, claim.secret, now, invalidated, deadline);
    if (secret.uid !== claim.secret.uid) throw uidMismatch('secret', secret.uid, claim.secret.uid);
  }
  const info: ServiceAccountInfo = { namespace, name: claim.serviceaccount.name, uid: claim.serviceaccount.uid ?? '' };
  if (claim.pod) {
    const pod = present(lookup, 'pods', namespace, claim.pod, now, invalidated, deadline);
    if (pod.uid !== claim.pod.uid) throw uidMismatch('pod', pod.uid, claim.pod.uid);
    info.pod = claim.pod;
    if (claim.node) info.node = claim.node; // a pod's node is information, not a binding
  } else if (claim.node) {
    const node = present(lookup, 'nodes', '', claim.node, now, invalidated, deadline);
    if (node.uid !== claim.node.uid) throw uidMismatch('node', node.uid, claim.node.uid);
    info.node = claim.node;
  }
  if (typeof claims.jti === 'string' && claims.jti) info.credentialId = `JTI=${claims.jti}`;
  return info;
}

const stringClaim = (claims: TokenClaims, name: string, what: string): string => {
  const value = claims[name];
  return typeof value === 'string' && value ? value : fail(`${what} claim is missing`);
};

/** A Secret-based token: with lookup on, its Secret must still hold it and its service account be the same. */
export function validateLegacy(claims: TokenClaims, token: string, lookup: ObjectLookup | undefined, now: number, deadline?: Deadline): ServiceAccountInfo {
  const namespace = stringClaim(claims, LEGACY_CLAIMS.namespace, 'namespace');
  const secretName = stringClaim(claims, LEGACY_CLAIMS.secretName, 'secretName');
  const name = stringClaim(claims, LEGACY_CLAIMS.serviceAccountName, 'serviceAccountName');
  const uid = stringClaim(claims, LEGACY_CLAIMS.serviceAccountUid, 'serviceAccountUID');
  if (!lookup) return { namespace, name, uid };
  const secret = present(lookup, 'secrets', namespace, { name: secretName }, now, 'token has been invalidated', deadline);
  if (secret.token !== token) fail("token does not match server's copy");
  if (secret.invalidSince) {
    fail(`the token in secret ${namespace}/${secretName} for service account ${namespace}/${name} has been marked invalid. `
      + `Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the '${secret.invalidSince.label}' label from the secret to regain access`);
  }
  const sa = serviceAccount(lookup, namespace, { name }, now, deadline);
  if (sa.uid !== uid) throw uidMismatch('service account', sa.uid, uid);
  return { namespace, name, uid };
}
