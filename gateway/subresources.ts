// The sub-resources of the built-in kinds: `status` (the kind's status strategy),
// `scale` (an autoscaling/v1 Scale view of spec.replicas), `finalize` (a
// namespace's spec.finalizers), `binding`, `eviction`, `token` (a service
// account's TokenRequest) and `log` (which needs a node agent).
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { isObject } from '../internal/apimachinery/meta.js';
import { StatusError, badRequest, invalid, methodNotAllowed, staleConflict } from '../internal/apimachinery/status.js';
import { formatLabelSelector } from '../internal/apimachinery/selectors.js';
import type { Backends } from './backends.js';
import type { ResourceRequest } from './context.js';
import { readObject } from './body.js';
import * as verbs from './handlers.js';
import * as reads from './reads.js';
import { patchObject, readPartialPatch, readPartialUpdate } from './patch.js';
import { checkUpdatePreconditions, type DeleteOptions } from './store/strategy.js';
import { storeFor, writeOptions } from './stores.js';
import { bindPod } from './binding.js';
import { writeBody, writeObject, formatOf } from './respond.js';
import { serveTokenRequest } from './tokenrequest.js';
import type { KindDef } from '../internal/registry/index.js';
import { setValueAt, valueAt } from '../internal/apiextensions/fieldpath.js';

/** Routes a sub-resource request by name and verb; 405 for a verb it does not serve. */
export async function serveSubresource(r: ResourceRequest, backends: Backends): Promise<void> {
  const sub = r.info.subresource;
  const verb = r.info.verb;
  const served = r.def.subresourceDefs?.find((s) => s.name === sub)?.verbs ?? [];
  if (served.includes('connect') || sub === 'log') throw badRequest(`${r.info.resource}/${sub} of "${r.info.name}" needs a node agent, and none serves this cluster`);
  if (!served.includes(verb)) throw methodNotAllowed(r.ctx.method, r.ctx.path);
  const part = PARTIAL_WRITES[sub];
  if (part) return servePartial(r, backends, part);
  switch (sub) {
    case 'status': return serveStatus(r, backends);
    case 'scale': return serveScale(r, backends);
    case 'finalize': return serveFinalize(r, backends);
    case 'binding': return serveBinding(r, backends);
    case 'eviction': return serveEviction(r, backends);
    case 'token': return serveTokenRequest(r, backends);
    default: throw new StatusError(404, 'NotFound', `the server could not find the requested resource (${r.info.resource}/${sub})`);
  }
}

/** Sub-resources that write one part of their object and keep the rest as stored. */
const PARTIAL_WRITES: Record<string, (next: ApiObject, current: ApiObject) => ApiObject> = {
  // A signing request's approval: only the conditions of its status.
  approval: (next, current) => ({ ...current, status: { ...(current.status as object), conditions: (next.status as { conditions?: unknown })?.conditions } }),
  ephemeralcontainers: (next, current) => ({ ...current, spec: { ...(current.spec as object), ephemeralContainers: (next.spec as { ephemeralContainers?: unknown })?.ephemeralContainers } }),
  // An in-place resize: only the resources of the containers, matched by name.
  resize: (next, current) => {
    const wanted = new Map(((next.spec as { containers?: Array<{ name: string; resources?: unknown }> })?.containers ?? []).map((c) => [c.name, c.resources]));
    const containers = ((current.spec as { containers?: Array<{ name: string }> })?.containers ?? [])
      .map((c) => (wanted.has(c.name) ? { ...c, resources: wanted.get(c.name) } : c));
    return { ...current, spec: { ...(current.spec as object), containers } };
  },
};

/** GET answers the object; PUT and PATCH change only the sub-resource's part. */
async function servePartial(r: ResourceRequest, backends: Backends, part: (next: ApiObject, current: ApiObject) => ApiObject): Promise<void> {
  if (r.info.verb === 'get') return reads.getObject(r, backends);
  if (r.info.verb === 'patch') return patchObject(r, backends, part);
  const opts = writeOptions(r);
  const { obj } = await readObject(r.ctx);
  const written = await storeFor(r, backends).update(r.info.namespace, r.info.name, (current) => {
    checkUpdatePreconditions(r.objects.gr, obj, current);
    return part(obj, current);
  }, { ...opts, conditional: Boolean(obj.metadata?.resourceVersion) });
  writeObject(r.ctx, r.def, 200, written);
}

function serveStatus(r: ResourceRequest, backends: Backends): Promise<void> {
  if (r.info.verb === 'get') return reads.getObject(r, backends);
  return r.info.verb === 'patch' ? patchObject(r, backends) : verbs.updateObject(r, backends);
}

/** Where a kind's Scale reads and writes: a custom kind's declared paths, spec.replicas for the built-in ones. */
const BUILT_IN_SCALE = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' };
const scalePathsOf = (def: KindDef) => def.scalePaths ?? BUILT_IN_SCALE;
const count = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** The selector of a Scale: a built-in kind's spec.selector, the text at a custom kind's labelSelectorPath. */
function scaleSelector(def: KindDef, obj: ApiObject): string {
  if (!def.scalePaths) return formatLabelSelector((obj.spec as { selector?: unknown } | undefined)?.selector);
  const path = def.scalePaths.labelSelectorPath;
  const selector = path ? valueAt(obj, path) : undefined;
  return typeof selector === 'string' ? selector : '';
}

