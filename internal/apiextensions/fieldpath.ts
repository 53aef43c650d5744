// The simple JSON paths a CRD names fields by: plain names and indexes
// (`.spec.replicas`, `.spec.ports[0].port`), in selectable fields, the scale
// sub-resource's replica and selector paths, and most printer columns.
import { isObject, type Obj } from '../registry/values.js';

const SIMPLE_PATH = /^(?:\.[^.[\]\\*@$?()'"\s]+|\[\d+\])+$/;
const SIMPLE_STEP = /\.([^.[\]]+)|\[(\d+)\]/g;

type Step = string | number;

/** The value the steps lead to: own properties and array indexes only. */
function walk(obj: unknown, steps: Step[]): unknown {
  let cur = obj;
  for (const step of steps) {
    if (typeof step === 'number') cur = Array.isArray(cur) ? cur[step] : undefined;
    else cur = isObject(cur) && Object.hasOwn(cur, step) ? cur[step] : undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** The reader of a path of plain names and indexes; undefined when the path is any other JSONPath. */
export function simplePath(path: string): ((obj: unknown) => unknown) | undefined {
  if (!SIMPLE_PATH.test(path)) return undefined;
  const steps = [...path.matchAll(SIMPLE_STEP)].map((m) => (m[2] === undefined ? m[1] : Number(m[2])));
  return (obj) => walk(obj, steps);
}

/** The reader of a dotted path of names (`.spec.replicas`), as selectable fields and scale paths are written. */
export function namesPath(path: string): (obj: unknown) => unknown {
  const steps = path.split('.').filter(Boolean);
  return (obj) => walk(obj, steps);
}

/** A value at a dotted path of names (`.spec.replicas`). */
export const valueAt = (obj: unknown, path: string): unknown => namesPath(path)(obj);

/** Sets the value at a simple JSON path, creating the objects on the way. */
export function setValueAt(obj: Obj, path: string, value: unknown): void {
  const keys = path.split('.').filter(Boolean);
  let cur = obj;
  for (const key of keys.slice(0, -1)) {
    if (!isObject(cur[key])) cur[key] = {};
    cur = cur[key] as Obj;
  }
  cur[keys[keys.length - 1]] = value;
}
