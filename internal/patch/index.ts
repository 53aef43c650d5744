// Patching objects: RFC 6902 JSON patch, RFC 7386 merge patch, strategic merge
// patch for built-in kinds, and field ownership for server-side apply.
export { applyJsonPatch } from './jsonpatch.js';
export { mergePatch } from './merge.js';
export { strategicMergePatch } from './strategic.js';
export { rootType, typeOf, UNTYPED, type TypeNode } from './schema.js';
export { merge as mergeApplied } from './fieldmanager/typed.js';
export {
  apply, recordUpdate, managerName, validateManagerName, FieldSet, type ApplyOptions, type FieldManagerOptions,
} from './fieldmanager/index.js';
