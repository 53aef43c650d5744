// Bootstrap tokens (document 2): `<id>.<secret>` bearer tokens kept in Secrets
// of type bootstrap.svc.io/token (or upstream's bootstrap.kubernetes.io/token) named bootstrap-token-<id> in svc-system. The
// authenticator, the ConfigMap signer and the token cleaner read them the same
// way through this module.
import { CompactSign } from 'jose';
import type { ApiObject } from '../apimachinery/meta.js';
import {
  BOOTSTRAP_TOKEN_SECRET_PREFIX, GROUP_BOOTSTRAPPERS, NAMESPACE_SYSTEM, SECRET_TYPE_BOOTSTRAP_TOKEN, isWellKnown,
} from '../names/index.js';

const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
/** An extra group: the bootstrappers' prefix, then a name that ends in a letter or digit. */
const EXTRA_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

export const KEY_TOKEN_ID = 'token-id';
export const KEY_TOKEN_SECRET = 'token-secret';
export const KEY_EXPIRATION = 'expiration';
export const KEY_USAGE_AUTHENTICATION = 'usage-bootstrap-authentication';
export const KEY_USAGE_SIGNING = 'usage-bootstrap-signing';
export const KEY_EXTRA_GROUPS = 'auth-extra-groups';

/** The id and secret of a bearer token of the bootstrap format; undefined for any other token. */
export function parseToken(token: string): { id: string; secret: string } | undefined {
  const m = TOKEN.exec(token);
  return m ? { id: m[1], secret: m[2] } : undefined;
}

export const secretName = (id: string): string => `${BOOTSTRAP_TOKEN_SECRET_PREFIX}${id}`;

/** One data key of a Secret, decoded; undefined when absent or not base64 text. */
export function dataValue(secret: ApiObject, key: string): string | undefined {
  const value = (secret.data as Record<string, unknown> | undefined)?.[key];
  return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : undefined;
}

/** A Secret that may hold a bootstrap token: the right type (in either spelling), namespace and name. */
export const isBootstrapSecret = (secret: ApiObject): boolean =>
  isWellKnown(secret.type, SECRET_TYPE_BOOTSTRAP_TOKEN) && secret.metadata?.namespace === NAMESPACE_SYSTEM
  && (secret.metadata?.name ?? '').startsWith(BOOTSTRAP_TOKEN_SECRET_PREFIX);

/** When the token expires (ms since the epoch); undefined when it never does, NaN when the value is not RFC 3339. */
export function expiresAt(secret: ApiObject): number | undefined {
  const text = dataValue(secret, KEY_EXPIRATION);
  if (text === undefined) return undefined;
  const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
  return rfc3339.test(text) ? Date.parse(text) : NaN;
}

/** Expired, or with an expiration that cannot be read (which counts as expired). */
export function hasExpired(secret: ApiObject, now = Date.now()): boolean {
  const at = expiresAt(secret);
  return at !== undefined && (Number.isNaN(at) || at <= now);
}

/** system:bootstrappers and the auth-extra-groups; throws when one of them is not a bootstrappers group. */
export function groupsOf(secret: ApiObject): string[] {
  const groups = [GROUP_BOOTSTRAPPERS];
  for (const raw of (dataValue(secret, KEY_EXTRA_GROUPS) ?? '').split(',')) {
    const group = raw.trim();
    if (!group) continue;
    if (!EXTRA_GROUP.test(group)) throw new Error(`bootstrap group "${group}" is invalid (must match ${EXTRA_GROUP.source})`);
    if (!groups.includes(group)) groups.push(group);
  }
  return groups;
}

/** A token the Secret holds for a usage (`usage-bootstrap-signing`, ...): its id and secret when valid now. */
export function usableToken(secret: ApiObject, usage: string, now = Date.now()): { id: string; secret: string } | undefined {
  if (!isBootstrapSecret(secret) || secret.metadata?.deletionTimestamp) return undefined;
  const id = dataValue(secret, KEY_TOKEN_ID);
  const tokenSecret = dataValue(secret, KEY_TOKEN_SECRET);
  if (!id || !tokenSecret || secret.metadata?.name !== secretName(id)) return undefined;
  if (!parseToken(`${id}.${tokenSecret}`) || hasExpired(secret, now) || dataValue(secret, usage) !== 'true') return undefined;
  return { id, secret: tokenSecret };
}

/** The detached JWS of document 2: HS256 keyed by the whole token, the payload left out (`header..signature`). */
export async function detachedSignature(content: string, id: string, tokenSecret: string): Promise<string> {
  const jws = await new CompactSign(Buffer.from(content, 'utf8'))
    .setProtectedHeader({ alg: 'HS256', kid: id })
    .sign(Buffer.from(`${id}.${tokenSecret}`, 'utf8'));
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}
