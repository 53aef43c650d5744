// What the controllers that keep an object in every namespace share: an informer
// of the namespaces keyed by name that queues each one it hears of, and whether a
// namespace still takes new objects.
import type { ApiObject } from '../apimachinery/meta.js';
import type { ApiClient } from '../client/index.js';
import { Informer } from '../client/informer.js';
import type { WorkQueue } from './workqueue.js';

const NAMESPACES = '/api/v1/namespaces';

/** Present and not terminating. */
export const isActive = (ns: ApiObject | undefined): boolean =>
  Boolean(ns) && !ns!.metadata?.deletionTimestamp && (ns!.status as { phase?: string } | undefined)?.phase !== 'Terminating';

/** Only a namespace's name, phase and deletion are kept. */
const slim = (ns: ApiObject): ApiObject => ({ metadata: { name: ns.metadata?.name, deletionTimestamp: ns.metadata?.deletionTimestamp }, status: { phase: (ns.status as { phase?: string } | undefined)?.phase } });

export const namespaceInformer = (client: ApiClient, queue: WorkQueue): Informer =>
  new Informer(client, NAMESPACES, {
    upsert: (ns) => queue.add(ns.metadata!.name!),
    deleted: (ns) => queue.forget(ns.metadata!.name!),
  }, { transform: slim, key: (ns) => ns.metadata!.name! });
