// One kind's objects as admission plugins decide from them, kept in memory by a
// Reflector over storage's change stream. Each plugin keeps a projection (only
// the fields it reads), never whole objects; `fetch` reads storage for a name
// memory does not hold, for kinds upstream also looks up live on a miss.
import { Reflector } from '../storage/reflector.js';
import { collectionPrefix, objectKey, parseKey } from '../storage/keys.js';
import { decodeStored } from '../storage/objects.js';
import { isServiceError, grpc } from '../rpc/index.js';
import type { ApiObject } from '../apimachinery/meta.js';
import type { KeyValue, StorageClient } from '../storage/client.js';

export class KindCache<T> {
  private readonly reflector: Reflector<T>;

  constructor(private readonly storage: StorageClient, private readonly group: string, private readonly resource: string,
    private readonly project: (obj: ApiObject) => T) {
    this.reflector = new Reflector<T>(storage, collectionPrefix(group, resource), {}, (kv: KeyValue) => project(decodeStored(kv)));
  }

  start(): this {
    this.reflector.start();
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
