// The signing keys of one identity provider: discovery, then its JWKS, fetched
// in the background until it succeeds (the server starts while the provider is
// down) and fetched again when a token names a key not yet known (rotation), at
// most once per refresh interval. Requests never wait on the provider otherwise.
import { createLocalJWKSet, type JSONWebKeySet, type JWSHeaderParameters, type FlattenedJWSInput } from 'jose';
import { getJson } from './https.js';

export interface ProviderKeysOptions {
  issuerUrl: string;
  /** Overrides `{issuerUrl}/.well-known/openid-configuration`. */
  discoveryUrl?: string;
  /** PEM CAs of the provider's web certificate; the system roots when absent. */
  ca?: string;
  /** Pause between attempts while no key set was ever fetched. */
  retryMs?: number;
  /** Least time between two fetches caused by unknown keys. */
  refreshMs?: number;
  log?: (message: string) => void;
  /** Told when a fetched key set differs from the one before (tokens of a key gone are revoked). */
  changed?: () => void;
}

type KeyLookup = ReturnType<typeof createLocalJWKSet>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class ProviderKeys {
  private lookup?: KeyLookup;
  private fetched = '';
  private jwksUri?: string;
  private inFlight?: Promise<void>;
  private lastFetch = 0;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly opts: ProviderKeysOptions) {}

  /** Starts fetching in the background; retries until the keys are known. */
  start(): this {
    void this.initialize();
    return this;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  get ready(): boolean {
    return this.lookup !== undefined;
  }

  private async initialize(): Promise<void> {
    try {
      await this.refresh();
    } catch (err) {
      this.opts.log?.(`oidc: initializing keys of issuer ${this.opts.issuerUrl} failed, retrying: ${(err as Error).message}`);
      if (!this.closed) this.timer = setTimeout(() => void this.initialize(), this.opts.retryMs ?? 10_000);
    }
  }

  /** Reads discovery (once it succeeded) and the key set; concurrent callers share one fetch. */
  private refresh(): Promise<void> {
    this.inFlight ??= (async () => {
      this.lastFetch = Date.now();
      this.jwksUri ??= await this.discover();
      const jwks = await getJson(this.jwksUri, this.opts.ca);
      if (!isRecord(jwks) || !Array.isArray(jwks.keys)) throw new Error(`${this.jwksUri}: not a JSON Web Key Set`);
      this.lookup = createLocalJWKSet(jwks as unknown as JSONWebKeySet);
      const text = JSON.stringify(jwks);
      if (this.fetched && text !== this.fetched) this.opts.changed?.();
      this.fetched = text;
    })().finally(() => { this.inFlight = undefined; });
    return this.inFlight;
  }

  private async discover(): Promise<string> {
    const url = this.opts.discoveryUrl || `${this.opts.issuerUrl.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const doc = await getJson(url, this.opts.ca);
    if (!isRecord(doc)) throw new Error(`${url}: not a discovery document`);
    if (doc.issuer !== this.opts.issuerUrl) {
      throw new Error(`oidc: issuer did not match the issuer returned by provider, expected "${this.opts.issuerUrl}" got "${String(doc.issuer)}"`);
    }
    if (typeof doc.jwks_uri !== 'string') throw new Error(`${url}: no jwks_uri`);
    return doc.jwks_uri;
  }

  /** The key for a token's header; an unknown key triggers one rate-limited refetch. */
  async key(header: JWSHeaderParameters, token: FlattenedJWSInput) {
    if (!this.lookup) throw new Error('oidc: authenticator not initialized');
    try {
      return await this.lookup(header, token);
    } catch (err) {
      if ((err as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw err;
      if (Date.now() - this.lastFetch < (this.opts.refreshMs ?? 10_000)) throw err;
      await this.refresh().catch((e) => this.opts.log?.(`oidc: refreshing keys of issuer ${this.opts.issuerUrl} failed: ${(e as Error).message}`));
      return this.lookup(header, token);
    }
  }
}
