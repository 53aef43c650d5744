// Priority: a new pod's priorityClassName (or the global default class, else none)
// is resolved to spec.priority and spec.preemptionPolicy; a pod naming an unknown
// class, or giving a priority or policy its class does not, is refused. An update
// keeps what creation set. Of PriorityClasses, only one may be the global default,
// and the system classes cannot be deleted. Classes are read from memory.
import { GROUP_SCHEDULING } from '../../names/index.js';
import { KindCache } from '../kindcache.js';
import { copyObject, isPodWrite, refuse, specOf, type Obj } from '../pods.js';
import type { StorageClient } from '../../storage/client.js';
import type { AdmissionPlugin, AdmissionRequest, Operation, PluginAnswer } from '../types.js';
import { SYSTEM_PRIORITY_CLASSES } from './priority-classes.js';

export const PRIORITY = 'Priority';

interface PriorityClass {
  name: string;
  value: number;
  globalDefault: boolean;
  preemptionPolicy?: string;
}

const project = (o: Obj): PriorityClass => ({
  name: o.metadata?.name ?? '', value: typeof o.value === 'number' ? o.value : 0,
  globalDefault: o.globalDefault === true, preemptionPolicy: o.preemptionPolicy,
});

export const priorityClassCache = (storage: StorageClient): KindCache<PriorityClass> =>
  new KindCache(storage, GROUP_SCHEDULING, 'priorityclasses', project);

const isPriorityClass = (request: AdmissionRequest): boolean =>
  request.resource.group === GROUP_SCHEDULING && request.resource.resource === 'priorityclasses' && !request.subresource;

/** The pod plugin (mutating); the PriorityClass checks are `PriorityClassGuard` (validating). */
export class Priority implements AdmissionPlugin {
  readonly name = PRIORITY;
  readonly phase = 'mutating' as const;

  constructor(private readonly classes: KindCache<PriorityClass>) {}

  stop(): void {
    this.classes.stop();
  }

  handles(operation: Operation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  async admit(request: AdmissionRequest): Promise<PluginAnswer | void> {
    if (!isPodWrite(request)) return;
    const pod = copyObject(request);
    const spec = specOf(pod);
    if (request.operation === 'UPDATE') return this.keep(request, pod, spec);
    let resolved: { value: number; preemptionPolicy?: string };
    if (!spec.priorityClassName) {
      const fallback = defaultClass(this.classes.list());
      if (fallback) spec.priorityClassName = fallback.name;
      resolved = fallback ?? { value: 0 };
    } else {
      const found = this.classes.get('', spec.priorityClassName);
      if (!found) throw refuse(request, `no PriorityClass with name ${spec.priorityClassName} was found`);
      resolved = found;
    }
    if (typeof spec.priority === 'number' && spec.priority !== resolved.value) {
      throw refuse(request, `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${resolved.value} from the given PriorityClass name`);
    }
    spec.priority = resolved.value;
    if (resolved.preemptionPolicy) {
      if (spec.preemptionPolicy && spec.preemptionPolicy !== resolved.preemptionPolicy) {
        throw refuse(request, `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${resolved.preemptionPolicy} from the given PriorityClass name`);
      }
      spec.preemptionPolicy = resolved.preemptionPolicy;
    }
    return { object: pod };
  }

  /** An update that leaves out the priority or policy keeps the stored one (creation set it). */
  private keep(request: AdmissionRequest, pod: Obj, spec: Obj): PluginAnswer | void {
    const old = (request.oldObject?.spec ?? {}) as Obj;
    let changed = false;
    for (const field of ['priority', 'preemptionPolicy']) {
      if (spec[field] === undefined && old[field] !== undefined) {
        spec[field] = old[field];
        changed = true;
      }
    }
    return changed ? { object: pod } : undefined;
  }
}

/** The global default class of the lowest value, as upstream picks among several. */
function defaultClass(classes: PriorityClass[]): PriorityClass | undefined {
  return classes.filter((c) => c.globalDefault).reduce<PriorityClass | undefined>((low, c) => (!low || c.value < low.value ? c : low), undefined);
}

/** Of PriorityClasses: one global default at most; the system classes are never deleted. */
export class PriorityClassGuard implements AdmissionPlugin {
  readonly name = PRIORITY;
  readonly phase = 'validating' as const;

  constructor(private readonly classes: KindCache<PriorityClass>) {}

  stop(): void {
    this.classes.stop();
  }

  handles(operation: Operation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE' || operation === 'DELETE';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    if (!isPriorityClass(request)) return;
    if (request.operation === 'DELETE') {
      if (SYSTEM_PRIORITY_CLASSES.some((c) => c.metadata.name === request.name)) {
        throw refuse(request, 'this is a system priority class and cannot be deleted');
      }
      return;
    }
    const pc = request.object as Obj;
    if (pc.globalDefault !== true) return;
    const current = defaultClass(this.classes.list());
    if (current && (request.operation === 'CREATE' || current.name !== pc.metadata?.name)) {
      throw refuse(request, `PriorityClass ${current.name} is already marked as default. Only one default can exist`);
    }
  }
}
