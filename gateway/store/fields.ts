// Field ownership of non-apply writes: the fields a create or update changes are
// recorded under its manager in `metadata.managedFields`.
import { FieldSet, UNTYPED, typeOf, type FieldManagerOptions, type TypeNode } from '../../internal/patch/index.js';
import type { KindDef } from '../../internal/registry/index.js';

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

/** How the manager's fields are recorded; `subresource` is '' for the object itself. */
export function managerOptions(def: KindDef, apiVersion: string, manager: string, subresource: string): FieldManagerOptions {
  return {
    type: kindType(def), apiVersion, kind: def.kind, manager,
    ...(subresource ? { subresource } : {}), ignored: ignoredFields(def, subresource),
  };
}
