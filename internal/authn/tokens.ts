// The token authenticators that depend on stored objects (bootstrap tokens,
// service-account tokens) and the issuer of service-account tokens, built from
// the service's options. Keys default to the serving key, so a server started
// without key flags issues and accepts service-account tokens.
import { existsSync } from 'node:fs';
import { NAMESPACE_SYSTEM } from '../names/index.js';
import { loadSigningKey, loadVerifyingKeys, type TokenKey } from '../serviceaccount/keys.js';
import { TokenIssuer } from '../serviceaccount/issuer.js';
import { ObjectLookup } from '../serviceaccount/lookup.js';
import type { StorageClient } from '../storage/client.js';
import { collectionPrefix } from '../storage/keys.js';
import { Reflector } from '../storage/reflector.js';
import { BootstrapTokenAuthenticator } from './bootstraptoken.js';
import { ServiceAccountTokenAuthenticator } from './serviceaccounttoken.js';
import { AuthnConfigError } from './service.js';
import type { TokenAuthenticator } from './types.js';

export interface TokenOptions {
  enableBootstrapTokenAuth: boolean;
  /** --service-account-key-file; empty: the default key. */
  keyFiles: string[];
  /** --service-account-signing-key-file; empty: the default key. */
  signingKeyFile: string;
  /** The serving key, used when no key file is given; skipped with a warning when absent. */
  defaultKeyFile: string;
  issuers: string[];
  /** --api-audiences; empty: the issuers. */
  apiAudiences: string[];
  maxExpirationSeconds: number;
  extendExpiration: boolean;
  lookup: boolean;
  jwksUri: string;
}

export interface IssuerInfo {
  issuer: string;
  keys: TokenKey[];
  jwksUri: string;
}

export interface StoredTokens {
  /** In the chain's order: service-account tokens, then bootstrap tokens. */
  authenticators: TokenAuthenticator[];
  issuer: TokenIssuer;
  lookup: ObjectLookup;
  info: IssuerInfo;
  /** The audiences of the API itself (--api-audiences, else the issuers). */
  apiAudiences: string[];
  warnings: string[];
  /** Resolves once the mirrors hold the first list (false on timeout). */
  waitForSync(timeoutMs: number): Promise<boolean>;
  stop(): void;
}

/** A key file given by flag must load; the default key may be absent (then that part is off, with a warning). */
function loadKeyFile<T>(given: boolean, path: string, load: (path: string) => T, what: string, warnings: string[]): T | undefined {
  if (!given && !existsSync(path)) {
    warnings.push(`no service-account ${what} key: ${path} does not exist`);
    return undefined;
  }
  try {
    return load(path);
  } catch (err) {
    throw new AuthnConfigError((err as Error).message);
  }
}

function loadKeys(opts: TokenOptions, warnings: string[]): { verifying: TokenKey[]; signing?: TokenKey } {
  const signing = loadKeyFile(Boolean(opts.signingKeyFile), opts.signingKeyFile || opts.defaultKeyFile, loadSigningKey, 'signing', warnings);
  const files = opts.keyFiles.length ? opts.keyFiles : [opts.defaultKeyFile];
  const verifying = files.flatMap((f) => loadKeyFile(opts.keyFiles.length > 0, f, loadVerifyingKeys, 'verifying', warnings) ?? []);
  if (signing && !verifying.some((k) => k.kid === signing.kid)) {
    warnings.push('the service-account signing key is not among the verifying keys (--service-account-key-file): the tokens it signs are refused');
  }
  return { verifying, signing };
}

/** Issuers as upstream accepts them: at least one, no repeats, a URL when they contain a colon. */
function checkIssuers(issuers: string[]): void {
  if (issuers.length === 0) throw new AuthnConfigError('--service-account-issuer: at least one issuer is required');
  issuers.forEach((issuer, i) => {
    if (issuers.indexOf(issuer) !== i) throw new AuthnConfigError(`service-account-issuer "${issuer}" is already specified`);
    if (issuer.includes(':') && !URL.canParse(issuer)) throw new AuthnConfigError(`service-account-issuer "${issuer}" contained a ':' but was not a valid URL`);
  });
}

/** Starts the mirrors of stored objects and builds the authenticators and the issuer; `revoked` is
 * told of every change to them that may revoke a token (once the mirror holds it). */
export function startStoredTokens(opts: TokenOptions, storage: StorageClient, revoked: () => void = () => undefined): StoredTokens {
  checkIssuers(opts.issuers);
  const warnings: string[] = [];
  const { verifying, signing } = loadKeys(opts, warnings);
  const apiAudiences = opts.apiAudiences.length ? opts.apiAudiences : opts.issuers;
  const lookup = new ObjectLookup(storage, revoked).start();
  const authenticators: TokenAuthenticator[] = [];
  if (verifying.length) {
    authenticators.push(new ServiceAccountTokenAuthenticator({ keys: verifying, issuers: opts.issuers, apiAudiences, lookup, lookupLegacy: opts.lookup }));
  }
  let secrets: Reflector | undefined;
  if (opts.enableBootstrapTokenAuth) {
    secrets = new Reflector(storage, collectionPrefix('', 'secrets', NAMESPACE_SYSTEM), { upsert: (_k, _o, old) => { if (old) revoked(); }, deleted: revoked }).start();
    authenticators.push(new BootstrapTokenAuthenticator(secrets, apiAudiences));
  }
  const issuer = new TokenIssuer(signing, {
    issuer: opts.issuers[0], apiAudiences, maxExpirationSeconds: opts.maxExpirationSeconds, extendExpiration: opts.extendExpiration,
  });
  return {
    authenticators, issuer, lookup, warnings, apiAudiences,
    info: { issuer: opts.issuers[0], keys: verifying, jwksUri: opts.jwksUri },
    waitForSync: async (timeoutMs) => (await Promise.all([lookup.waitForSync(timeoutMs), secrets?.waitForSync(timeoutMs) ?? true])).every(Boolean),
    stop: () => { lookup.stop(); secrets?.stop(); },
  };
}