/** The Scale view of an object: its replicas and selector. */
export function toScale(def: KindDef, obj: ApiObject): ApiObject {
  const paths = scalePathsOf(def);
  const { name, namespace, uid, resourceVersion, creationTimestamp } = obj.metadata ?? {};
  return {
    kind: 'Scale', apiVersion: 'autoscaling/v1',
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas: count(valueAt(obj, paths.specReplicasPath)) },
    status: { replicas: count(valueAt(obj, paths.statusReplicasPath)), selector: scaleSelector(def, obj) },
  };
}

/** A Scale's replicas as the object's spec.replicas; anything but a count of zero or more is refused. */
function replicasOf(r: ResourceRequest, scale: ApiObject): number {
  const replicas = (scale.spec as { replicas?: unknown } | undefined)?.replicas;
  if (Number.isInteger(replicas) && (replicas as number) >= 0) return replicas as number;
  throw new StatusError(422, 'Invalid', `Scale.autoscaling "${r.info.name}" is invalid: spec.replicas: Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`,
    { name: r.info.name, group: 'autoscaling', kind: 'Scale', causes: [{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: 'must be greater than or equal to 0' }] });
}

/** The object with the replicas a Scale asks for. */
function fromScale(r: ResourceRequest) {
  return (scale: ApiObject, current: ApiObject): ApiObject => {
    const next = structuredClone(current);
    setValueAt(next, scalePathsOf(r.def).specReplicasPath, replicasOf(r, scale));
    return next;
  };
}

/** An applied Scale as an applied configuration of its object: only the replicas, which the manager then owns there. */
function scaleConfig(r: ResourceRequest) {
  return (scale: ApiObject, current: ApiObject): ApiObject => {
    const { apiVersion, kind, metadata } = current;
    const config: ApiObject = { apiVersion, kind, metadata: { name: metadata?.name, ...(metadata?.namespace ? { namespace: metadata.namespace } : {}) } };
    if ((scale.spec as { replicas?: unknown } | undefined)?.replicas !== undefined) setValueAt(config, scalePathsOf(r.def).specReplicasPath, replicasOf(r, scale));
    return config;
  };
}

/** GET answers the Scale; PUT, PATCH and apply change the replicas, owned by the writer under the `scale` sub-resource. */
async function serveScale(r: ResourceRequest, backends: Backends): Promise<void> {
  const view = (obj: ApiObject) => toScale(r.def, obj);
  if (r.info.verb === 'get') {
    const { obj } = await r.objects.get(r.info.namespace, r.info.name);
    return writeBody(r.ctx, 200, view(obj), formatOf(r.ctx).mediaType);
  }
  const opts = writeOptions(r);
  const write = r.info.verb === 'update'
    ? await readPartialUpdate(r, fromScale(r))
    : await readPartialPatch(r, view, fromScale(r), scaleConfig(r));
  const written = await storeFor(r, backends).update(r.info.namespace, r.info.name, (current) => {
    if (write.rv && write.rv !== current.metadata?.resourceVersion) throw staleConflict(r.objects.gr, r.info.name);
    return write.next(current);
  }, { ...opts, manager: write.manager, conditional: Boolean(write.rv) });
  writeBody(r.ctx, 200, view(written), formatOf(r.ctx).mediaType);
}

async function serveFinalize(r: ResourceRequest, backends: Backends): Promise<void> {
  const opts = writeOptions(r);
  const { obj } = await readObject(r.ctx);
  const finalizers = (obj.spec as { finalizers?: unknown } | undefined)?.finalizers ?? [];
  if (!Array.isArray(finalizers)) throw badRequest('spec.finalizers must be a list');
  const written = await storeFor(r, backends).update(r.info.namespace, r.info.name, (current) => {
    checkUpdatePreconditions(r.objects.gr, obj, current);
    const next = structuredClone(current);
    next.spec = { ...(next.spec as object), finalizers };
    // The kind's rules name the finalizers a namespace may hold (the server's in either spelling, or qualified names).
    const causes = r.def.validate?.(next, current) ?? [];
    if (causes.length) throw invalid(r.def.kind, r.objects.gr, r.info.name, causes);
    return next;
  }, { ...opts, conditional: Boolean(obj.metadata?.resourceVersion) });
  writeObject(r.ctx, r.def, 200, written);
}

/** POST pods/{name}/binding: assigns the pod to the node the Binding targets, once. */
async function serveBinding(r: ResourceRequest, backends: Backends): Promise<void> {
  const { obj: binding } = await readObject(r.ctx);
  await bindPod(r, backends, r.info.name, binding);
  writeBody(r.ctx, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, formatOf(r.ctx).mediaType);
}

/** POST pods/{name}/eviction: deletes the pod with the Eviction's DeleteOptions. */
async function serveEviction(r: ResourceRequest, backends: Backends): Promise<void> {
  const opts = writeOptions(r);
  const { obj: eviction } = await readObject(r.ctx);
  const options = (isObject(eviction.deleteOptions) ? eviction.deleteOptions : {}) as DeleteOptions;
  await storeFor(r, backends).delete(r.info.namespace, r.info.name, options, { ...opts, subresource: '' });
  writeBody(r.ctx, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 }, formatOf(r.ctx).mediaType);
}
