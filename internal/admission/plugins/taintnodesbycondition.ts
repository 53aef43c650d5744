// TaintNodesByCondition: a Node is created with the not-ready NoSchedule taint
// (unless it carries one of that key and effect already), so nothing is
// scheduled onto it before its agent reports it Ready and the taint goes.
import { NODE_NOT_READY_TAINT, isWellKnown } from '../../names/index.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject, Operation, PluginAnswer } from '../types.js';

export const TAINT_NODES_BY_CONDITION = 'TaintNodesByCondition';

interface Taint {
  key?: string;
  effect?: string;
}

export class TaintNodesByCondition implements AdmissionPlugin {
  readonly name = TAINT_NODES_BY_CONDITION;
  readonly phase = 'mutating' as const;

  handles(operation: Operation): boolean {
    return operation === 'CREATE';
  }

  async admit(request: AdmissionRequest): Promise<PluginAnswer | void> {
    const { group, resource } = request.resource;
    if (group !== '' || resource !== 'nodes' || request.subresource || !request.object) return;
    const spec = (request.object.spec ?? {}) as { taints?: Taint[] };
    const taints = Array.isArray(spec.taints) ? spec.taints : [];
    if (taints.some((t) => isWellKnown(t?.key, NODE_NOT_READY_TAINT) && t.effect === 'NoSchedule')) return;
    const object = structuredClone(request.object);
    object.spec = { ...spec, taints: [...taints, { key: NODE_NOT_READY_TAINT.own, effect: 'NoSchedule' }] } as JsonObject;
    return { object };
  }
}
