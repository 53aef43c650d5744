// Validation of an object about to be written and the call to the admission service.
import { randomUUID } from 'node:crypto';
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { StatusError, invalid, type StatusCause } from '../internal/apimachinery/status.js';
import * as v from '../internal/apimachinery/validation.js';
import { nameCauses, type KindDef } from '../internal/registry/index.js';
import type { Backends, UserInfo } from './backends.js';
import { groupResource } from './objects.js';

/** Which of the kind's rules a write answers to: its spec rules, its status rules, or none
 * (server-defined changes such as a binding or a finalize). */
export type WriteRules = 'spec' | 'status' | 'metadata';

/** Metadata rules every kind shares, then the kind's own rules; 422 Invalid on any cause. */
export function validateObject(def: KindDef, obj: ApiObject, old?: ApiObject, rules: WriteRules = 'spec'): void {
  const meta = obj.metadata ?? {};
  const causes: StatusCause[] = [];
  if (!meta.name) causes.push(v.required(meta.generateName !== undefined ? 'metadata.generateName' : 'metadata.name'));
  else causes.push(...nameCauses(def, meta.name));
  if (def.namespaced && !meta.namespace) causes.push(v.required('metadata.namespace'));
  if (!def.namespaced && meta.namespace) causes.push(v.forbiddenField('metadata.namespace', 'not allowed on this type'));
  causes.push(...v.labels('metadata.labels', meta.labels), ...v.annotations('metadata.annotations', meta.annotations));
  if (old) causes.push(...v.metadataUpdate(meta, old.metadata ?? {}));
  if (rules === 'status' && old) causes.push(...(def.validateStatusUpdate?.(obj, old) ?? []));
  if (rules === 'spec') causes.push(...(def.validate?.(obj, old) ?? []));
  if (causes.length) throw invalid(def.kind, groupResource(def), meta.name ?? meta.generateName ?? '', causes);
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

/** Runs the admission chain; answers the (possibly mutated) object or throws its refusal. */
export async function admit(backends: Backends, def: KindDef, op: Operation, user: UserInfo,
  obj: ApiObject | undefined, old: ApiObject | undefined, dryRun: boolean, options: unknown = {}, subresource = ''): Promise<ApiObject | undefined> {
  const meta = obj?.metadata ?? old?.metadata ?? {};
  const res = await backends.admit({
    uid: randomUUID(),
    kind: { group: def.group, version: def.version, kind: def.kind },
    resource: { group: def.group, version: def.version, resource: def.resource },
    subresource, name: meta.name ?? '', namespace: meta.namespace ?? '', operation: op, user,
    object: obj ? Buffer.from(JSON.stringify(obj)) : Buffer.alloc(0),
    oldObject: old ? Buffer.from(JSON.stringify(old)) : Buffer.alloc(0),
    dryRun, options: Buffer.from(JSON.stringify(options)),
  });
  if (!res.allowed) {
    // A chain that could not reach a service it reads asks the client to retry, as any 503 does.
    const retry = res.code === 503;
    throw new StatusError(res.code || 403, res.reason || 'Forbidden', res.message || 'admission refused the request',
      { name: meta.name, kind: def.resource, ...(def.group ? { group: def.group } : {}),
        ...(res.causes.length ? { causes: res.causes.map((c) => ({ reason: c.type, message: c.message, field: c.field })) } : {}),
        ...(retry ? { retryAfterSeconds: 1 } : {}) }, retry ? { 'Retry-After': '1' } : {});
  }
  return res.object.length ? JSON.parse(res.object.toString('utf8')) : obj;
}
