// Each controller's own identity (--use-service-account-credentials): a
// ServiceAccount named after the controller in the system namespace, made with
// the controller-manager's own identity, which also asks the TokenRequest API
// for the account's short-lived tokens and asks again before one expires.
import type { ApiClient, TokenSource } from '../client/index.js';
import { group } from '../names/index.js';

/** As upstream's controller client builder: tokens for an hour, renewed once 80% of their life has passed. */
export const TOKEN_EXPIRATION_SECONDS = 3600;
const RENEW_AT = 0.8;

interface Issued {
  token: string;
  obtained: number;
  renewAt: number;
  expires: number;
}

export class ServiceAccountToken implements TokenSource {
  private current?: Issued;
  private pending?: Promise<string>;

  constructor(private readonly manager: ApiClient, private readonly namespace: string, readonly name: string, private readonly now: () => number = Date.now) {}

  /** The token in hand while it is young enough; else a new one (one request at a time, whoever asks). */
  token(): Promise<string> {
    if (this.current && this.now() < this.current.renewAt) return Promise.resolve(this.current.token);
    this.pending ??= this.renew().finally(() => { this.pending = undefined; });
    return this.pending;
  }

  reset(since: number): void {
    if (this.current && this.current.obtained <= since) this.current = undefined;
  }

  /** A new token; when none can be had, the one in hand as long as it has not expired. */
  private async renew(): Promise<string> {
    const obtained = this.now();
    try {
      const { token, seconds } = await this.request();
      this.current = { token, obtained, renewAt: obtained + seconds * 1000 * RENEW_AT, expires: obtained + seconds * 1000 };
      return token;
    } catch (err) {
      if (this.current && obtained < this.current.expires) return this.current.token;
      throw err;
    }
  }

  private get accountPath(): string {
    return `/api/v1/namespaces/${this.namespace}/serviceaccounts`;
  }

  /** A TokenRequest for the account, which is made first when it does not exist (yet, or any more). */
  private async request(): Promise<{ token: string; seconds: number }> {
    const body = { apiVersion: `${group('authentication')}/v1`, kind: 'TokenRequest', spec: { expirationSeconds: TOKEN_EXPIRATION_SECONDS } };
    const path = `${this.accountPath}/${this.name}/token`;
    let res = await this.manager.request('POST', path, body);
    if (res.status === 404) {
      await this.createAccount();
      res = await this.manager.request('POST', path, body);
    }
    if (res.status !== 201 && res.status !== 200) throw new Error(`a token for ${this.namespace}/${this.name}: ${res.status} ${res.body?.message ?? ''}`);
    // The server may shorten the lifetime asked for: what it granted is what is renewed from.
    return { token: String(res.body.status.token), seconds: Number(res.body.spec?.expirationSeconds ?? TOKEN_EXPIRATION_SECONDS) };
  }

  private async createAccount(): Promise<void> {
    const res = await this.manager.request('POST', this.accountPath, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: this.name } });
    if (res.status !== 201 && res.status !== 409) throw new Error(`creating the service account ${this.namespace}/${this.name}: ${res.status} ${res.body?.message ?? ''}`);
  }
}
