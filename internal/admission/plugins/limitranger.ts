// LimitRanger: the LimitRanges of a namespace give a new pod's containers their
// default limits and requests (recorded in the limit-ranger annotation), then
// bound what containers, pods and PersistentVolumeClaims may ask for: min, max
// and maxLimitRequestRatio, refused with upstream's messages. LimitRanges are
// read from memory.
import { LIMIT_RANGER_ANNOTATION } from '../../names/index.js';
import { parseQuantity } from '../../registry/quantity.js';
import type { StorageClient } from '../../storage/client.js';
import { KindCache } from '../kindcache.js';
import { containersOf, copyObject, refuse, specOf, type Obj } from '../pods.js';
import type { AdmissionPlugin, AdmissionRequest, Operation, PluginAnswer } from '../types.js';

export const LIMIT_RANGER = 'LimitRanger';

type Resources = Record<string, string>;
interface LimitItem {
  type: string;
  min?: Resources;
  max?: Resources;
  default?: Resources;
  defaultRequest?: Resources;
  maxLimitRequestRatio?: Resources;
}

const project = (o: Obj): LimitItem[] => (Array.isArray(o.spec?.limits) ? o.spec.limits as LimitItem[] : []);

export const limitRangeCache = (storage: StorageClient): KindCache<LimitItem[]> => new KindCache(storage, '', 'limitranges', project);

const isCore = (request: AdmissionRequest, resource: string): boolean =>
  request.resource.group === '' && request.resource.resource === resource && !request.subresource && request.object !== undefined;

abstract class LimitRangerPlugin {
  readonly name = LIMIT_RANGER;

  constructor(protected readonly ranges: KindCache<LimitItem[]>) {}

  stop(): void {
    this.ranges.stop();
  }

  handles(operation: Operation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  /** Every item of the namespace's LimitRanges, one list per LimitRange. */
  protected rangesOf(request: AdmissionRequest): LimitItem[][] {
    return this.ranges.list(request.namespace);
  }
}

/** Default limits and requests for the containers of a new pod. */
export class LimitRangerDefaults extends LimitRangerPlugin implements AdmissionPlugin {
  readonly phase = 'mutating' as const;

  async admit(request: AdmissionRequest): Promise<PluginAnswer | void> {
    if (!isCore(request, 'pods') || request.operation !== 'CREATE') return;
    const ranges = this.rangesOf(request);
    if (!ranges.length) return;
    const pod = copyObject(request);
    const notes = ranges.flatMap((items) => applyDefaults(specOf(pod), defaultsOf(items)));
    if (!notes.length) return;
    pod.metadata ??= {};
    pod.metadata.annotations = { ...pod.metadata.annotations, [LIMIT_RANGER_ANNOTATION.own]: `LimitRanger plugin set: ${notes.join('; ')}` };
    return { object: pod };
  }
}

/** The Container items' default limits and requests, the later items winning. */
function defaultsOf(items: LimitItem[]): { limits: Resources; requests: Resources } {
  const containers = items.filter((i) => i.type === 'Container');
  return {
    limits: Object.assign({}, ...containers.map((i) => i.default ?? {})),
    requests: Object.assign({}, ...containers.map((i) => i.defaultRequest ?? {})),
  };
}

/** Fills what each container leaves out; answers upstream's notes of what was set. */
function applyDefaults(spec: Obj, defaults: { limits: Resources; requests: Resources }): string[] {
  const notes: string[] = [];
  const fill = (container: Obj, kind: 'limits' | 'requests', values: Resources): string[] => {
    const set = Object.keys(values).filter((k) => container.resources?.[kind]?.[k] === undefined).sort();
    if (set.length) {
      container.resources ??= {};
      container.resources[kind] = { ...container.resources[kind], ...Object.fromEntries(set.map((k) => [k, values[k]])) };
    }
    return set;
  };
  // Regular containers first, as upstream writes its note.
  const ordered = [...containersOf(spec).filter((c) => c.list === 'containers'), ...containersOf(spec).filter((c) => c.list === 'initContainers')];
  for (const { list, container } of ordered) {
    const what = list === 'containers' ? 'container' : 'init container';
    const limits = fill(container, 'limits', defaults.limits);
    const requests = fill(container, 'requests', defaults.requests);
    if (requests.length) notes.push(`${requests.join(', ')} request for ${what} ${container.name}`);
    if (limits.length) notes.push(`${limits.join(', ')} limit for ${what} ${container.name}`);
  }
  return notes;
}

/** The min, max and ratio bounds of containers, pods and claims. */
export class LimitRangerBounds extends LimitRangerPlugin implements AdmissionPlugin {
  readonly phase = 'validating' as const;

