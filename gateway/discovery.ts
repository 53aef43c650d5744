// Discovery documents: which groups, versions and resources are served, and /version.
// Each renamed group (`x.svc.io`) is listed a second time under its upstream spelling
// (`x.k8s.io`), as upstream lists `events` in two groups: the alias comes after every
// group of ours, so clients resolving a bare resource name still pick ours.
import type { Registry, KindDef, SubresourceDef } from '../internal/registry/index.js';
import { apiVersionOf } from '../internal/apimachinery/meta.js';
import { isRenamedGroup, ownGroup, upstreamGroup } from '../internal/names/index.js';

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

/** A group as it is served: its registry group, the name it is listed under, and how that view spells any group it names. */
export interface GroupView {
  own: string;
  name: string;
  spell: (group: string) => string;
  alias: boolean;
}

const same = (group: string) => group;

/** Every served group in discovery order: ours, then (when served) the upstream spelling of each renamed one. */
export function groupViews(registry: Registry, upstreamNames: boolean): GroupView[] {
  const own = [...registry.groups().keys()].map((g): GroupView => ({ own: g, name: g, spell: same, alias: false }));
  if (!upstreamNames) return own;
  const aliases = own.filter((g) => isRenamedGroup(g.own)).map((g): GroupView => ({ own: g.own, name: upstreamGroup(g.own), spell: upstreamGroup, alias: true }));
  return [...own, ...aliases];
}

/** The view of a group by the name a request used, or undefined when no group is served under it. */
export function groupView(registry: Registry, name: string, upstreamNames: boolean): GroupView | undefined {
  // A group served under the name used (a CRD's group in the upstream spelling, say) is that group, not an alias.
  if (registry.groups().has(name)) return { own: name, name, spell: same, alias: false };
  const own = ownGroup(name);
  if (own === name || !registry.groups().has(own)) return undefined;
  return upstreamNames && upstreamGroup(own) === name ? { own, name, spell: upstreamGroup, alias: true } : undefined;
}

function apiGroup(view: GroupView, registry: Registry) {
  const list = registry.groups().get(view.own)!.map((version) => ({ groupVersion: apiVersionOf(view.name, version), version }));
  return { name: view.name, versions: list, preferredVersion: list[0] };
}

export function apiGroupList(registry: Registry, upstreamNames: boolean) {
  const groups = groupViews(registry, upstreamNames).filter((v) => v.own !== '').map((v) => apiGroup(v, registry));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

export function apiGroupDoc(registry: Registry, view: GroupView) {
  return view.own ? { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(view, registry) } : undefined;
}

/** Discovery verbs of a sub-resource: a `connect` one lists the HTTP methods it takes, as upstream does. */
function subresourceVerbs(s: SubresourceDef): string[] {
  if (!s.verbs.includes('connect')) return s.verbs;
  return s.name === 'proxy' ? ['create', 'delete', 'get', 'patch', 'update'] : ['create', 'get'];
}

/** The kind a sub-resource carries: the parent's, or its own (Scale, Eviction, TokenRequest, Binding). */
const subresourceKind = (k: KindDef, s: SubresourceDef, spell: (g: string) => string) =>
  ({ group: spell(s.group ?? k.group), version: s.version ?? k.version, kind: s.kind });

/** The main resource's categories: the alias lists none, so `kubectl get <category>` names each object once. */
const categoriesOf = (k: KindDef, view: GroupView) => (k.categories && !view.alias ? { categories: k.categories } : {});

function resourceEntries(k: KindDef, view: GroupView) {
  const main = {
    name: k.resource, singularName: k.singular, namespaced: k.namespaced, kind: k.kind, verbs: k.verbs,
    ...(k.shortNames ? { shortNames: k.shortNames } : {}), ...categoriesOf(k, view),
  };
  const subs = (k.subresourceDefs ?? []).map((s) => {
    const gvk = subresourceKind(k, s, view.spell);
    const foreign = gvk.group !== view.name || gvk.version !== k.version;
    return {
      name: `${k.resource}/${s.name}`, singularName: '', namespaced: k.namespaced,
      ...(foreign ? { group: gvk.group, version: gvk.version } : {}), kind: gvk.kind, verbs: subresourceVerbs(s),
    };
  });
  return [main, ...subs];
}

export function apiResourceList(registry: Registry, view: GroupView, version: string) {
  const kinds = registry.inGroupVersion(view.own, version);
  if (kinds.length === 0) return undefined;
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf(view.name, version), resources: kinds.flatMap((k) => resourceEntries(k, view)) };
}

const scopeOf = (k: KindDef) => (k.namespaced ? 'Namespaced' : 'Cluster');

function discoveryResource(k: KindDef, view: GroupView) {
  const responseKind = { group: view.name, version: k.version, kind: k.kind };
  const subresources = (k.subresourceDefs ?? []).map((s) => ({ subresource: s.name, responseKind: subresourceKind(k, s, view.spell), verbs: subresourceVerbs(s) }));
  return {
    resource: k.resource, responseKind, scope: scopeOf(k), singularResource: k.singular, verbs: k.verbs,
    ...(k.shortNames ? { shortNames: k.shortNames } : {}), ...categoriesOf(k, view),
    ...(subresources.length ? { subresources } : {}),
  };
}

/** The aggregated form (`APIGroupDiscoveryList` v2) of the core group (`/api`) or the named groups (`/apis`), in the group spelling asked for. */
export function aggregatedDiscovery(registry: Registry, core: boolean, discoveryGroup: string, upstreamNames: boolean) {
  const items = groupViews(registry, upstreamNames).filter((v) => (v.own === '') === core).map((view) => ({
    metadata: { name: view.name, creationTimestamp: null },
    versions: registry.groups().get(view.own)!.map((version) => ({
      version, freshness: 'Current', resources: registry.inGroupVersion(view.own, version).map((k) => discoveryResource(k, view)),
    })),
  }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `${discoveryGroup}/v2`, metadata: {}, items };
}
