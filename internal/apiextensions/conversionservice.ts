// A webhook's service reference resolved to an address, as the platform does when
// it routes to endpoints (there is no cluster DNS or service proxy to reach a
// cluster IP): the Service's port named by the reference, then a ready endpoint
// of its EndpointSlices serving that port. An ExternalName service resolves to
// its external name.
import { randomInt } from 'node:crypto';
import type { ApiObject } from '../apimachinery/meta.js';
import { asObj, num, objects, str } from '../registry/values.js';
import type { ServiceRef } from './conversion.js';

/** The address `ref` leads to, given its Service (undefined when absent) and the EndpointSlices of that Service. */
export function serviceEndpoint(ref: ServiceRef, service: ApiObject | undefined, slices: ApiObject[]): { host: string; port: number } {
  if (!service) throw new Error(`service "${ref.name}" not found`);
  const spec = asObj(service.spec) ?? {};
  if (spec.type === 'ExternalName') return { host: str(spec.externalName) ?? '', port: ref.port };
  const servicePort = objects(spec.ports).find((p) => p.port === ref.port);
  if (!servicePort) throw new Error(`no service port ${ref.port} found for service "${ref.name}"`);
  const portName = str(servicePort.name) ?? '';
  const candidates: Array<{ host: string; port: number }> = [];
  for (const slice of slices) {
    const port = num(objects(slice.ports).find((p) => (str(p.name) ?? '') === portName)?.port);
    if (port === undefined) continue;
    for (const endpoint of objects(slice.endpoints)) {
      const host = str((endpoint.addresses as unknown[] | undefined)?.[0]);
      if (host && asObj(endpoint.conditions)?.ready !== false) candidates.push({ host, port });
    }
  }
  if (candidates.length === 0) throw new Error(`no endpoints available for service "${ref.name}"`);
  return candidates[randomInt(candidates.length)];
}
