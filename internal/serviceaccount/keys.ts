// The keys of service-account tokens: PEM files of RSA or ECDSA keys (public,
// private or certificates) that verify, and one private key that signs. Key
// material never appears in messages.
import { X509Certificate, createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface TokenKey {
  /** A public key when verifying, the private key when signing. */
  key: KeyObject;
  /** RS256, ES256, ES384 or ES512. */
  alg: string;
  /** base64url of the SHA-256 of the public key's DER, as upstream names its keys. */
  kid: string;
}

export class KeyFileError extends Error {}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;
const PRIVATE_TYPES = new Set(['PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY']);
const PUBLIC_TYPES = new Set(['PUBLIC KEY', 'RSA PUBLIC KEY']);
const EC_ALGORITHMS: Record<string, string> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

function algorithmOf(key: KeyObject): string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  const alg = key.asymmetricKeyType === 'ec' ? EC_ALGORITHMS[key.asymmetricKeyDetails?.namedCurve ?? ''] : undefined;
  if (!alg) throw new KeyFileError(`unsupported key type ${key.asymmetricKeyType ?? 'unknown'}: only RSA and ECDSA (P-256, P-384, P-521) keys sign service-account tokens`);
  return alg;
}

export const keyId = (publicKey: KeyObject): string =>
  createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');

function publicKeyOf(type: string, block: string): KeyObject | undefined {
  if (type === 'CERTIFICATE') return new X509Certificate(block).publicKey;
  if (PRIVATE_TYPES.has(type)) return createPublicKey(createPrivateKey(block));
  if (PUBLIC_TYPES.has(type)) return createPublicKey(block);
  return undefined; // EC PARAMETERS and the like
}

const readPem = (path: string): string => {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new KeyFileError(`cannot read key file '${path}': ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
};

/** Every public key of a PEM file (from private keys and certificates too). */
export function loadVerifyingKeys(path: string): TokenKey[] {
  const keys: TokenKey[] = [];
  for (const [block, type] of readPem(path).matchAll(PEM_BLOCK)) {
    let key: KeyObject | undefined;
    try {
      key = publicKeyOf(type, block);
    } catch {
      throw new KeyFileError(`key file '${path}': a ${type} block cannot be parsed`);
    }
    if (key) keys.push({ key, alg: algorithmOf(key), kid: keyId(key) });
  }
  if (keys.length === 0) throw new KeyFileError(`key file '${path}' does not contain any valid RSA or ECDSA public keys`);
  return keys;
}

/** The first private key of a PEM file. */
export function loadSigningKey(path: string): TokenKey {
  for (const [block, type] of readPem(path).matchAll(PEM_BLOCK)) {
    if (!PRIVATE_TYPES.has(type)) continue;
    let key: KeyObject;
    try {
      key = createPrivateKey(block);
    } catch {
      throw new KeyFileError(`signing key file '${path}': a ${type} block cannot be parsed`);
    }
    return { key, alg: algorithmOf(key), kid: keyId(createPublicKey(key)) };
  }
  throw new KeyFileError(`signing key file '${path}' does not contain a private key`);
}

/** The (public) verifying keys as a JSON Web Key Set, as the issuer discovery serves them. */
export function jwks(keys: TokenKey[]): { keys: Array<Record<string, unknown>> } {
  const seen = new Set<string>();
  const out: Array<Record<string, unknown>> = [];
  for (const k of keys) {
    if (seen.has(k.kid)) continue;
    seen.add(k.kid);
    out.push({ use: 'sig', kid: k.kid, alg: k.alg, ...k.key.export({ format: 'jwk' }) });
  }
  return { keys: out };
}
