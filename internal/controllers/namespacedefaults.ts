// The objects every active namespace holds from its creation: the `default`
// ServiceAccount (serviceaccount-controller), which pods run as unless they name
// another, and the `svc-root-ca.crt` ConfigMap with the cluster's CA
// (root-ca-cert-publisher), which the projected token volume of pods mounts.
// Each is created when a namespace appears and again when it is deleted.
import type { ApiObject } from '../apimachinery/meta.js';
import type { ApiClient } from '../client/index.js';
import { Informer } from '../client/informer.js';
import { DEFAULT_SERVICE_ACCOUNT, ROOT_CA_CONFIGMAP } from '../names/index.js';

const NAMESPACES = '/api/v1/namespaces';
const RETRY_MS = 1000;

interface Held {
  /** The collection under a namespace (`serviceaccounts`), and the object's name in it. */
  resource: string;
  name: string;
  object(namespace: string): ApiObject;
}

const active = (ns: ApiObject | undefined): boolean =>
  Boolean(ns) && !ns!.metadata?.deletionTimestamp && (ns!.status as { phase?: string } | undefined)?.phase !== 'Terminating';

class NamespaceDefault {
  private readonly namespaces: Informer;
  private readonly held: Informer;

  constructor(private readonly client: ApiClient, private readonly what: Held) {
    this.namespaces = new Informer(client, NAMESPACES, { upsert: (ns) => this.ensure(ns.metadata!.name!), deleted: () => undefined });
    this.held = new Informer(client, `/api/v1/${what.resource}`, {
      upsert: () => undefined,
      deleted: (obj) => { if (obj.metadata?.name === what.name) this.ensure(obj.metadata.namespace!); },
    }, { as: 'metadata' });
  }

  async start(): Promise<void> {
    await Promise.all([this.namespaces.start(), this.held.start()]);
    // The namespaces there at the start have theirs before the controller reports running.
    await Promise.all([...this.namespaces.store.values()].map((ns) => this.create(ns.metadata!.name!)));
  }

  stop(): void {
    this.namespaces.stop();
    this.held.stop();
  }

  private ensure(namespace: string): void {
    if (!this.namespaces.synced || !this.held.synced) return;
    this.create(namespace).catch((err) => {
      console.error(`${this.what.resource}/${this.what.name} in ${namespace}: ${(err as Error).message}`);
      setTimeout(() => this.ensure(namespace), RETRY_MS).unref();
    });
  }

  /** Creates the object unless the namespace is going or the object is there. */
  private async create(namespace: string): Promise<void> {
    if (!active(this.namespaces.store.get(`/${namespace}`))) return;
    if (this.held.store.has(`${namespace}/${this.what.name}`)) return;
    const res = await this.client.request('POST', `${NAMESPACES}/${namespace}/${this.what.resource}`, this.what.object(namespace));
    // 409: there already; 403/404: the namespace is going away.
    if (res.status >= 300 && ![403, 404, 409].includes(res.status)) throw new Error(`create: ${res.status} ${res.body?.message ?? ''}`);
  }
}

export const serviceAccountController = (client: ApiClient) => new NamespaceDefault(client, {
  resource: 'serviceaccounts', name: DEFAULT_SERVICE_ACCOUNT,
  object: (namespace) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_SERVICE_ACCOUNT, namespace } }),
});

export const rootCaPublisher = (client: ApiClient, caPem: string) => new NamespaceDefault(client, {
  resource: 'configmaps', name: ROOT_CA_CONFIGMAP,
  object: (namespace) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIGMAP, namespace }, data: { 'ca.crt': caPem } }),
});
