// Caches' building blocks: a map bounded by its number of entries (the least
// recently used one goes first when a new one needs room), and calls shared by
// concurrent lookups of one key.
export class Lru<V> {
  private readonly entries = new Map<string, V>();

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** The value, which becomes the most recently used. */
  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Every entry, least recently used first; deleting the current one while iterating is safe. */
  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries.entries();
  }
}

/** The call in flight for `key`, or a new one from `make`, forgotten once it settles: concurrent lookups share one call. */
export function singleFlight<T>(pending: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let call = pending.get(key);
  if (!call) {
    call = make();
    pending.set(key, call);
    void call.catch(() => undefined).finally(() => pending.delete(key));
  }
  return call;
}
