// The token cleaner: a bootstrap token Secret is deleted when its expiration
// passes (a timer per Secret, armed from the informer; an unreadable expiration
// counts as passed). The delete names the Secret's uid, so a recreated one stays.
import type { ApiObject } from '../apimachinery/meta.js';
import { expiresAt, hasExpired, isBootstrapSecret } from '../bootstraptoken/index.js';
import type { ApiClient } from '../client/index.js';
import type { Informer } from '../client/informer.js';
import { NAMESPACE_SYSTEM } from '../names/index.js';
import { Deadlines, bootstrapSecretInformer } from './bootstraptokens.js';

const RETRY_MS = 1000;

export class TokenCleaner {
  private readonly informer: Informer;
  private readonly deadlines = new Deadlines((name) => this.consider(name));

  constructor(private readonly client: ApiClient) {
    this.informer = bootstrapSecretInformer(client, {
      upsert: (secret) => this.arm(secret),
      deleted: (secret) => this.deadlines.clear(secret.metadata!.name!),
    });
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  stop(): void {
    this.informer.stop();
    this.deadlines.clearAll();
  }

  private arm(secret: ApiObject): void {
    const name = secret.metadata!.name!;
    const at = expiresAt(secret);
    if (at === undefined) this.deadlines.clear(name);
    else this.deadlines.set(name, Number.isNaN(at) ? 0 : at);
  }

  private consider(name: string): void {
    const secret = this.informer.store.get(`${NAMESPACE_SYSTEM}/${name}`);
    if (!secret || !isBootstrapSecret(secret)) return;
    if (!hasExpired(secret)) return this.arm(secret);
    this.delete(secret).catch((err) => {
      console.error(`token-cleaner: ${name}: ${(err as Error).message}`);
      this.deadlines.set(name, Date.now() + RETRY_MS);
    });
  }

  private async delete(secret: ApiObject): Promise<void> {
    const { name, uid } = secret.metadata!;
    const res = await this.client.request('DELETE', `/api/v1/namespaces/${NAMESPACE_SYSTEM}/secrets/${name}`,
      { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid } });
    if (res.status >= 300 && res.status !== 404 && res.status !== 409) throw new Error(`delete: ${res.status} ${res.body?.message ?? ''}`);
  }
}
