// `--runtime-config`: which group versions (and single resources) are served,
// e.g. `batch/v1=false,storage.svc.io/v1beta1,api/alpha=true`, as document 1 describes.
import { isStable, type ResourceEntry } from './resources.js';

export interface RuntimeConfig {
  /** Whether one row of the resource table is served. */
  serves(entry: ResourceEntry): boolean;
}

const LEVELS: Record<string, (version: string) => boolean> = {
  all: () => true,
  ga: isStable,
  beta: (v) => /^v\d+beta\d+$/.test(v),
  alpha: (v) => /^v\d+alpha\d+$/.test(v),
};

/** The core group is written `v1` or `api/v1`; others `<group>/<version>`. */
const gvOf = (key: string) => {
  const parts = key.split('/');
  if (parts.length === 1) return { group: '', version: parts[0], resource: undefined };
  if (parts[0] === 'api' && parts.length === 2 && !LEVELS[parts[1]]) return { group: '', version: parts[1], resource: undefined };
  return { group: parts[0], version: parts[1], resource: parts[2] };
};

/** Parses the flag; an unknown group version or a value other than true/false throws. */
export function parseRuntimeConfig(text: string, table: ResourceEntry[]): RuntimeConfig {
  const levels = new Map<string, boolean>();
  const versions = new Map<string, boolean>();
  const resources = new Map<string, boolean>();
  for (const item of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [key, value = 'true'] = item.split('=');
    if (value !== 'true' && value !== 'false') throw new Error(`invalid value of ${key}: ${value}, must be true or false`);
    const enabled = value === 'true';
    if (key.startsWith('api/') && LEVELS[key.slice(4)]) { levels.set(key.slice(4), enabled); continue; }
    const { group, version, resource } = gvOf(key);
    const known = table.some((e) => e.group === group && e.version === version && (!resource || e.resource === resource));
    if (!known) throw new Error(`unknown api group version or resource: ${key}`);
    if (resource) resources.set(`${group}/${version}/${resource}`, enabled);
    else versions.set(`${group}/${version}`, enabled);
  }
  return {
    serves(e) {
      const byResource = resources.get(`${e.group}/${e.version}/${e.resource.split('/')[0]}`);
      if (byResource !== undefined) return byResource;
      const byVersion = versions.get(`${e.group}/${e.version}`);
      if (byVersion !== undefined) return byVersion;
      for (const level of ['alpha', 'beta', 'ga', 'all']) {
        if (levels.has(level) && LEVELS[level](e.version)) return levels.get(level)!;
      }
      return LEVELS.ga(e.version);
    },
  };
}
