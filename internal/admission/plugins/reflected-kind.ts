// The objects of one cluster-scoped kind a plugin decides from, kept in memory
// by a Reflector over storage's change stream, each as the few fields the plugin
// reads. It starts on first use (building plugins reads nothing), and a request
// waits for the first list a bounded time, as upstream's plugins wait for their
// informers, else it is refused.
import { Reflector } from '../../storage/reflector.js';
import { decodeStored } from '../../storage/objects.js';
import { collectionPrefix, objectKey } from '../../storage/keys.js';
import type { KeyValue, StorageClient } from '../../storage/client.js';
import type { ApiObject } from '../../apimachinery/meta.js';
import { forbiddenRequest } from '../errors.js';
import type { AdmissionRequest } from '../types.js';

/** How long a request waits for the first list (upstream: 10 s). */
const READY_TIMEOUT_MS = 10_000;

export class ReflectedKind<T> {
  private reflector?: Reflector<T>;

  constructor(private readonly storage: StorageClient, private readonly group: string, private readonly resource: string,
    private readonly project: (obj: ApiObject) => T) {}

  /** The projections by name once listed; refuses the request when the list does not come in time. */
  async ready(request: AdmissionRequest): Promise<this> {
    this.reflector ??= new Reflector<T>(this.storage, collectionPrefix(this.group, this.resource), {},
      (kv: KeyValue) => this.project(decodeStored(kv))).start();
    if (!(await this.reflector.waitForSync(READY_TIMEOUT_MS))) throw forbiddenRequest(request, 'not yet ready to handle request');
    return this;
  }

  all(): Iterable<T> {
    return this.reflector?.items.values() ?? [];
  }

  get(name: string): T | undefined {
    return this.reflector?.items.get(objectKey(this.group, this.resource, '', name));
  }

  stop(): void {
    this.reflector?.stop();
  }
}

/** Of classes marked default, the newest, the first by name among equally new ones (as upstream picks). */
export function newestDefault<C extends { name: string; created: number; isDefault: boolean }>(classes: Iterable<C>): C | undefined {
  const defaults = [...classes].filter((c) => c.isDefault);
  defaults.sort((a, b) => (b.created - a.created) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return defaults[0];
}

export const createdAt = (obj: ApiObject): number => Date.parse(String(obj.metadata?.creationTimestamp ?? '')) || 0;
