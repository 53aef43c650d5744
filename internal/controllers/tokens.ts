// The service-account token controller: a Secret of type service-account-token
// (either spelling) naming a ServiceAccount in its annotation gets a signed legacy
// token, the cluster CA and its namespace in its data, and the account's uid in its
// annotations. A token Secret whose account is gone, or is another account of the
// same name (its uid differs), is deleted, as are an account's token Secrets when
// the account is deleted.
import type { ApiObject } from '../apimachinery/meta.js';
import type { ApiClient } from '../client/index.js';
import { Informer } from '../client/informer.js';
import {
  ROOT_CA_KEY, SECRET_TYPE_SERVICE_ACCOUNT_TOKEN, SERVICE_ACCOUNT_NAME_ANNOTATION, SERVICE_ACCOUNT_UID_ANNOTATION, wellKnownValue,
} from '../names/index.js';
import type { TokenKey } from '../serviceaccount/keys.js';
import { issueLegacyToken } from '../serviceaccount/legacy.js';
import { WorkQueue } from './workqueue.js';

const ACCOUNTS = '/api/v1/serviceaccounts';
const secretsOfType = (type: string) => `/api/v1/secrets?fieldSelector=${encodeURIComponent(`type=${type}`)}`;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const split = (key: string) => { const [ns, name] = key.split('/'); return { ns, name }; };
const keyOf = (o: ApiObject) => `${o.metadata?.namespace}/${o.metadata?.name}`;

/** The account a token Secret names, and the uid it names (when it does). */
const accountOf = (secret: ApiObject) => ({
  name: wellKnownValue(secret.metadata?.annotations, SERVICE_ACCOUNT_NAME_ANNOTATION) ?? '',
  uid: wellKnownValue(secret.metadata?.annotations, SERVICE_ACCOUNT_UID_ANNOTATION),
});

/** All that is kept of an account. */
const slimAccount = (sa: ApiObject): ApiObject => ({ metadata: { name: sa.metadata?.name, namespace: sa.metadata?.namespace, uid: sa.metadata?.uid } });

/** A Secret's annotations in the spelling of its type, as its validation reads them. */
const ownSpelling = (secret: ApiObject) => secret.type === SECRET_TYPE_SERVICE_ACCOUNT_TOKEN.own;

export class TokensController {
  private readonly accounts: Informer;
  private readonly secrets: Informer[];
  private readonly queue: WorkQueue;
  private readonly caData: string;

  constructor(private readonly client: ApiClient, private readonly key: TokenKey, rootCa: string) {
    this.caData = b64(rootCa);
    this.queue = new WorkQueue('serviceaccount-token', (k) => this.process(k));
    this.accounts = new Informer(client, ACCOUNTS, { upsert: () => undefined, deleted: (sa) => this.accountGone(sa) }, { transform: slimAccount });
    const handlers = { upsert: (s: ApiObject) => this.queue.add(keyOf(s)), deleted: (s: ApiObject) => this.queue.forget(keyOf(s)) };
    this.secrets = [SECRET_TYPE_SERVICE_ACCOUNT_TOKEN.own, SECRET_TYPE_SERVICE_ACCOUNT_TOKEN.upstream].map((t) => new Informer(client, secretsOfType(t), handlers));
  }

  async start(): Promise<void> {
    await Promise.all([this.accounts, ...this.secrets].map((i) => i.start()));
    for (const s of this.secrets) for (const key of s.store.keys()) this.queue.add(key);
  }

  stop(): void {
    this.queue.stop();
    for (const i of [this.accounts, ...this.secrets]) i.stop();
  }

  private secret(key: string): ApiObject | undefined {
    for (const s of this.secrets) { const found = s.store.get(key); if (found) return found; }
    return undefined;
  }

  /** The token Secrets of a deleted account go with it. */
  private accountGone(sa: ApiObject): void {
    for (const s of this.secrets) {
      for (const [key, secret] of s.store) {
        const named = accountOf(secret);
        if (secret.metadata?.namespace === sa.metadata?.namespace && named.name === sa.metadata?.name && (!named.uid || named.uid === sa.metadata?.uid)) this.queue.add(key);
      }
    }
  }

  private async process(key: string): Promise<void> {
    if (![this.accounts, ...this.secrets].every((i) => i.synced)) return; // start() queues every Secret once all are
    const cached = this.secret(key);
    if (!cached) return;
    const account = await this.account(cached);
    if (!account) return this.delete(cached);
    if (!this.needsData(cached, account)) return;
    const { ns, name } = split(key);
    const live = await this.client.get(`/api/v1/namespaces/${ns}/secrets/${name}`);
    if (live.status === 404) return;
    if (live.status !== 200) throw new Error(`get: ${live.status}`);
    await this.fill(live.body as ApiObject, account);
  }

  /** The account the Secret names, read afresh when the informer does not hold it; undefined when gone or another one. */
  private async account(secret: ApiObject): Promise<ApiObject | undefined> {
    const named = accountOf(secret);
    const ns = secret.metadata!.namespace!;
    let sa = this.accounts.store.get(`${ns}/${named.name}`);
    if (!sa) {
      const res = await this.client.get(`/api/v1/namespaces/${ns}/serviceaccounts/${named.name}`);
      if (res.status !== 200 && res.status !== 404) throw new Error(`get service account: ${res.status}`);
      sa = res.status === 200 ? res.body as ApiObject : undefined;
    }
    return sa && (!named.uid || named.uid === sa.metadata?.uid) ? sa : undefined;
  }

  private needsData(secret: ApiObject, account: ApiObject): boolean {
    const data = (secret.data ?? {}) as Record<string, string>;
    return !data.token || data[ROOT_CA_KEY] !== this.caData || data.namespace !== b64(secret.metadata!.namespace!)
      || accountOf(secret).uid !== account.metadata?.uid;
  }

  private async fill(secret: ApiObject, account: ApiObject): Promise<void> {
    if (!this.needsData(secret, account)) return;
    const ns = secret.metadata!.namespace!;
    const name = secret.metadata!.name!;
    const data = { ...(secret.data as Record<string, string> | undefined) };
    if (!data.token) {
      data.token = b64(await issueLegacyToken(this.key, { namespace: ns, secretName: name, serviceAccount: { name: account.metadata!.name!, uid: account.metadata!.uid! } }));
    }
    data[ROOT_CA_KEY] = this.caData;
    data.namespace = b64(ns);
    const own = ownSpelling(secret);
    const annotations = {
      ...secret.metadata?.annotations,
      [own ? SERVICE_ACCOUNT_NAME_ANNOTATION.own : SERVICE_ACCOUNT_NAME_ANNOTATION.upstream]: account.metadata!.name!,
      [own ? SERVICE_ACCOUNT_UID_ANNOTATION.own : SERVICE_ACCOUNT_UID_ANNOTATION.upstream]: account.metadata!.uid!,
    };
    const res = await this.client.request('PUT', `/api/v1/namespaces/${ns}/secrets/${name}`, { ...secret, metadata: { ...secret.metadata, annotations }, data });
    // 409: changed meanwhile; the queue tries again with what it is now.
    if (res.status !== 200 && res.status !== 404) throw new Error(`update: ${res.status} ${res.body?.message ?? ''}`);
  }

  private async delete(secret: ApiObject): Promise<void> {
    const res = await this.client.request('DELETE', `/api/v1/namespaces/${secret.metadata!.namespace}/secrets/${secret.metadata!.name}`,
      { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: secret.metadata!.uid } });
    if (res.status >= 300 && res.status !== 404 && res.status !== 409) throw new Error(`delete: ${res.status} ${res.body?.message ?? ''}`);
  }
}
