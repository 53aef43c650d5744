// Service references of conversion webhooks, resolved from stored Services and
// EndpointSlices (read from storage: the gateway is the API server).
import type { ServiceResolver } from '../internal/apiextensions/conversion.js';
import { serviceEndpoint } from '../internal/apiextensions/conversionservice.js';
import { group, SERVICE_NAME_LABEL, wellKnownValue } from '../internal/names/index.js';
import type { StorageClient } from '../internal/storage/client.js';
import { collectionPrefix, objectKey } from '../internal/storage/keys.js';
import { decodeStored } from '../internal/storage/objects.js';

export function storedServiceResolver(storage: StorageClient): ServiceResolver {
  return async (ref) => {
    const found = await storage.find(objectKey('', 'services', ref.namespace, ref.name));
    const slices = (await storage.list(collectionPrefix(group('discovery'), 'endpointslices', ref.namespace))).items.map((kv) => decodeStored(kv))
      .filter((slice) => wellKnownValue(slice.metadata?.labels, SERVICE_NAME_LABEL) === ref.name);
    return serviceEndpoint(ref, found && decodeStored(found), slices);
  };
}
