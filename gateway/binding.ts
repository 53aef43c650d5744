// Binding a pod to a node: the write behind pods/{name}/binding and the bindings collection.
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { StatusError, conflict } from '../internal/apimachinery/status.js';
import type { Backends } from './backends.js';
import type { ResourceRequest } from './context.js';
import { storeFor, writeOptions } from './stores.js';

/** Sets a pod's spec.nodeName from a Binding, once. */
export async function bindPod(r: ResourceRequest, backends: Backends, pod: string, binding: ApiObject): Promise<void> {
  const node = (binding.target as { name?: string } | undefined)?.name;
  if (!node) throw new StatusError(422, 'Invalid', `Binding "${pod}" is invalid: target.name: Required value`, { causes: [{ reason: 'FieldValueRequired', field: 'target.name', message: 'Required value' }] });
  const store = storeFor(r, backends, r.registry.lookup('', 'v1', 'pods')!);
  await store.update(r.info.namespace, pod, (current) => {
    const spec = (current.spec ?? {}) as { nodeName?: string };
    if (spec.nodeName) throw conflict(store.objects.gr, pod, `pod ${pod} is already assigned to node "${spec.nodeName}"`);
    const next = structuredClone(current);
    next.spec = { ...spec, nodeName: node };
    return next;
  }, { ...writeOptions(r), subresource: 'binding', conditional: false });
}
