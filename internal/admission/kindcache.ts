// One kind's objects as admission plugins decide from them, kept in memory by a
// Reflector over storage's change stream. Each plugin keeps a projection (only
// the fields it reads), never whole objects; `fetch` reads storage for a name
// memory does not hold, for kinds upstream also looks up live on a miss. A cache
// starts when started or on first `ready` (then building plugins reads nothing).
import { Reflector } from '../storage/reflector.js';
import { collectionPrefix, objectKey, parseKey } from '../storage/keys.js';
import { decodeStored } from '../storage/objects.js';
import { isServiceError, grpc } from '../rpc/index.js';
import type { ApiObject } from '../apimachinery/meta.js';
import type { KeyValue, StorageClient } from '../storage/client.js';
import { forbiddenRequest } from './errors.js';
import type { AdmissionRequest } from './types.js';

/** How long a request waits for the first list (upstream: 10 s). */
const READY_TIMEOUT_MS = 10_000;

export class KindCache<T> {
  private readonly reflector: Reflector<T>;
  private started = false;

  constructor(private readonly storage: StorageClient, private readonly group: string, private readonly resource: string,
    private readonly project: (obj: ApiObject) => T) {
    this.reflector = new Reflector<T>(storage, collectionPrefix(group, resource), {}, (kv: KeyValue) => project(decodeStored(kv)));
  }

  start(): this {
    if (!this.started) this.reflector.start();
    this.started = true;
    return this;
  }

  /** Once the first list is in; refuses the request when it does not come in time, as upstream's plugins wait for their informers. */
  async ready(request: AdmissionRequest): Promise<this> {
    if (!(await this.start().reflector.waitForSync(READY_TIMEOUT_MS))) throw forbiddenRequest(request, 'not yet ready to handle request');
    return this;
  }

  stop(): void {
    this.reflector.stop();
  }

  /** The object held in memory, undefined when memory has none. */
  get(namespace: string, name: string): T | undefined {
    return this.reflector.items.get(objectKey(this.group, this.resource, namespace, name));
  }

  /** Every object in memory, of one namespace when given. */
  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.reflector.items.values()];
    return [...this.reflector.items].filter(([key]) => parseKey(key)?.namespace === namespace).map(([, v]) => v);
  }

  /** From memory, else from storage (a name created a moment ago); undefined when it does not exist. */
  async fetch(namespace: string, name: string): Promise<T | undefined> {
    const known = this.get(namespace, name);
    if (known !== undefined) return known;
    try {
      const { kv } = await this.storage.get(objectKey(this.group, this.resource, namespace, name));
      return kv ? this.project(decodeStored(kv)) : undefined;
    } catch (err) {
      if (isServiceError(err) && err.code === grpc.status.NOT_FOUND) return undefined;
      throw err;
    }
  }
}
