// Service references of webhooks resolved to an address from memory: Reflectors
// over Services and EndpointSlices keep the few fields resolution needs, started
// the first time a webhook names a service (most clusters call webhooks by URL).
import type { ApiObject } from '../../apimachinery/meta.js';
import { serviceEndpoint } from '../../apiextensions/conversionservice.js';
import { group, SERVICE_NAME_LABEL, wellKnownValue } from '../../names/index.js';
import { Reflector } from '../../storage/reflector.js';
import { collectionPrefix } from '../../storage/keys.js';
import { decodeStored } from '../../storage/objects.js';
import type { KeyValue, StorageClient } from '../../storage/client.js';

/** How long the first resolution waits for the lists to arrive. */
const SYNC_TIMEOUT_MS = 5_000;

const serviceFields = (kv: KeyValue): ApiObject => {
  const { spec } = decodeStored(kv) as { spec?: Record<string, unknown> };
  return { spec: { type: spec?.type, externalName: spec?.externalName, ports: spec?.ports } } as ApiObject;
};

const sliceFields = (kv: KeyValue): ApiObject => {
  const { metadata, ports, endpoints } = decodeStored(kv) as ApiObject & { ports?: unknown; endpoints?: unknown };
  return { metadata: { namespace: metadata?.namespace, labels: metadata?.labels }, ports, endpoints } as ApiObject;
};

export class ServiceEndpoints {
  private services?: Reflector<ApiObject>;
  private slices?: Reflector<ApiObject>;

  constructor(private readonly storage: StorageClient) {}

  /** The address of one ready endpoint of the service's port. */
  async resolve(ref: { namespace: string; name: string; port: number }): Promise<{ host: string; port: number }> {
    if (!this.services || !this.slices) {
      this.services = new Reflector(this.storage, collectionPrefix('', 'services'), {}, serviceFields).start();
      this.slices = new Reflector(this.storage, collectionPrefix(group('discovery'), 'endpointslices'), {}, sliceFields).start();
    }
    await Promise.all([this.services.waitForSync(SYNC_TIMEOUT_MS), this.slices.waitForSync(SYNC_TIMEOUT_MS)]);
    const service = this.services.items.get(`${collectionPrefix('', 'services', ref.namespace)}${ref.name}`);
    const slices = [...this.slices.items.values()]
      .filter((s) => s.metadata?.namespace === ref.namespace && wellKnownValue(s.metadata?.labels, SERVICE_NAME_LABEL) === ref.name);
    return serviceEndpoint(ref, service, slices);
  }

  stop(): void {
    this.services?.stop();
    this.slices?.stop();
  }
}
