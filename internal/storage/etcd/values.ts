// How objects sit in etcd: the key `<prefix>/<storage key>`, the value the uid
// (2-byte length, UTF-8) followed by the serialized object, so uid preconditions
// need no second key. Keys `<prefix>/\0<name>` are the backend's own (progress,
// compaction, election): no storage key holds a NUL, so they never meet an object,
// yet they fall in the range of every key under the prefix, so a watch of it
// sees them in revision order with the objects' changes.
import type { KeyValue, StorageEvent } from '../events.js';
import type { EtcdEvent, EtcdKeyValue } from './client.js';

const EMPTY = Buffer.alloc(0);

export class EtcdKeys {
  /** `<prefix>/` */
  readonly root: Buffer;
  readonly progressKey: Buffer;
  readonly compactKey: Buffer;
  readonly publisherKey: Buffer;
  private readonly rootLength: number;

  constructor(prefix: string) {
    const base = prefix.replace(/\/+$/, '');
    this.root = Buffer.from(`${base}/`);
    this.rootLength = this.root.length;
    this.progressKey = this.own('progress');
    this.compactKey = this.own('compact');
    this.publisherKey = this.own('publisher');
  }

  private own(name: string): Buffer {
    return Buffer.concat([this.root, Buffer.from([0]), Buffer.from(name)]);
  }

  /** The etcd key of a storage key (or prefix). */
  etcdKey(key: string): Buffer {
    return Buffer.concat([this.root, Buffer.from(key)]);
  }

  /** Whether an etcd key under the root is the backend's own rather than an object's. */
  isOwn(etcdKey: Buffer): boolean {
    return etcdKey.length > this.rootLength && etcdKey[this.rootLength] === 0;
  }

  storageKey(etcdKey: Buffer): string {
    return etcdKey.toString('utf8', this.rootLength);
  }
}

export function encodeValue(uid: string, value: Uint8Array): Buffer {
  const uidBytes = Buffer.from(uid);
  const header = Buffer.allocUnsafe(2);
  header.writeUInt16BE(uidBytes.length);
  return Buffer.concat([header, uidBytes, value]);
}

/** A stored etcd key-value as the storage API's KeyValue. */
export function decodeKv(key: string, kv: EtcdKeyValue): KeyValue {
  const raw = kv.value ?? EMPTY;
  const uidLength = raw.length >= 2 ? raw.readUInt16BE(0) : 0;
  return {
    key, value: raw.subarray(2 + uidLength), uid: raw.toString('utf8', 2, 2 + uidLength),
    modRevision: kv.modRevision, createRevision: kv.createRevision,
  };
}

/** An etcd watch event as the storage API's event: a deletion carries the deleted value at the deletion's revision. */
export function toStorageEvent(key: string, e: EtcdEvent): StorageEvent {
  const revision = e.kv.modRevision;
  const prevKv = e.prevKv?.key?.length ? decodeKv(key, e.prevKv) : null;
  if (e.type === 'PUT') return { type: 'PUT', kv: decodeKv(key, e.kv), prevKv, revision };
  const kv = prevKv ? { ...prevKv, modRevision: revision } : { key, value: EMPTY, uid: '', modRevision: revision, createRevision: 0 };
  return { type: 'DELETE', kv, prevKv, revision };
}
