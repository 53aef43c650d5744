// Field ownership of non-apply writes: the fields a create or update changes are
// recorded under its manager in `metadata.managedFields`.
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import { FieldSet, UNTYPED, recordUpdate, typeOf, type FieldManagerOptions, type TypeNode } from '../../internal/patch/index.js';
import type { KindDef } from '../../internal/registry/index.js';

/** Who writes, and through which sub-resource ('' for the object itself). */
export interface FieldOwner {
  manager: string;
  subresource: string;
}

/** The kind's type for merging and ownership; kinds without a schema are untyped. */
export function kindType(def: KindDef): TypeNode {
  const schema = def.schema();
  return schema ? typeOf(schema) : UNTYPED;
}

/** Fields a write through the main resource cannot own: `status` when it has its own sub-resource. */
function ignoredFields(def: KindDef, subresource: string): FieldSet | undefined {
  if (subresource === 'status') return FieldSet.of([{ field: 'spec' }]);
  return def.statusSubresource || def.subresources?.includes('status') ? FieldSet.of([{ field: 'status' }]) : undefined;
}

export function managerOptions(def: KindDef, apiVersion: string, owner: FieldOwner): FieldManagerOptions {
  return {
    type: kindType(def), apiVersion, kind: def.kind, manager: owner.manager,
    ...(owner.subresource ? { subresource: owner.subresource } : {}), ignored: ignoredFields(def, owner.subresource),
  };
}

/** Records the fields a create (`live` undefined) or update changes under the owner, in
 * `next.metadata.managedFields`. `next` is the object as it will be stored (unknown fields
 * dropped, defaults applied), so a write omitting a defaulted field does not take it from its owner. */
export function recordOwnership(def: KindDef, apiVersion: string, owner: FieldOwner, live: ApiObject | undefined, next: ApiObject): void {
  recordUpdate(live, next, managerOptions(def, apiVersion, owner));
}
