// The ResourceQuotas quota admission decides from, kept in memory by a Reflector
// over storage's change stream, and the charging write: status.used written to
// storage on the condition that the quota is still at the revision it was read
// at, so concurrent charges (in this process or another) never both land on one
// state. A quota this process charged is used in its written state until memory
// catches up with it.
import { Reflector } from '../../storage/reflector.js';
import { grpc, isServiceError } from '../../rpc/index.js';
import { collectionPrefix, parseKey } from '../../storage/keys.js';
import type { KeyValue, StorageClient } from '../../storage/client.js';
import { listToJSON, quotaOf, type Obj, type Quota, type ResourceList } from '../../quota/index.js';

export interface StoredQuota {
  key: string;
  revision: number;
  /** The stored object (without resourceVersion, as storage keeps it). */
  object: Obj;
  quota: Quota;
}

function decode(kv: KeyValue): StoredQuota {
  const object = JSON.parse(kv.value.toString('utf8')) as Obj;
  return { key: kv.key, revision: Number(kv.modRevision), object, quota: quotaOf(object) };
}

export class QuotaStore {
  private readonly reflector: Reflector<StoredQuota>;
  /** Quotas as this process last wrote them, while memory still shows an older revision. */
  private readonly written = new Map<string, StoredQuota>();
  /** The keys of the quotas in memory, by namespace. */
  private readonly byNamespace = new Map<string, Set<string>>();

  constructor(private readonly storage: StorageClient) {
    this.reflector = new Reflector<StoredQuota>(storage, collectionPrefix('', 'resourcequotas'), {
      upsert: (key, q) => {
        if ((this.written.get(key)?.revision ?? 0) <= q.revision) this.written.delete(key);
        const ns = q.quota.namespace;
        this.byNamespace.set(ns, (this.byNamespace.get(ns) ?? new Set()).add(key));
      },
      deleted: (key) => {
        this.written.delete(key);
        const ns = parseKey(key)?.namespace ?? '';
        this.byNamespace.get(ns)?.delete(key);
        if (this.byNamespace.get(ns)?.size === 0) this.byNamespace.delete(ns);
      },
    }, decode);
  }

  start(): this {
    this.reflector.start();
    return this;
  }

  stop(): void {
    this.reflector.stop();
  }

  /** Whether memory is current and holds no quota of the namespace. */
  knownEmpty(namespace: string): boolean {
    return this.reflector.live && !this.byNamespace.has(namespace);
  }

  /** The namespace's quotas: from memory, or from storage while the change stream is down. */
  async inNamespace(namespace: string): Promise<StoredQuota[]> {
    if (!this.reflector.live) return (await this.storage.list(collectionPrefix('', 'resourcequotas', namespace))).items.map(decode);
    const out: StoredQuota[] = [];
    for (const key of this.byNamespace.get(namespace) ?? []) {
      const q = this.reflector.items.get(key);
      const mine = this.written.get(key);
      if (q) out.push(mine && mine.revision > q.revision ? mine : q);
    }
    return out;
  }

  /** The quota as storage holds it now (after a charge lost to a concurrent write); undefined once deleted. */
  async reread(key: string): Promise<StoredQuota | undefined> {
    const kv = await this.storage.find(key);
    return kv ? decode(kv) : undefined;
  }

  /** Writes the quota's new usage if it is still at the revision read; false when another write came first. */
  async charge(q: StoredQuota, used: ResourceList): Promise<boolean> {
    const object = { ...q.object, status: { ...(q.object.status ?? {}), used: listToJSON(used) } };
    const value = Buffer.from(JSON.stringify(object));
    try {
      const res = await this.storage.update(q.key, value, { modRevision: q.revision });
      const revision = Number(res.kv?.modRevision ?? res.revision);
      this.written.set(q.key, { key: q.key, revision, object, quota: { ...q.quota, used } });
      return true;
    } catch (err) {
      if (isRace(err)) return false;
      throw err;
    }
  }
}

const isRace = (err: unknown): boolean =>
  isServiceError(err) && (err.code === grpc.status.FAILED_PRECONDITION || err.code === grpc.status.NOT_FOUND);
