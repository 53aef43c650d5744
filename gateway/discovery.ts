// Discovery documents: which groups, versions and resources are served, and /version.
import type { Registry, KindDef } from '../internal/registry/index.js';
import { apiVersionOf } from '../internal/apimachinery/meta.js';

export const SERVED_RELEASE = { major: '1', minor: '34', gitVersion: 'v1.34.0' };

export function versionInfo() {
  return {
    ...SERVED_RELEASE,
    gitCommit: '', gitTreeState: 'clean', buildDate: '', goVersion: '',
    compiler: 'node', platform: `${process.platform}/${process.arch}`,
  };
}

export function apiVersions(serverAddress: string) {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

function apiGroup(name: string, versions: string[]) {
  const list = versions.map((version) => ({ groupVersion: apiVersionOf(name, version), version }));
  return { name, versions: list, preferredVersion: list[0] };
}

export function apiGroupList(registry: Registry) {
  const groups = [...registry.groups()].filter(([name]) => name !== '').map(([name, versions]) => apiGroup(name, versions));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

export function apiGroupDoc(registry: Registry, group: string) {
  const versions = registry.groups().get(group);
  return versions && group ? { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(group, versions) } : undefined;
}

function resourceEntries(k: KindDef) {
  const main = {
    name: k.resource, singularName: k.singular, namespaced: k.namespaced, kind: k.kind, verbs: k.verbs,
    ...(k.shortNames ? { shortNames: k.shortNames } : {}), ...(k.categories ? { categories: k.categories } : {}),
  };
  const subs = (k.subresources ?? []).map((s) => ({
    name: `${k.resource}/${s}`, singularName: '', namespaced: k.namespaced, kind: k.kind, verbs: ['get', 'patch', 'update'],
  }));
  return [main, ...subs];
}

export function apiResourceList(registry: Registry, group: string, version: string) {
  const kinds = registry.inGroupVersion(group, version);
  if (kinds.length === 0) return undefined;
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(group, version), resources: kinds.flatMap(resourceEntries) };
}

const scopeOf = (k: KindDef) => (k.namespaced ? 'Namespaced' : 'Cluster');

function discoveryResource(k: KindDef) {
  const responseKind = { group: k.group, version: k.version, kind: k.kind };
  return {
    resource: k.resource, responseKind, scope: scopeOf(k), singularResource: k.singular, verbs: k.verbs,
    ...(k.shortNames ? { shortNames: k.shortNames } : {}), ...(k.categories ? { categories: k.categories } : {}),
    ...(k.subresources?.length ? { subresources: k.subresources.map((s) => ({ subresource: s, responseKind, verbs: ['get', 'patch', 'update'] })) } : {}),
  };
}

/** The aggregated form (`APIGroupDiscoveryList` v2) of the core group (`/api`) or the named groups (`/apis`), in the group spelling asked for. */
export function aggregatedDiscovery(registry: Registry, core: boolean, discoveryGroup: string) {
  const items = [...registry.groups()].filter(([name]) => (name === '') === core).map(([name, versions]) => ({
    metadata: { name, creationTimestamp: null },
    versions: versions.map((version) => ({
      version, freshness: 'Current', resources: registry.inGroupVersion(name, version).map(discoveryResource),
    })),
  }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `${discoveryGroup}/v2`, metadata: {}, items };
}
