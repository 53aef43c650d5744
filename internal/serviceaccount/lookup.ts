// The objects a service-account token names (its ServiceAccount, and the Secret,
// Pod or Node it is bound to), mirrored from storage by Reflectors so a token is
// checked from memory. Only what the checks need is kept of each object.
import type { ApiObject } from '../apimachinery/meta.js';
import type { KeyValue, StorageClient } from '../storage/client.js';
import { collectionPrefix, objectKey } from '../storage/keys.js';
import { decodeStored } from '../storage/objects.js';
import { Reflector } from '../storage/reflector.js';
import { LEGACY_TOKEN_INVALID_SINCE_LABEL, SECRET_TYPE_SERVICE_ACCOUNT_TOKEN, isWellKnown } from '../names/index.js';

/** What a check needs of one object. */
export interface ObjectRecord {
  name: string;
  uid: string;
  deletionTimestamp?: string;
  /** A Secret of type service-account-token (either spelling): its `token` data, decoded. */
  token?: string;
  /** A legacy token Secret marked invalid: the label that says so (in its spelling), and since when. */
  invalidSince?: { label: string; since: string };
}

export type BoundResource = 'serviceaccounts' | 'secrets' | 'pods' | 'nodes';
const RESOURCES: BoundResource[] = ['serviceaccounts', 'secrets', 'pods', 'nodes'];
const WAIT_STEP_MS = 20;

function recordOf(kv: KeyValue): ObjectRecord {
  const obj: ApiObject = decodeStored(kv);
  const meta = obj.metadata ?? {};
  const record: ObjectRecord = { name: meta.name ?? '', uid: meta.uid ?? '', deletionTimestamp: meta.deletionTimestamp };
  if (isWellKnown(obj.type, SECRET_TYPE_SERVICE_ACCOUNT_TOKEN)) {
    const token = (obj.data as Record<string, unknown> | undefined)?.token;
    if (typeof token === 'string') record.token = Buffer.from(token, 'base64').toString('utf8');
    const label = [LEGACY_TOKEN_INVALID_SINCE_LABEL.own, LEGACY_TOKEN_INVALID_SINCE_LABEL.upstream].find((k) => meta.labels?.[k] !== undefined);
    if (label) record.invalidSince = { label, since: meta.labels![label] };
  }
  return record;
}

const sameRecord = (a: ObjectRecord, b: ObjectRecord): boolean => JSON.stringify(a) === JSON.stringify(b);

export class ObjectLookup {
  private readonly reflectors: Record<BoundResource, Reflector<ObjectRecord>>;

  /** `revoked` is told, once the mirror holds it, of every change that may turn a token invalid:
   * an object gone or changed in what the checks read (a new object revokes nothing). */
  constructor(storage: StorageClient, revoked: () => void = () => undefined) {
    const handlers = {
      upsert: (_key: string, obj: ObjectRecord, old?: ObjectRecord) => { if (old && !sameRecord(old, obj)) revoked(); },
      deleted: () => revoked(),
    };
    this.reflectors = Object.fromEntries(RESOURCES.map((r) =>
      [r, new Reflector<ObjectRecord>(storage, collectionPrefix('', r), handlers, recordOf)])) as Record<BoundResource, Reflector<ObjectRecord>>;
  }

  start(): this {
    for (const r of Object.values(this.reflectors)) r.start();
    return this;
  }

  stop(): void {
    for (const r of Object.values(this.reflectors)) r.stop();
  }

  async waitForSync(timeoutMs: number): Promise<boolean> {
    const done = await Promise.all(Object.values(this.reflectors).map((r) => r.waitForSync(timeoutMs)));
    return done.every(Boolean);
  }

  /** One object; namespace empty for nodes. */
  get(resource: BoundResource, namespace: string, name: string): ObjectRecord | undefined {
    return this.reflectors[resource].items.get(objectKey('', resource, resource === 'nodes' ? '' : namespace, name));
  }

  /** Waits (bounded) until the mirror holds the object with this uid: one just read from storage may not have arrived yet. */
  async waitFor(resource: BoundResource, namespace: string, name: string, uid: string, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.get(resource, namespace, name)?.uid === uid) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    }
  }
}
