// The name rule of each kind, for the caller that validates metadata.
import type { StatusCause } from '../apimachinery/status.js';
import { dns1035Label, dns1123Label, dns1123Subdomain, pathSegmentName } from './causes.js';
import type { KindDef } from './types.js';

/** The causes against `metadata.name` (or `metadata.generateName` prefixes, which follow the same rule). */
export function nameCauses(def: Pick<KindDef, 'nameRule'>, name: string, field = 'metadata.name'): StatusCause[] {
  switch (def.nameRule) {
    case 'dns1123label': return dns1123Label(field, name);
    case 'dns1035label': return dns1035Label(field, name);
    case 'pathSegment': return pathSegmentName(field, name);
    default: return dns1123Subdomain(field, name);
  }
}
