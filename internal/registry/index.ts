// The one registry of kinds: each kind is declared once (see core.ts) and found
// here by group, version and resource, or by kind.
import type { KindDef } from './types.js';
import { configmaps, namespaces, secrets } from './core.js';

export type { KindDef, TableColumn } from './types.js';

export class Registry {
  private readonly byResource = new Map<string, KindDef>();

  constructor(kinds: KindDef[]) {
    for (const k of kinds) this.byResource.set(`${k.group}/${k.version}/${k.resource}`, k);
  }

  lookup(group: string, version: string, resource: string): KindDef | undefined {
    return this.byResource.get(`${group}/${version}/${resource}`);
  }

  all(): KindDef[] {
    return [...this.byResource.values()];
  }

  /** The served groups, each with its versions, in registration order. */
  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const k of this.all()) {
      const versions = out.get(k.group) ?? [];
      if (!versions.includes(k.version)) versions.push(k.version);
      out.set(k.group, versions);
    }
    return out;
  }

  inGroupVersion(group: string, version: string): KindDef[] {
    return this.all().filter((k) => k.group === group && k.version === version);
  }
}

/** The kinds this server serves. */
export const builtinRegistry = (): Registry => new Registry([namespaces, configmaps, secrets]);
