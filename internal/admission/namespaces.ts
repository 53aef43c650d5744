// The namespaces admission decides from, kept in memory by a Reflector over
// storage's change stream: per namespace whether it is terminating and the
// namespace itself (selectors, Pod Security labels and policies read it). A
// lookup answers from memory when it can and reads storage when memory may be
// wrong: a namespace not seen yet (created a moment ago), one whose deletion was
// admitted a moment ago while memory still shows it active, one memory shows
// terminating (before refusing), or while the stream is down.
import { Counter, type Registry } from 'prom-client';
import { objectKey, collectionPrefix } from '../storage/keys.js';
import { Reflector } from '../storage/reflector.js';
import { isServiceError, grpc } from '../rpc/index.js';
import type { GetResponse, KeyValue, StorageClient } from '../storage/client.js';
import { internalError } from './errors.js';

/** The one read of the storage client a namespace lookup needs. */
export interface NamespaceStore {
  get(key: string): Promise<GetResponse>;
}

/** What admission knows of a namespace: whether it is being terminated, and the stored object. */
export interface NamespaceState {
  terminating: boolean;
  namespace: Record<string, any>;
}

/** How long after a namespace's deletion is admitted a lookup reads storage (upstream: 30 s). */
export const FORCE_LIVE_LOOKUP_MS = 30_000;

const key = (name: string): string => objectKey('', 'namespaces', '', name);

function terminating(namespace: Record<string, any>): boolean {
  return namespace.status?.phase === 'Terminating' || Boolean(namespace.metadata?.deletionTimestamp);
}

function stateOf(kv: KeyValue): NamespaceState {
  let namespace: Record<string, any>;
  try {
    namespace = JSON.parse(kv.value.toString('utf8')) as Record<string, any>;
  } catch (err) {
    throw internalError(`stored namespace ${kv.key} is not JSON: ${(err as Error).message}`);
  }
  return { terminating: terminating(namespace), namespace };
}

export class NamespaceCache {
  private readonly reflector?: Reflector<NamespaceState>;
  private readonly deletedAt = new Map<string, number>();
  private readonly storageReads?: Counter;
  private readonly clock: () => number;

  /** storage: reads on a miss; watch: false keeps no memory (every lookup reads storage). */
  constructor(private readonly storage: NamespaceStore & Partial<Pick<StorageClient, 'list' | 'watch'>>,
    options: { watch?: boolean; registry?: Registry; clock?: () => number } = {}) {
    if (options.watch !== false) {
      this.reflector = new Reflector<NamespaceState>(storage as StorageClient, collectionPrefix('', 'namespaces'), {}, stateOf);
    }
    if (options.registry) {
      this.storageReads = new Counter({
        name: 'admission_namespace_storage_reads_total', help: 'Namespace lookups of admission that read storage instead of memory.',
        labelNames: ['reason'], registers: [options.registry],
      });
    }
    this.clock = options.clock ?? Date.now;
  }

  start(): this {
    this.reflector?.start();
    return this;
  }

  stop(): void {
    this.reflector?.stop();
  }

  /** A namespace's deletion was admitted: memory may show it active for a moment. */
  deleting(name: string): void {
    const now = this.clock();
    for (const [n, at] of this.deletedAt) if (now - at > FORCE_LIVE_LOOKUP_MS) this.deletedAt.delete(n);
    this.deletedAt.set(name, now);
  }

  /** The namespace's state, undefined when it does not exist. */
  async get(name: string): Promise<NamespaceState | undefined> {
    const reflector = this.reflector;
    if (!reflector?.live) return this.read(name, 'stream-down');
    const known = reflector.items.get(key(name));
    if (!known) return this.read(name, 'miss');
    // A refusal is confirmed: the namespace may have gone and come back a moment ago.
    if (known.terminating) return this.read(name, 'terminating');
    if (this.recentlyDeleted(name)) return this.read(name, 'recently-deleted');
    return known;
  }

  private recentlyDeleted(name: string): boolean {
    const at = this.deletedAt.get(name);
    return at !== undefined && this.clock() - at <= FORCE_LIVE_LOOKUP_MS;
  }

  private async read(name: string, reason: string): Promise<NamespaceState | undefined> {
    this.storageReads?.inc({ reason });
    let response: GetResponse;
    try {
      response = await this.storage.get(key(name));
    } catch (err) {
      if (isServiceError(err) && err.code === grpc.status.NOT_FOUND) return undefined;
      throw err;
    }
    return response.kv ? stateOf(response.kv) : undefined;
  }
}
