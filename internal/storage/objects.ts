// The stored form of an API object: its JSON without the resourceVersion, which
// is the storage revision of the key and is put back when the value is read.
import type { ApiObject } from '../apimachinery/meta.js';
import type { KeyValue, StorageClient } from './client.js';

export function encodeStored(obj: ApiObject): Buffer {
  const { resourceVersion: _rv, ...metadata } = obj.metadata ?? {};
  return Buffer.from(JSON.stringify({ ...obj, metadata }));
}

/** A stored value as the API object, with its resourceVersion. */
export function decodeStored(kv: KeyValue, revision = kv.modRevision): ApiObject {
  return decodeValue(kv.value, revision);
}

/** Stored bytes as the API object at `revision`. */
export function decodeValue(value: Buffer, revision: number): ApiObject {
  const obj = JSON.parse(value.toString('utf8')) as ApiObject;
  obj.metadata = { ...obj.metadata, resourceVersion: String(revision) };
  return obj;
}

/** Stores an object the server makes for itself unless the key exists; answers whether it did. */
export function createStoredOnce(storage: StorageClient, key: string, obj: ApiObject): Promise<boolean> {
  return storage.createIfAbsent(key, encodeStored(obj), obj.metadata!.uid!);
}
