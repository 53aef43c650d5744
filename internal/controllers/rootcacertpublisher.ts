// The root-CA publisher: every active namespace has the ConfigMap `svc-root-ca.crt`
// whose `ca.crt` is the cluster CA, so workloads can verify the API server; it is
// created when a namespace appears, and put back when deleted or edited.
import type { ApiObject } from '../apimachinery/meta.js';
import type { ApiClient } from '../client/index.js';
import { Informer } from '../client/informer.js';
import { API_SERVICE, DESCRIPTION_ANNOTATION, NAMESPACE_DEFAULT, ROOT_CA_CONFIGMAP, ROOT_CA_KEY, SERVER_NAME } from '../names/index.js';
import { deepEqual } from '../registry/values.js';
import { WorkQueue } from './workqueue.js';
import { isActive, namespaceInformer } from './namespaces.js';

const CONFIGMAPS = `/api/v1/configmaps?fieldSelector=${encodeURIComponent(`metadata.name=${ROOT_CA_CONFIGMAP}`)}`;
/** Upstream's words for what the ConfigMap is for. */
const DESCRIPTION = `Contains a CA bundle that can be used to verify the ${SERVER_NAME} when using internal endpoints such as the `
  + `internal service IP or ${API_SERVICE}.${NAMESPACE_DEFAULT}.svc. No other usage is guaranteed across distributions of clusters.`;

export class RootCaCertPublisher {
  private readonly namespaces: Informer;
  private readonly configMaps: Informer;
  private readonly queue: WorkQueue;
  private readonly data: Record<string, string>;

  constructor(private readonly client: ApiClient, rootCa: string) {
    this.data = { [ROOT_CA_KEY]: rootCa };
    this.queue = new WorkQueue('root-ca-cert-publisher', (ns) => this.process(ns));
    this.namespaces = namespaceInformer(client, this.queue);
    const requeue = (cm: ApiObject) => this.queue.add(cm.metadata!.namespace!);
    this.configMaps = new Informer(client, CONFIGMAPS, { upsert: requeue, deleted: requeue });
  }

  async start(): Promise<void> {
    await Promise.all([this.configMaps.start(), this.namespaces.start()]);
    // The namespaces there at the start have theirs before the controller reports running.
    for (const ns of this.namespaces.store.keys()) this.queue.add(ns);
    await this.queue.drained();
  }

  stop(): void {
    this.queue.stop();
    this.namespaces.stop();
    this.configMaps.stop();
  }

  private async process(namespace: string): Promise<void> {
    if (!this.configMaps.synced || !this.namespaces.synced) return; // start() queues every namespace once both are
    if (!isActive(this.namespaces.store.get(namespace))) return;
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const cm = this.configMaps.store.get(`${namespace}/${ROOT_CA_CONFIGMAP}`);
    const description = DESCRIPTION_ANNOTATION.own;
    let res;
    if (!cm) {
      res = await this.client.request('POST', path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIGMAP, annotations: { [description]: DESCRIPTION } }, data: this.data });
    } else {
      if (deepEqual(cm.data, this.data) && cm.metadata?.annotations?.[description]) return;
      const metadata = { ...cm.metadata, annotations: { ...cm.metadata?.annotations, [description]: DESCRIPTION } };
      res = await this.client.request('PUT', `${path}/${ROOT_CA_CONFIGMAP}`, { ...cm, metadata, data: this.data });
    }
    // 409 on create: the informer has not seen it yet (it will queue it); on update: changed meanwhile, tried again.
    if (res.status === 409 && !cm) return;
    if (res.status >= 300 && res.status !== 403 && res.status !== 404) throw new Error(`${cm ? 'update' : 'create'}: ${res.status} ${res.body?.message ?? ''}`);
  }
}
