// The call to the admission service for one write: the request it sees and how
// its refusal becomes the client's error.
import { randomUUID } from 'node:crypto';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import { StatusError } from '../../internal/apimachinery/status.js';
import type { KindDef } from '../../internal/registry/index.js';
import type { AdmitRequest } from '../../internal/rpc/gen/svc/admission/v1/AdmitRequest.js';
import type { AdmitResponse__Output } from '../../internal/rpc/gen/svc/admission/v1/AdmitResponse.js';
import type { UserInfo__Output as UserInfo } from '../../internal/rpc/gen/svc/authn/v1/UserInfo.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

/** Asks the admission chain about one request (the gateway's client of the admission service). */
export type AdmissionCall = (req: AdmitRequest) => Promise<AdmitResponse__Output>;

export interface Admission {
  def: KindDef;
  operation: Operation;
  user: UserInfo;
  /** The object as it will be written; undefined for a delete. */
  obj?: ApiObject;
  /** The JSON of `obj`, when the caller has it already. */
  json?: Buffer;
  /** The stored object of an update or delete. */
  old?: ApiObject;
  dryRun: boolean;
  /** CreateOptions, UpdateOptions or DeleteOptions of the request. */
  options?: unknown;
  subresource?: string;
  /** Hears each warning of the admission chain, for the client's `Warning` headers. */
  warn?: (text: string) => void;
}

/** Runs the admission chain; answers the (possibly mutated) object or throws its refusal. */
export async function admit(call: AdmissionCall, a: Admission): Promise<ApiObject | undefined> {
  const { def, obj, old } = a;
  const meta = obj?.metadata ?? old?.metadata ?? {};
  const kind = { group: def.group, version: def.version, kind: def.kind };
  const resource = { group: def.group, version: def.version, resource: def.resource };
  const res = await call({
    uid: randomUUID(), kind, resource, requestKind: kind, requestResource: resource, requestSubResource: a.subresource ?? '',
    subresource: a.subresource ?? '', name: meta.name ?? '', namespace: meta.namespace ?? '', operation: a.operation, user: a.user,
    object: a.json ?? (obj ? Buffer.from(JSON.stringify(obj)) : Buffer.alloc(0)),
    oldObject: old ? Buffer.from(JSON.stringify(old)) : Buffer.alloc(0),
    dryRun: a.dryRun, options: Buffer.from(JSON.stringify(a.options ?? {})),
  });
  for (const warning of res.warnings) a.warn?.(warning);
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
