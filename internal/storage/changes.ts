// What one write does to a key: whether its preconditions hold against the key's
// current value, and the value and event it commits.
import { RpcError, grpc } from '../rpc/index.js';
import { STORAGE_CURRENT_REVISION_KEY } from './client.js';
import type { Preconditions } from './backend.js';
import type { KeyValue, StorageEvent } from './events.js';

export type WriteOp = 'create' | 'update' | 'delete';

export interface Write {
  op: WriteOp;
  key: string;
  value: Buffer;
  uid: string;
  /** 0 / "" are not checked. */
  preconditions: { modRevision: number; uid: string };
}

export interface Change {
  event: StorageEvent;
  /** The key's value after the write; undefined once deleted. */
  next: KeyValue | undefined;
}

const failedPrecondition = (current: KeyValue, what: string): RpcError =>
  new RpcError(grpc.status.FAILED_PRECONDITION, `precondition failed for "${current.key}": ${what}`,
    { [STORAGE_CURRENT_REVISION_KEY]: String(current.modRevision) });

/** A write's preconditions with the defaults (0 and '': none) filled in. */
export function preconditionsOf(p: Preconditions = {}): Write['preconditions'] {
  return { modRevision: p.modRevision ?? 0, uid: p.uid ?? '' };
}

/** Why a write cannot apply to the key's current value, or undefined when it can. */
export function refusal(write: Write, current: KeyValue | undefined): RpcError | undefined {
  if (write.op === 'create') {
    return current ? new RpcError(grpc.status.ALREADY_EXISTS, `"${write.key}" already exists`) : undefined;
  }
  if (!current) return new RpcError(grpc.status.NOT_FOUND, `"${write.key}" not found`);
  const { modRevision, uid } = write.preconditions;
  if (modRevision && modRevision !== current.modRevision) {
    return failedPrecondition(current, `mod_revision is ${current.modRevision}, not ${modRevision}`);
  }
  if (uid && uid !== current.uid) return failedPrecondition(current, `uid is "${current.uid}", not "${uid}"`);
  return undefined;
}

/** The change a write makes at a revision, once refusal() found none. */
export function change(write: Write, current: KeyValue | undefined, revision: number): Change {
  const { key, value } = write;
  switch (write.op) {
    case 'create': {
      const kv = { key, value, modRevision: revision, createRevision: revision, uid: write.uid };
      return { next: kv, event: { type: 'PUT', kv, prevKv: null, revision } };
    }
    case 'update': {
      const kv = { key, value, modRevision: revision, createRevision: current!.createRevision, uid: current!.uid };
      return { next: kv, event: { type: 'PUT', kv, prevKv: current!, revision } };
    }
    case 'delete':
      return { next: undefined, event: { type: 'DELETE', kv: { ...current!, modRevision: revision }, prevKv: current!, revision } };
  }
}
