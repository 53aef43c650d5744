// The typed storage client of one kind: its keys, its stored encoding, the
// resourceVersion that storage revisions become, and storage failures as the
// API errors a client expects.
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { apiVersionOf } from '../internal/apimachinery/meta.js';
import { StatusError, badRequest, notFound, type GroupResource } from '../internal/apimachinery/status.js';
import type { KindDef } from '../internal/registry/index.js';
import type { KeyValue, StorageClient } from '../internal/storage/client.js';
import { collectionPrefix, objectKey } from '../internal/storage/keys.js';
import { storageError } from './backends.js';
import { decodeStored, decodeValue, encodeStored } from '../internal/storage/objects.js';

export { decodeStored, encodeStored };

/** A name or namespace that cannot be one segment of a key is refused as upstream's path-segment check does. */
function checkPathSegment(what: 'Name' | 'Namespace', value: string): void {
  const problem = value === '.' || value === '..' ? `may not be '${value}'`
    : value.includes('/') ? "may not contain '/'" : value.includes('%') ? "may not contain '%'" : undefined;
  if (problem) throw badRequest(`${what} parameter invalid: ${JSON.stringify(value)}: ${problem}`);
}

export const groupResource = (def: KindDef): GroupResource => ({ group: def.group, resource: def.resource });

export class Objects {
  constructor(readonly storage: StorageClient, readonly def: KindDef) {}

  get gr(): GroupResource {
    return groupResource(this.def);
  }

  /** The key space of the objects: the kind's group, or the group it is a view of. */
  private get storageGroup(): string {
    return this.def.storageGroup ?? this.def.group;
  }

  get apiVersion(): string {
    return apiVersionOf(this.def.group, this.def.version);
  }

  /** The stored form of an object of this version (converted to the storage version where they differ). */
  encode(obj: ApiObject): Buffer {
    return encodeStored(this.def.toStorage ? this.def.toStorage(obj) : obj);
  }

  /** As encode, also for a kind whose conversion takes a call. */
  async storedForm(obj: ApiObject): Promise<Buffer> {
    if (!this.def.convert) return this.encode(obj);
    const [stored] = await this.def.convert([obj], apiVersionOf(this.def.group, this.def.storageVersion ?? this.def.version));
    return encodeStored(stored);
  }

  /** Objects decoded from storage as objects of this version, for a kind whose conversion takes a call; others are already. */
  async inVersion(objs: ApiObject[]): Promise<ApiObject[]> {
    return this.def.convert && objs.length ? this.def.convert(objs, this.apiVersion) : objs;
  }

  /** One object decoded from storage in this version: as it is (no promise made) unless the kind's conversion takes a call. */
  private one(obj: ApiObject): ApiObject | Promise<ApiObject> {
    return this.def.convert ? this.def.convert([obj], this.apiVersion).then(([converted]) => converted) : obj;
  }

  /** A stored value as an object of this version. */
  decode(kv: KeyValue, revision = kv.modRevision): ApiObject {
    return this.written(kv.value, revision);
  }

  /** Stored bytes as an object of this version at `revision`. A write's answer is made from the bytes it
   * sent: storage keeps them as they are, so they need not come back. */
  private written(encoded: Buffer, revision: number): ApiObject {
    const obj = decodeValue(encoded, revision);
    return this.def.fromStorage ? this.def.fromStorage(obj) : obj;
  }

  key(namespace: string, name: string): string {
    const ns = this.def.namespaced ? namespace : '';
    if (ns) checkPathSegment('Namespace', ns);
    checkPathSegment('Name', name);
    // No stored object has a NUL in its key: such a name addresses nothing.
    if (ns.includes('\0') || name.includes('\0')) throw notFound(this.gr, name);
    return objectKey(this.storageGroup, this.def.resource, ns, name);
  }

  /** The collection prefix: all namespaces when namespace is empty. */
  prefix(namespace: string): string {
    if (this.def.namespaced && namespace) checkPathSegment('Namespace', namespace);
    return collectionPrefix(this.storageGroup, this.def.resource, this.def.namespaced && namespace ? namespace : undefined);
  }

  /** The stored object; `allowCached` accepts any state at least as new as `revision` from storage's memory. */
  async get(namespace: string, name: string, revision = 0, allowCached = false): Promise<{ obj: ApiObject; kv: KeyValue; revision: number }> {
    const res = await this.storage.get(this.key(namespace, name), revision, { allowCached }).catch((err) => { throw storageError(err, this.gr, name); });
    return { obj: await this.one(this.decode(res.kv!)), kv: res.kv!, revision: res.revision };
  }

  /** The stored object, or undefined when there is none. */
  async find(namespace: string, name: string): Promise<{ obj: ApiObject; kv: KeyValue } | undefined> {
    return this.get(namespace, name).catch((err) => {
      if (err instanceof StatusError && err.code === 404) return undefined;
      throw err;
    });
  }

  /** Creates obj; `encoded` is its stored form when the caller has it already. */
  async create(obj: ApiObject, encoded?: Buffer): Promise<ApiObject> {
    const meta = obj.metadata!;
    const stored = encoded ?? await this.storedForm(obj);
    const res = await this.storage.create(this.key(meta.namespace ?? '', meta.name!), stored, meta.uid ?? '')
      .catch((err) => { throw storageError(err, this.gr, meta.name!); });
    return this.one(this.written(stored, res.kv!.modRevision));
  }

  /** Writes obj if the stored object is still at expectedRevision; `encoded` as for create. */
  async update(obj: ApiObject, expectedRevision: number, encoded?: Buffer): Promise<ApiObject> {
    const meta = obj.metadata!;
    const stored = encoded ?? await this.storedForm(obj);
    const res = await this.storage.update(this.key(meta.namespace ?? '', meta.name!), stored, { modRevision: expectedRevision })
      .catch((err) => { throw storageError(err, this.gr, meta.name!); });
    return this.one(this.written(stored, res.kv!.modRevision));
  }

  /** Removes the object if it is still at expectedRevision; answers it as last stored. */
  async delete(namespace: string, name: string, expectedRevision: number): Promise<ApiObject> {
    const res = await this.storage.delete(this.key(namespace, name), { modRevision: expectedRevision }).catch((err) => { throw storageError(err, this.gr, name); });
    return this.one(this.decode(res.kv!));
  }

  /** Removes the object if it is still as written (at its resourceVersion); gone or changed since is no failure. */
  async removeIfAt(obj: ApiObject): Promise<void> {
    const meta = obj.metadata!;
    await this.storage.deleteIfAt(this.key(meta.namespace ?? '', meta.name!), Number(meta.resourceVersion))
      .catch((err) => { throw storageError(err, this.gr, meta.name!); });
  }
}
