// The ServiceAccount controller: every active namespace has a `default`
// ServiceAccount, created when a namespace appears and again when it is deleted.
import type { ApiObject } from '../apimachinery/meta.js';
import type { ApiClient } from '../client/index.js';
import { Informer } from '../client/informer.js';
import { DEFAULT_SERVICE_ACCOUNT } from '../names/index.js';
import { WorkQueue } from './workqueue.js';
import { isActive, namespaceInformer } from './namespaces.js';

/** Only the accounts this controller keeps are followed. */
const ACCOUNTS = `/api/v1/serviceaccounts?fieldSelector=${encodeURIComponent(`metadata.name=${DEFAULT_SERVICE_ACCOUNT}`)}`;

export class ServiceAccountsController {
  private readonly namespaces: Informer;
  private readonly accounts: Informer;
  private readonly queue: WorkQueue;

  constructor(private readonly client: ApiClient) {
    this.queue = new WorkQueue('serviceaccount', (ns) => this.process(ns));
    this.namespaces = namespaceInformer(client, this.queue);
    this.accounts = new Informer(client, ACCOUNTS, {
      upsert: () => undefined,
      deleted: (sa: ApiObject) => this.queue.add(sa.metadata!.namespace!),
    });
  }

  /** Both lists are in before any namespace is looked at. */
  async start(): Promise<void> {
    await Promise.all([this.accounts.start(), this.namespaces.start()]);
    // The namespaces there at the start have theirs before the controller reports running.
    for (const ns of this.namespaces.store.keys()) this.queue.add(ns);
    await this.queue.drained();
  }

  stop(): void {
    this.queue.stop();
    this.namespaces.stop();
    this.accounts.stop();
  }

  private async process(namespace: string): Promise<void> {
    if (!this.accounts.synced || !this.namespaces.synced) return; // start() queues every namespace once both are
    if (!isActive(this.namespaces.store.get(namespace)) || this.accounts.store.has(`${namespace}/${DEFAULT_SERVICE_ACCOUNT}`)) return;
    const res = await this.client.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`,
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_SERVICE_ACCOUNT } });
    // 409: it exists (the informer has not seen it yet); 403/404: the namespace is going or gone.
    if (res.status >= 300 && ![403, 404, 409].includes(res.status)) throw new Error(`create: ${res.status} ${res.body?.message ?? ''}`);
  }
}
