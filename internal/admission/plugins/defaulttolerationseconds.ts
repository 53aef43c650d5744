// DefaultTolerationSeconds: a pod that does not tolerate the NoExecute taints of
// a not-ready or unreachable node gets a toleration of each for a while (300 s by
// default, --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds), so a short node outage does not evict it.
import { isWellKnown, TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE, type WellKnown } from '../../names/index.js';
import { copyObject, isPodWrite, specOf, type Obj } from '../pods.js';
import type { AdmissionPlugin, AdmissionRequest, Operation, PluginAnswer } from '../types.js';

export const DEFAULT_TOLERATION_SECONDS = 'DefaultTolerationSeconds';
export const DEFAULT_TOLERATION_SECONDS_VALUE = 300;

export interface TolerationSeconds {
  notReady: number;
  unreachable: number;
}

/** Whether a toleration covers the taint: its key or any key, NoExecute or any effect. */
const covers = (toleration: Obj, taint: WellKnown): boolean =>
  (!toleration.key || isWellKnown(toleration.key, taint)) && (!toleration.effect || toleration.effect === 'NoExecute');

export class DefaultTolerationSeconds implements AdmissionPlugin {
  readonly name = DEFAULT_TOLERATION_SECONDS;
  readonly phase = 'mutating' as const;

  constructor(private readonly seconds: TolerationSeconds) {}

  handles(operation: Operation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  async admit(request: AdmissionRequest): Promise<PluginAnswer | void> {
    if (!isPodWrite(request)) return;
    const tolerations = ((request.object!.spec as Obj | undefined)?.tolerations ?? []) as Obj[];
    const missing = ([[TAINT_NODE_NOT_READY, this.seconds.notReady], [TAINT_NODE_UNREACHABLE, this.seconds.unreachable]] as const)
      .filter(([taint]) => !tolerations.some((t) => covers(t, taint)));
    if (!missing.length) return;
    const pod = copyObject(request);
    const spec = specOf(pod);
    spec.tolerations = [...tolerations,
      ...missing.map(([taint, seconds]) => ({ key: taint.own, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds }))];
    return { object: pod };
  }
}
