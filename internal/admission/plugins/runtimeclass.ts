// RuntimeClass: a new pod naming a RuntimeClass gets the class's overhead and its
// scheduling constraints (nodeSelector and tolerations merged into the pod's);
// an unknown class, an overhead the class does not define, or a nodeSelector
// that contradicts the class's is refused. Classes are read from memory (storage
// on a miss, as upstream looks a class up live when its cache has none).
import { GROUP_NODE } from '../../names/index.js';
import { deepEqual } from '../../registry/values.js';
import type { StorageClient } from '../../storage/client.js';
import { KindCache } from '../kindcache.js';
import { copyObject, isPodWrite, refuse, specOf, type Obj } from '../pods.js';
import type { AdmissionPlugin, AdmissionRequest, Operation, PluginAnswer } from '../types.js';

export const RUNTIME_CLASS = 'RuntimeClass';

interface RuntimeClassInfo {
  overhead?: Record<string, unknown>;
  nodeSelector?: Record<string, string>;
  tolerations?: Obj[];
}

const project = (o: Obj): RuntimeClassInfo => ({
  overhead: o.overhead?.podFixed, nodeSelector: o.scheduling?.nodeSelector, tolerations: o.scheduling?.tolerations,
});

export const runtimeClassCache = (storage: StorageClient): KindCache<RuntimeClassInfo> =>
  new KindCache(storage, GROUP_NODE, 'runtimeclasses', project);

const MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

abstract class RuntimeClassPlugin {
  readonly name = RUNTIME_CLASS;

  constructor(private readonly classes: KindCache<RuntimeClassInfo>) {}

  stop(): void {
    this.classes.stop();
  }

  handles(operation: Operation): boolean {
    return operation === 'CREATE';
  }

  /** The pod's class, undefined when it names none; an unknown one is refused. */
  protected async classOf(request: AdmissionRequest, spec: Obj): Promise<RuntimeClassInfo | undefined> {
    if (typeof spec.runtimeClassName !== 'string') return undefined;
    const found = await this.classes.fetch('', spec.runtimeClassName);
    if (!found) throw refuse(request, `pod rejected: RuntimeClass ${JSON.stringify(spec.runtimeClassName)} not found`);
    return found;
  }
}

/** Sets the overhead and merges the scheduling constraints. */
export class RuntimeClassDefaults extends RuntimeClassPlugin implements AdmissionPlugin {
  readonly phase = 'mutating' as const;

  async admit(request: AdmissionRequest): Promise<PluginAnswer | void> {
    if (!isPodWrite(request)) return;
    const pod = copyObject(request);
    const spec = specOf(pod);
    const rc = await this.classOf(request, spec);
    if (!rc || (!rc.overhead && !rc.nodeSelector && !rc.tolerations)) return;
    if (rc.overhead) {
      if (spec.overhead && Object.keys(spec.overhead).length && !deepEqual(spec.overhead, rc.overhead)) throw refuse(request, MISMATCH);
      spec.overhead = structuredClone(rc.overhead);
    }
    if (rc.nodeSelector) {
      const selector = (spec.nodeSelector ?? {}) as Record<string, string>;
      for (const [key, value] of Object.entries(rc.nodeSelector)) {
        if (key in selector && selector[key] !== value) {
          throw refuse(request, `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${selector[key]}`);
        }
        selector[key] = value;
      }
      spec.nodeSelector = selector;
    }
    if (rc.tolerations) spec.tolerations = mergeTolerations((spec.tolerations ?? []) as Obj[], rc.tolerations);
    return { object: pod };
  }
}

/** Refuses an overhead the pod's class does not define. */
export class RuntimeClassOverhead extends RuntimeClassPlugin implements AdmissionPlugin {
  readonly phase = 'validating' as const;

  async admit(request: AdmissionRequest): Promise<void> {
    if (!isPodWrite(request)) return;
    const spec = (request.object!.spec ?? {}) as Obj;
    const rc = await this.classOf(request, spec);
    if (rc?.overhead) {
      if (!deepEqual(spec.overhead, rc.overhead)) throw refuse(request, MISMATCH);
    } else if (spec.overhead !== undefined) {
      throw refuse(request, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
    }
  }
}

/** Whether `wide` tolerates everything `t` does. */
function isSuperset(wide: Obj, t: Obj): boolean {
  if (deepEqual(wide, t)) return true;
  if (t.key !== wide.key && (wide.key || wide.operator !== 'Exists')) return false;
  if (t.effect !== wide.effect && wide.effect) return false;
  if (wide.effect === 'NoExecute' && typeof wide.tolerationSeconds === 'number') {
    if (typeof t.tolerationSeconds !== 'number' || t.tolerationSeconds > wide.tolerationSeconds) return false;
  }
  if (!wide.operator || wide.operator === 'Equal') return (t.operator ?? 'Equal') === 'Equal' && (t.value ?? '') === (wide.value ?? '');
  return wide.operator === 'Exists';
}

/** Both lists without the tolerations another one already covers (of equal ones, the first stays). */
export function mergeTolerations(first: Obj[], second: Obj[]): Obj[] {
  const all = [...first, ...second];
  const merged: Obj[] = [];
  all.forEach((t, i) => {
    if (merged.some((kept) => isSuperset(kept, t))) return;
    if (all.slice(i + 1).some((later) => !deepEqual(t, later) && isSuperset(later, t))) return;
    merged.push(t);
  });
  return merged;
}
