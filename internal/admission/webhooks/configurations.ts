// The webhook configurations of the cluster, kept in memory by Reflectors over
// storage's change stream, so a new or changed configuration applies as soon as
// its change arrives. Webhooks are answered in dispatch order: configurations
// sorted by name, each one's webhooks in their order.
import { group } from '../../names/index.js';
import { Reflector } from '../../storage/reflector.js';
import { collectionPrefix } from '../../storage/keys.js';
import { decodeStored } from '../../storage/objects.js';
import type { KeyValue, StorageClient } from '../../storage/client.js';
import { hooksOf, retire, type Hook } from './hooks.js';

const ADMISSION_REGISTRATION = group('admissionregistration');

class Configurations {
  private readonly reflector: Reflector<Hook[]>;
  private sorted?: Hook[];
  private started = false;

  constructor(storage: StorageClient, resource: string, mutating: boolean) {
    const decode = (kv: KeyValue): Hook[] => hooksOf(decodeStored(kv), mutating);
    const changed = (old?: Hook[]) => { old?.forEach(retire); this.sorted = undefined; };
    this.reflector = new Reflector<Hook[]>(storage, collectionPrefix(ADMISSION_REGISTRATION, resource), {
      upsert: (_key, _hooks, old) => changed(old),
      deleted: (_key, old) => changed(old),
    }, decode);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.reflector.start();
  }

  stop(): void {
    this.reflector.stop();
    this.reflector.items.forEach((hooks) => hooks.forEach(retire));
  }

  /** Starts following the configurations when nothing did yet; true once they are listed. */
  waitForSync(timeoutMs: number): Promise<boolean> {
    this.start();
    return this.reflector.waitForSync(timeoutMs);
  }

  /** Every webhook in dispatch order; computed again only after a change. */
  hooks(): Hook[] {
    if (!this.sorted) {
      // Storage keys end in the configuration's name, so sorting them sorts by name.
      this.sorted = [...this.reflector.items.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).flatMap(([, hooks]) => hooks);
    }
    return this.sorted;
  }
}

/** Both kinds of webhook configurations, each followed from its first use. */
export class WebhookConfigurations {
  readonly mutating: Configurations;
  readonly validating: Configurations;

  constructor(storage: StorageClient) {
    this.mutating = new Configurations(storage, 'mutatingwebhookconfigurations', true);
    this.validating = new Configurations(storage, 'validatingwebhookconfigurations', false);
  }

  stop(): void {
    this.mutating.stop();
    this.validating.stop();
  }
}

export type { Configurations };
