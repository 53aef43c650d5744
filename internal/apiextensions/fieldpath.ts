// The simple JSON paths a CRD names fields by (`.spec.replicas`): in selectable
// fields and in the scale sub-resource's replica and selector paths.
import { asObj, type Obj } from '../registry/values.js';

/** A value at a simple JSON path (`.spec.replicas`). */
export function valueAt(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const key of path.split('.').filter(Boolean)) cur = asObj(cur)?.[key];
  return cur;
}

/** Sets the value at a simple JSON path, creating the objects on the way. */
export function setValueAt(obj: Obj, path: string, value: unknown): void {
  const keys = path.split('.').filter(Boolean);
  let cur = obj;
  for (const key of keys.slice(0, -1)) {
    if (!asObj(cur[key])) cur[key] = {};
    cur = cur[key] as Obj;
  }
  cur[keys[keys.length - 1]] = value;
}
