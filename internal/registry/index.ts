// The one registry of kinds: every resource of the shared resource table,
// completed by the declarations under kinds/, found by group, version and
// resource (or kind). Lookups are map reads; every list is computed once, and
// again when CustomResourceDefinitions add or remove kinds at run time.
import type { KindDef } from './types.js';
import { defineKind } from './define.js';
import { resourceTable } from './resources.js';
import { parseRuntimeConfig } from './runtimeconfig.js';
import { kindSpecFor } from './kinds/index.js';
import { GROUP_ORDER, versionPriority } from './order.js';
import type { FeatureGates } from '../config/features.js';
import { group } from '../names/index.js';

export type { KindDef, TableColumn, SubresourceDef, NameRule, Requester } from './types.js';
export { checkSchema, type SchemaCheckOptions, type SchemaReport } from './schemacheck.js';
export { nameCauses } from './naming.js';

const gvKey = (group: string, version: string) => `${group}/${version}`;

export class Registry {
  private byResource = new Map<string, KindDef>();
  private byKind = new Map<string, KindDef>();
  private byGroupVersion = new Map<string, KindDef[]>();
  private groupVersions = new Map<string, string[]>();
  private kinds: KindDef[] = [];
  /** Kinds added at run time (a CustomResourceDefinition's served versions), by the name of what defines them. */
  private readonly custom = new Map<string, KindDef[]>();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly builtin: KindDef[]) {
    this.index();
  }

  /** Recomputes every lookup from the built-in and custom kinds: changes are rare, lookups stay map reads. */
  private index(): void {
    const groupRank = (g: string) => { const i = GROUP_ORDER.indexOf(g); return i < 0 ? GROUP_ORDER.length : i; };
    const custom = [...this.custom.values()].flat().filter((k) => !this.builtin.some((b) => b.group === k.group));
    this.kinds = [...this.builtin, ...custom].sort((a, b) => groupRank(a.group) - groupRank(b.group)
      || (groupRank(a.group) === GROUP_ORDER.length ? a.group.localeCompare(b.group) : 0)
      || versionPriority(b.version) - versionPriority(a.version) || (a.version < b.version ? -1 : a.version > b.version ? 1 : 0));
    this.byResource = new Map();
    this.byKind = new Map();
    this.byGroupVersion = new Map();
    this.groupVersions = new Map();
    for (const k of this.kinds) {
      if (this.byResource.has(`${gvKey(k.group, k.version)}/${k.resource}`)) continue;
      this.byResource.set(`${gvKey(k.group, k.version)}/${k.resource}`, k);
      if (!this.byKind.has(`${gvKey(k.group, k.version)}/${k.kind}`)) this.byKind.set(`${gvKey(k.group, k.version)}/${k.kind}`, k);
      const inGv = this.byGroupVersion.get(gvKey(k.group, k.version)) ?? [];
      inGv.push(k);
      this.byGroupVersion.set(gvKey(k.group, k.version), inGv);
      const versions = this.groupVersions.get(k.group) ?? [];
      if (!versions.includes(k.version)) versions.push(k.version);
      this.groupVersions.set(k.group, versions);
    }
  }

  /** Serves `kinds` under `name` from now on, instead of what `name` defined before (none: stops serving them). */
  define(name: string, kinds: KindDef[]): void {
    if (kinds.length === 0 && !this.custom.has(name)) return;
    if (kinds.length === 0) this.custom.delete(name);
    else this.custom.set(name, kinds);
    this.index();
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` after every change of the served kinds, so what is derived from them is derived again;
   * answers how to stop. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  lookup(group: string, version: string, resource: string): KindDef | undefined {
    return this.byResource.get(`${gvKey(group, version)}/${resource}`);
  }

  /** The resource that serves a kind, e.g. (`apps`, `v1`, `Deployment`) → deployments. */
  lookupKind(group: string, version: string, kind: string): KindDef | undefined {
    return this.byKind.get(`${gvKey(group, version)}/${kind}`);
  }

  /** Every kind, in discovery order. Shared: do not modify; a change of the kinds replaces it. */
  all(): KindDef[] {
    return this.kinds;
  }

  /** The served groups in discovery order, each with its versions, preferred first. Shared: do not modify. */
  groups(): Map<string, string[]> {
    return this.groupVersions;
  }

  /** Shared: do not modify. */
  inGroupVersion(group: string, version: string): KindDef[] {
    return this.byGroupVersion.get(gvKey(group, version)) ?? [];
  }
}

export interface RegistryOptions {
  /** The `--runtime-config` flag: group versions and resources to serve or not besides the stable ones. */
  runtimeConfig?: string;
  /** Feature gates: a resource behind a gate that is off is not served, whatever `runtimeConfig` says. */
  features?: FeatureGates;
}

/** Resources served only while their feature gate is on. */
const GATED_RESOURCES: Record<string, string> = {
  [`${group('admissionregistration')}/mutatingadmissionpolicies`]: 'MutatingAdmissionPolicy',
  [`${group('admissionregistration')}/mutatingadmissionpolicybindings`]: 'MutatingAdmissionPolicy',
};

/** The kinds this server serves: every stable version of the resource table, as `runtimeConfig` and the gates adjust. */
export function builtinRegistry(opts: RegistryOptions = {}): Registry {
  const table = resourceTable();
  const config = parseRuntimeConfig(opts.runtimeConfig ?? '', table);
  const gated = (e: { group: string; resource: string }) => {
    const gate = GATED_RESOURCES[`${e.group}/${e.resource}`];
    return gate !== undefined && !(opts.features?.(gate) ?? false);
  };
  return new Registry(table.filter((e) => config.serves(e) && !gated(e)).map((e) => defineKind(e, kindSpecFor(e.group, e.version, e.resource))));
}
