// The JWT authenticators in force, replaced as a whole when the configuration
// file changes; a provider's keys are kept across reloads while its issuer
// settings stay the same, so a reload costs no fetch.
import type { Authenticated, TokenAuthenticator } from '../types.js';
import type { JWTAuthenticatorConfig } from '../jwtconfig/types.js';
import type { CompiledRules } from '../jwtconfig/validate.js';
import { aggregateMessage } from '../chain.js';
import { audienceAgnostic, unverifiedIssuer } from '../audiences.js';
import { AuthenticationError } from '../types.js';
import { JWTAuthenticator } from './authenticator.js';
import { ProviderKeys, type ProviderKeysOptions } from './keys.js';

export interface JWTEntry {
  config: JWTAuthenticatorConfig;
  rules: CompiledRules;
  /** Accepted signing algorithms; every asymmetric one when absent. */
  algorithms?: string[];
}

const issuerKey = (c: JWTAuthenticatorConfig) =>
  JSON.stringify([c.issuer.url, c.issuer.discoveryURL, c.issuer.certificateAuthority]);

export class JWTAuthenticatorSet implements TokenAuthenticator {
  private authenticators: JWTAuthenticator[] = [];
  private keys = new Map<string, ProviderKeys>();

  /** apiAudiences: the server's own; an ID token names the provider's client, not them. */
  constructor(private readonly apiAudiences: string[], private readonly keyOptions: Omit<ProviderKeysOptions, 'issuerUrl' | 'discoveryUrl' | 'ca'> = {}) {}

  /** Puts a new list in force; providers no longer named stop being fetched. */
  replace(entries: JWTEntry[]): void {
    const keys = new Map<string, ProviderKeys>();
    this.authenticators = entries.map(({ config, rules, algorithms }) => {
      const id = issuerKey(config);
      let providerKeys = keys.get(id) ?? this.keys.get(id);
      if (!providerKeys) {
        providerKeys = new ProviderKeys({
          ...this.keyOptions, issuerUrl: config.issuer.url, discoveryUrl: config.issuer.discoveryURL, ca: config.issuer.certificateAuthority || undefined,
        }).start();
      }
      keys.set(id, providerKeys);
      return new JWTAuthenticator(config, rules, providerKeys, algorithms);
    });
    for (const [id, old] of this.keys) if (!keys.has(id)) old.close();
    this.keys = keys;
  }

  async authenticateToken(token: string, audiences: string[]): Promise<Authenticated | undefined> {
    const errors: Error[] = [];
    const issuer = unverifiedIssuer(token);
    for (const authenticator of this.authenticators) {
      if (authenticator.issuer !== issuer) continue;
      try {
        const found = await authenticator.authenticateToken(token);
        if (found) return audienceAgnostic(found, audiences, this.apiAudiences);
      } catch (err) {
        errors.push(err as Error);
      }
    }
    if (errors.length) throw new AuthenticationError(aggregateMessage(errors));
    return undefined;
  }

  close(): void {
    for (const k of this.keys.values()) k.close();
    this.keys.clear();
    this.authenticators = [];
  }
}
