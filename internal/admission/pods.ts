// What the pod plugins share: which requests are writes of a Pod itself, and
// the parts of a pod spec they read and change.
import { forbidden } from './errors.js';
import type { AdmissionError, AdmissionRequest, JsonObject } from './types.js';

export type Obj = Record<string, any>;

/** A write of a Pod itself (not a subresource), with its object. */
export const isPodWrite = (request: AdmissionRequest): boolean =>
  request.resource.group === '' && request.resource.resource === 'pods' && !request.subresource && request.object !== undefined;

/** A copy of the request's object for a plugin to change and answer. */
export const copyObject = (request: AdmissionRequest): Obj => structuredClone(request.object as JsonObject) as Obj;

/** The spec of a pod, created when missing. */
export function specOf(pod: Obj): Obj {
  pod.spec ??= {};
  return pod.spec as Obj;
}

/** The regular and init containers of a spec, the ones resources and mounts apply to. */
export const containersOf = (spec: Obj): Array<{ list: 'containers' | 'initContainers'; container: Obj }> =>
  (['initContainers', 'containers'] as const).flatMap((list) =>
    (Array.isArray(spec[list]) ? spec[list] as Obj[] : []).map((container) => ({ list, container })));

/** The name a refusal names, as upstream's: the object's name, else its generateName, else "Unknown". */
function refusedName(request: AdmissionRequest): string {
  const meta = ((request.object ?? request.oldObject)?.metadata ?? {}) as Obj;
  return meta.name || meta.generateName || request.name || 'Unknown';
}

/** A plugin's refusal of the request: `<resource> "<name>" is forbidden: <detail>`. */
export const refuse = (request: AdmissionRequest, detail: string): AdmissionError => forbidden(request.resource, refusedName(request), detail);