  async admit(request: AdmissionRequest): Promise<void> {
    const pod = isCore(request, 'pods') && request.operation === 'CREATE';
    const claim = isCore(request, 'persistentvolumeclaims');
    if (!pod && !claim) return;
    if (request.oldObject && (request.oldObject.metadata as Obj | undefined)?.deletionTimestamp) return;
    for (const items of this.rangesOf(request)) {
      const spec = (request.object!.spec ?? {}) as Obj;
      const errors = pod ? podViolations(items, spec) : claimViolations(items, spec);
      if (errors.length) throw refuse(request, errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
    }
  }
}

type Observed = Record<string, unknown> | undefined;
const value = (q: unknown): number => parseQuantity(q) ?? 0;

function minViolation(type: string, name: string, bound: string, requests: Observed, limits: Observed): string | undefined {
  const req = requests?.[name];
  const lim = limits?.[name];
  if (req === undefined) return `minimum ${name} usage per ${type} is ${bound}.  No request is specified`;
  if (value(req) < value(bound)) return `minimum ${name} usage per ${type} is ${bound}, but request is ${req}`;
  if (lim !== undefined && value(lim) < value(bound)) return `minimum ${name} usage per ${type} is ${bound}, but limit is ${lim}`;
  return undefined;
}

function maxViolation(type: string, name: string, bound: string, requests: Observed, limits: Observed): string | undefined {
  const req = requests?.[name];
  const lim = limits?.[name];
  if (lim === undefined) return `maximum ${name} usage per ${type} is ${bound}.  No limit is specified`;
  if (value(lim) > value(bound)) return `maximum ${name} usage per ${type} is ${bound}, but limit is ${lim}`;
  if (req !== undefined && value(req) > value(bound)) return `maximum ${name} usage per ${type} is ${bound}, but request is ${req}`;
  return undefined;
}

function ratioViolation(type: string, name: string, bound: string, requests: Observed, limits: Observed): string | undefined {
  const req = value(requests?.[name]);
  const lim = value(limits?.[name]);
  if (!req) return `${name} max limit to request ratio per ${type} is ${bound}, but no request is specified or request is 0`;
  if (!lim) return `${name} max limit to request ratio per ${type} is ${bound}, but no limit is specified or limit is 0`;
  const ratio = lim / req;
  // Compared in thousandths, as upstream does, so 1.5 allows exactly 1.5.
  if (Math.round(ratio * 1000 * 1e6) / 1e6 > Math.round(value(bound) * 1000)) {
    return `${name} max limit to request ratio per ${type} is ${bound}, but provided ratio is ${ratio.toFixed(6)}`;
  }
  return undefined;
}

/** Every bound of an item checked against one set of requests and limits. */
function boundViolations(item: LimitItem, requests: Observed, limits: Observed): string[] {
  const checks: Array<[Resources | undefined, typeof minViolation]> = [[item.min, minViolation], [item.max, maxViolation], [item.maxLimitRequestRatio, ratioViolation]];
  return checks.flatMap(([bounds, check]) => Object.entries(bounds ?? {})
    .map(([name, bound]) => check(item.type, name, String(bound), requests, limits))
    .filter((e): e is string => e !== undefined));
}

function podViolations(items: LimitItem[], spec: Obj): string[] {
  return items.flatMap((item) => {
    if (item.type === 'Container') {
      const ordered = [...containersOf(spec).filter((c) => c.list === 'containers'), ...containersOf(spec).filter((c) => c.list === 'initContainers')];
      return ordered.flatMap(({ container }) => boundViolations(item, container.resources?.requests, container.resources?.limits));
    }
    if (item.type === 'Pod') return boundViolations(item, podTotal(spec, 'requests'), podTotal(spec, 'limits'));
    return [];
  });
}

/** A pod's requests or limits: its containers' sum, at least each init container's, plus the overhead. */
function podTotal(spec: Obj, kind: 'requests' | 'limits'): Record<string, string> {
  const total: Record<string, number> = {};
  for (const { list, container } of containersOf(spec)) {
    if (list !== 'containers') continue;
    for (const [k, q] of Object.entries(container.resources?.[kind] ?? {})) total[k] = (total[k] ?? 0) + value(q);
  }
  for (const { list, container } of containersOf(spec)) {
    if (list !== 'initContainers') continue;
    for (const [k, q] of Object.entries(container.resources?.[kind] ?? {})) total[k] = Math.max(total[k] ?? 0, value(q));
  }
  for (const [k, q] of Object.entries((spec.overhead ?? {}) as Record<string, unknown>)) total[k] = (total[k] ?? 0) + value(q);
  return Object.fromEntries(Object.entries(total).map(([k, n]) => [k, quantityText(n)]));
}

/** A computed total as a quantity: whole units, else thousandths (`1500m`). */
const quantityText = (n: number): string => (Number.isInteger(n) ? String(n) : `${Math.round(n * 1000)}m`);

function claimViolations(items: LimitItem[], spec: Obj): string[] {
  const requests = spec.resources?.requests as Observed;
  return items.filter((i) => i.type === 'PersistentVolumeClaim').flatMap((item) => [
    ...Object.entries(item.min ?? {}).map(([name, bound]) => minViolation(item.type, name, String(bound), requests, {})),
    ...Object.entries(item.max ?? {}).map(([name, bound]) => {
      const req = requests?.[name];
      if (req === undefined) return `maximum ${name} usage per ${item.type} is ${bound}.  No request is specified`;
      return value(req) > value(bound) ? `maximum ${name} usage per ${item.type} is ${bound}, but request is ${req}` : undefined;
    }),
  ].filter((e): e is string => e !== undefined));
}
