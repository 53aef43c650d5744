// The versions CustomResourceDefinitions serve, for matchPolicy Equivalent: a
// Reflector over the CRDs defines each one's kinds in the registry webhooks
// match against, as the gateway serves them (conversion included). Started
// only once a webhook is configured: a cluster without webhooks keeps no CRDs.
import { kindsFor, servingState } from '../../apiextensions/kinds.js';
import type { ServiceResolver } from '../../apiextensions/conversion.js';
import { group } from '../../names/index.js';
import type { Registry } from '../../registry/index.js';
import { Reflector } from '../../storage/reflector.js';
import { collectionPrefix } from '../../storage/keys.js';
import { decodeStored } from '../../storage/objects.js';
import type { KeyValue, StorageClient } from '../../storage/client.js';
import type { ApiObject } from '../../apimachinery/meta.js';

const nameOf = (key: string): string => key.slice(key.lastIndexOf('/') + 1);

export class CustomKinds {
  private reflector?: Reflector<string>;
  private readonly pending = new Map<string, ApiObject>();

  constructor(private readonly storage: StorageClient, private readonly registry: Registry, private readonly resolve: ServiceResolver) {}

  /** Starts following the CRDs (once); true when they are listed within the timeout. */
  follow(timeoutMs: number): Promise<boolean> {
    this.reflector ??= new Reflector<string>(this.storage, collectionPrefix(group('apiextensions'), 'customresourcedefinitions'), {
      upsert: (key, state, old) => {
        const crd = this.pending.get(key);
        this.pending.delete(key);
        if (crd && state !== old) this.define(key, crd);
      },
      deleted: (key) => this.registry.define(nameOf(key), []),
    }, (kv: KeyValue) => this.remember(kv)).start();
    return this.reflector.waitForSync(timeoutMs);
  }

  stop(): void {
    this.reflector?.stop();
  }

  /** Keeps the CRD's serving state (what its kinds are built from), and the CRD until the change is handled. */
  private remember(kv: KeyValue): string {
    const crd = decodeStored(kv);
    this.pending.set(kv.key, crd);
    return servingState(crd);
  }

  private define(key: string, crd: ApiObject): void {
    try {
      this.registry.define(nameOf(key), kindsFor(crd, this.resolve));
    } catch {
      // A CRD its kinds cannot be built from is not served by the gateway either: nothing to match.
      this.registry.define(nameOf(key), []);
    }
  }
}
