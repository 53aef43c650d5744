// The RBAC policy in memory: the four kinds mirrored from storage by
// reflectors, bindings grouped by namespace, so a decision reads no storage.
// Only what decisions read is kept: a role's rules, a binding's reference and
// subjects; never the whole object (metadata, managedFields).
import type { ApiObject } from '../apimachinery/meta.js';
import { GROUP_RBAC } from '../names/index.js';
import type { KeyValue, StorageClient } from '../storage/client.js';
import { collectionPrefix, objectKey } from '../storage/keys.js';
import { decodeStored } from '../storage/objects.js';
import { Reflector } from '../storage/reflector.js';
import type { PolicyRule, RoleRef, Subject } from './types.js';

const KINDS = ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'] as const;

export interface Binding {
  kind: 'RoleBinding' | 'ClusterRoleBinding';
  name: string;
  namespace: string;
  roleRef: RoleRef;
  subjects: Subject[];
}

/** The `<kind> "<name>" not found` error of a missing role, in the API's words. */
export class RoleNotFound extends Error {
  constructor(kind: string, name: string) {
    super(`${kind.toLowerCase()}.${GROUP_RBAC} "${name}" not found`);
  }
}

const asArray = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

/** A role as kept: its rules. */
interface Role {
  rules: PolicyRule[];
}

type Kept = Role | Binding;

function bindingOf(obj: ApiObject): Binding {
  const o = obj as ApiObject & { roleRef?: RoleRef; subjects?: unknown };
  return {
    kind: obj.kind === 'RoleBinding' ? 'RoleBinding' : 'ClusterRoleBinding', name: obj.metadata?.name ?? '',
    namespace: obj.metadata?.namespace ?? '', roleRef: o.roleRef ?? { kind: '', name: '' }, subjects: asArray<Subject>(o.subjects),
  };
}

/** The projection a reflector of `resource` keeps per key. */
function keptOf(resource: typeof KINDS[number]) {
  return (kv: KeyValue): Kept => {
    const obj = decodeStored(kv);
    return resource.endsWith('bindings') ? bindingOf(obj) : { rules: asArray<PolicyRule>((obj as ApiObject & { rules?: unknown }).rules) };
  };
}

export class PolicyIndex {
  private readonly reflectors: Array<Reflector<Kept>>;
  /** Bindings as decided on, converted once per change: RoleBindings by namespace, ClusterRoleBindings by key. */
  private readonly roleBindings = new Map<string, Map<string, Binding>>();
  private readonly clusterBindings = new Map<string, Binding>();
  private readonly listeners: Array<() => void> = [];
  private notifying = false;

  constructor(storage: StorageClient) {
    this.reflectors = KINDS.map((resource) => new Reflector<Kept>(storage, collectionPrefix(GROUP_RBAC, resource), {
      upsert: (key, kept) => { this.indexBinding(resource, key, kept); this.changed(); },
      deleted: (key, kept) => { this.unindexBinding(resource, key, kept); this.changed(); },
      synced: () => this.changed(),
    }, keptOf(resource)));
  }

  start(): this {
    for (const r of this.reflectors) r.start();
    return this;
  }

  stop(): void {
    for (const r of this.reflectors) r.stop();
  }

  /** Resolves true once every kind has been listed. */
  async waitForSync(timeoutMs: number): Promise<boolean> {
    return (await Promise.all(this.reflectors.map((r) => r.waitForSync(timeoutMs)))).every(Boolean);
  }

  get synced(): boolean {
    return this.reflectors.every((r) => r.synced);
  }

  /** `listener` runs after every change to the policy has been taken in. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Listeners hear once per burst of changes (a relist brings many), after all of them are in. */
  private changed(): void {
    if (this.notifying) return;
    this.notifying = true;
    setImmediate(() => {
      this.notifying = false;
      for (const l of this.listeners) l();
    });
  }

  private indexBinding(resource: string, key: string, kept: Kept): void {
    if (resource === 'clusterrolebindings') this.clusterBindings.set(key, kept as Binding);
    if (resource !== 'rolebindings') return;
    const ns = (kept as Binding).namespace;
    if (!this.roleBindings.has(ns)) this.roleBindings.set(ns, new Map());
    this.roleBindings.get(ns)!.set(key, kept as Binding);
  }

  private unindexBinding(resource: string, key: string, kept: Kept): void {
    if (resource === 'clusterrolebindings') this.clusterBindings.delete(key);
    if (resource !== 'rolebindings') return;
    const ns = (kept as Binding).namespace;
    this.roleBindings.get(ns)?.delete(key);
    if (this.roleBindings.get(ns)?.size === 0) this.roleBindings.delete(ns);
  }

  /** Whether the object of `resource` (one of the four kinds) is in the index. */
  has(resource: string, namespace: string, name: string): boolean {
    const i = KINDS.indexOf(resource as typeof KINDS[number]);
    return i >= 0 && this.reflectors[i].items.has(objectKey(GROUP_RBAC, resource, namespace, name));
  }

  clusterRoleBindings(): Iterable<Binding> {
    return this.clusterBindings.values();
  }

  roleBindingsIn(namespace: string): Iterable<Binding> {
    return this.roleBindings.get(namespace)?.values() ?? [];
  }

  /** The rules of the role a binding in `namespace` refers to; throws RoleNotFound. */
  roleRules(ref: RoleRef, namespace: string): PolicyRule[] {
    const role = ref.kind === 'Role'
      ? this.reflectors[0].items.get(objectKey(GROUP_RBAC, 'roles', namespace, ref.name))
      : ref.kind === 'ClusterRole' ? this.reflectors[1].items.get(objectKey(GROUP_RBAC, 'clusterroles', '', ref.name)) : undefined;
    if (!role) throw new RoleNotFound(ref.kind || 'Role', ref.name);
    return (role as Role).rules;
  }
}
