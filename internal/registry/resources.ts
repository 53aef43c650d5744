// The resource table of the shared data (openapi/resources.json): one row per
// served group, version and resource or sub-resource, with kind, scope and verbs.
import { readSharedJson } from '../config/shared.js';
import { group } from '../names/index.js';
import type { SubresourceDef } from './types.js';

interface Row {
  group: string;
  version: string;
  resource: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
}

/** A resource with its sub-resources. */
export interface ResourceEntry {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  subresources: SubresourceDef[];
}

/** Kinds of sub-resources that live in another group. */
const FOREIGN_KINDS: Record<string, { group: string; version: string }> = {
  Scale: { group: 'autoscaling', version: 'v1' },
  Eviction: { group: 'policy', version: 'v1' },
  TokenRequest: { group: group('authentication'), version: 'v1' },
};

const STABLE = /^v\d+$/;

/** True for a stable version (`v1`, `v2`), the versions served by default. */
export const isStable = (version: string): boolean => STABLE.test(version);

function subresourceOf(row: Row, name: string): SubresourceDef {
  return { name, kind: row.kind, ...FOREIGN_KINDS[row.kind], verbs: row.verbs };
}

/** Every resource of the table, its sub-resources attached, in table order. */
export function resourceTable(): ResourceEntry[] {
  const rows = readSharedJson<Row[]>('openapi/resources.json');
  const entries = new Map<string, ResourceEntry>();
  const key = (r: Row, resource: string) => `${r.group}/${r.version}/${resource}`;
  for (const row of rows.filter((r) => !r.resource.includes('/'))) {
    entries.set(key(row, row.resource), { ...row, subresources: [] });
  }
  for (const row of rows.filter((r) => r.resource.includes('/'))) {
    const [parent, name] = row.resource.split('/');
    entries.get(key(row, parent))?.subresources.push(subresourceOf(row, name));
  }
  return [...entries.values()];
}
