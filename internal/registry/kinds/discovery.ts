// The discovery group (v1): EndpointSlice.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, nameColumn, shortList } from '../columns.js';
import { dns1123Label, invalid, labelMap, oneOf, portName, portNumber, protocol, required, tooMany, unchanged, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { isIP, isIPv4 } from '../net.js';
import { asList, objects, setDefault } from '../values.js';

const ADDRESS_TYPES = ['IPv4', 'IPv6', 'FQDN'];
const MAX_ENDPOINTS = 1000;
const MAX_PORTS = 20000;

function addressCauses(field: string, addressType: unknown, address: unknown): Causes {
  const text = String(address);
  if (addressType === 'IPv4' && !isIPv4(text)) return [invalid(field, address, 'must be a valid IPv4 address')];
  if (addressType === 'IPv6' && (!isIP(text) || isIPv4(text))) return [invalid(field, address, 'must be a valid IPv6 address')];
  return [];
}

function validateEndpointSlice(obj: ApiObject, old?: ApiObject): Causes {
  const causes = oneOf('addressType', obj.addressType, ADDRESS_TYPES, true);
  const endpoints = objects(obj.endpoints);
  if (endpoints.length > MAX_ENDPOINTS) causes.push(tooMany('endpoints', endpoints.length, MAX_ENDPOINTS));
  endpoints.forEach((e, i) => {
    const addresses = asList(e.addresses);
    if (addresses.length === 0) causes.push(required(`endpoints[${i}].addresses`, 'must contain at least 1 address'));
    addresses.forEach((a, j) => causes.push(...addressCauses(`endpoints[${i}].addresses[${j}]`, obj.addressType, a)));
    if (typeof e.hostname === 'string') causes.push(...dns1123Label(`endpoints[${i}].hostname`, e.hostname));
    causes.push(...labelMap(`endpoints[${i}].deprecatedTopology`, e.deprecatedTopology));
  });
  const ports = objects(obj.ports);
  if (ports.length > MAX_PORTS) causes.push(tooMany('ports', ports.length, MAX_PORTS));
  ports.forEach((p, i) => {
    if (typeof p.name === 'string' && p.name) causes.push(...portName(`ports[${i}].name`, p.name));
    if (p.port !== undefined) causes.push(...portNumber(`ports[${i}].port`, p.port));
    causes.push(...protocol(`ports[${i}].protocol`, p.protocol));
  });
  if (old) causes.push(...unchanged('addressType', obj.addressType, old.addressType));
  return causes;
}

const endpointslices: KindSpec = {
  tracksGeneration: true,
  defaults(obj) {
    setDefault(obj, 'endpoints', []);
    for (const p of objects(obj.ports)) {
      setDefault(p, 'protocol', 'TCP');
      setDefault(p, 'name', '');
    }
  },
  validate: validateEndpointSlice,
  tableColumns: [nameColumn,
    column('AddressType', 'string', 'The IP protocol for this slice', (o) => o.addressType ?? ''),
    column('Ports', 'string', 'The ports of the slice', (o) => objects(o.ports).map((p) => String(p.port ?? '<unset>')).join(',') || '<unset>'),
    column('Endpoints', 'string', 'First 3 addresses of the endpoints of the slice', (o) => shortList(objects(o.endpoints).flatMap((e) => asList(e.addresses).map(String)))),
    ageColumn],
};

export const discoveryKinds: Record<string, KindSpec> = { endpointslices };
