// The store a request writes through: its kind's typed storage, the admission
// service, the escalation check of roles and bindings and the kind's shared pools.
import type { KindDef } from '../internal/registry/index.js';
import type { Backends } from './backends.js';
import type { ResourceRequest } from './context.js';
import { confirmNoEscalation } from './escalation.js';
import { Objects } from './objects.js';
import { Store } from './store/store.js';
import type { WriteOptions } from './store/store.js';
import { isDryRun } from './body.js';
import { addWarning } from './headers.js';

/** The store of the request's kind, or of `def` (another kind the request writes, as a binding writes its pod). */
export function storeFor(r: ResourceRequest, backends: Backends, def: KindDef = r.def): Store {
  const own = def === r.def;
  const objects = own ? r.objects : new Objects(r.objects.storage, def);
  return new Store(objects, {
    admission: (req) => backends.admit(req),
    ...(own ? { guard: (obj, old) => confirmNoEscalation(r, backends, obj, old), allocator: r.allocator } : {}),
  });
}

/** Who writes and how, from the request: its user, `dryRun` and sub-resource. */
export const writeOptions = (r: ResourceRequest): WriteOptions => ({
  user: r.user, dryRun: isDryRun(r.query), subresource: r.info.subresource, warn: (text) => addWarning(r.ctx, text),
});
