// The parameter objects of policy bindings (paramRef), read from memory: one
// Reflector per parameter kind, started when a policy first names the kind.
import type { ApiObject } from '../../apimachinery/meta.js';
import { formatLabelSelector, parseLabelSelector } from '../../apimachinery/selectors.js';
import { resourceTable } from '../../registry/resources.js';
import type { StorageClient } from '../../storage/client.js';
import { collectionPrefix, objectKey } from '../../storage/keys.js';
import { Reflector } from '../../storage/reflector.js';

type Obj = Record<string, any>;

/** How long a request waits for a parameter kind's first list. */
const SYNC_WAIT_MS = 1_000;

/** A binding's parameters could not be found or named; the failure policy decides. */
export class ParamError extends Error {}

interface ParamResource { group: string; resource: string; namespaced: boolean; reflector: Reflector }

function groupVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export class ParamSource {
  private readonly resources = new Map<string, ParamResource>();

  constructor(private readonly storage: StorageClient) {}

  stop(): void {
    for (const r of this.resources.values()) r.reflector.stop();
  }

  /** Starts following a kind a policy names, so its params are known by the policy's first request. */
  prepare(paramKind: Obj | undefined): void {
    if (!paramKind) return;
    this.resourceOf(paramKind).catch(() => undefined);
  }

  private async resourceOf(paramKind: Obj): Promise<ParamResource> {
    const { group, version } = groupVersion(String(paramKind.apiVersion ?? ''));
    const key = `${group}/${version}/${paramKind.kind}`;
    let found = this.resources.get(key);
    if (!found) {
      const entry = resourceTable().find((e) => e.group === group && e.version === version && e.kind === paramKind.kind);
      if (!entry) throw new ParamError(`failed to find resource referenced by paramKind: '${group ? `${group}/` : ''}${version}, Kind=${paramKind.kind}'`);
      const reflector = new Reflector(this.storage, collectionPrefix(entry.group, entry.resource)).start();
      found = { group: entry.group, resource: entry.resource, namespaced: entry.namespaced, reflector };
      this.resources.set(key, found);
    }
    if (!found.reflector.synced && !await found.reflector.waitForSync(SYNC_WAIT_MS)) {
      throw new ParamError(`paramKind kind \`${paramKind.apiVersion}, Kind=${paramKind.kind}\` not yet synced to use for admission`);
    }
    return found;
  }

  /** The parameters a binding's paramRef names for a request in `namespace` (empty for cluster-scoped requests). */
  async find(paramKind: Obj, paramRef: Obj, namespace: string): Promise<ApiObject[]> {
    const r = await this.resourceOf(paramKind);
    let ns = '';
    if (!r.namespaced && paramRef.namespace) throw new ParamError('paramRef.namespace must not be provided for a cluster-scoped `paramKind`');
    if (r.namespaced) {
      ns = typeof paramRef.namespace === 'string' && paramRef.namespace ? paramRef.namespace : namespace;
      if (!ns) throw new ParamError('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
    }
    if (typeof paramRef.name === 'string' && paramRef.name) {
      const param = r.reflector.items.get(objectKey(r.group, r.resource, ns, paramRef.name));
      return param ? [param] : [];
    }
    const matches = parseLabelSelector(formatLabelSelector(paramRef.selector));
    const prefix = collectionPrefix(r.group, r.resource, ns);
    const out: ApiObject[] = [];
    for (const [key, obj] of r.reflector.items) {
      if (key.startsWith(prefix) && (!matches || matches(obj.metadata?.labels ?? {}))) out.push(obj);
    }
    return out;
  }
}
