// DenyServiceExternalIPs: no Service may gain an external IP (a way to take
// traffic for addresses one does not own); an update may keep or drop the ones
// it has.
import { forbiddenRequest } from '../errors.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject, Operation } from '../types.js';

export const DENY_SERVICE_EXTERNAL_IPS = 'DenyServiceExternalIPs';

const externalIPs = (service: JsonObject | undefined): unknown[] => {
  const ips = (service?.spec as { externalIPs?: unknown } | undefined)?.externalIPs;
  return Array.isArray(ips) ? ips : [];
};

export class DenyServiceExternalIPs implements AdmissionPlugin {
  readonly name = DENY_SERVICE_EXTERNAL_IPS;
  readonly phase = 'validating' as const;

  handles(operation: Operation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    const { group, resource } = request.resource;
    if (group !== '' || resource !== 'services' || request.subresource || !request.object) return;
    const before = new Set(externalIPs(request.oldObject));
    if (externalIPs(request.object).every((ip) => before.has(ip))) return;
    throw forbiddenRequest(request, 'use of external IPs is denied by admission control');
  }
}
