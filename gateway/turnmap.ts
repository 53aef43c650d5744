// A map that lasts one turn of the event loop, and at most `limit` entries: what the
// watchers of one change share while the hub hands it out (its decoded object, its
// encoded events), and nothing afterwards. Keyed weakly instead, every value would outlive
// the next young-generation collection, as a weak map's values do even when their key
// dies in it, and under a stream of changes many would be promoted to the old generation:
// garbage, with the event bytes it holds, until a full collection. The limit bounds what a
// long turn keeps (a catch-up writing thousands of events without yielding): the watchers
// of one change read its entries one after another, so sharing needs only the newest few.

/** The map of the current turn: the same one until the turn ends or it holds `limit` entries, then a new one. */
export function turnMap<K, V>(limit = 256): () => Map<K, V> {
  let map: Map<K, V> | undefined;
  let clearing = false;
  return () => {
    if (map && map.size < limit) return map;
    map = new Map();
    if (!clearing) {
      clearing = true;
      setImmediate(() => {
        map = undefined;
        clearing = false;
      });
    }
    return map;
  };
}

/** The entries of one key in the map of the current turn: the inner map of what is shared about it, made when first asked. */
export function turnEntries<K, IK, V>(limit?: number): (key: K) => Map<IK, V> {
  const current = turnMap<K, Map<IK, V>>(limit);
  return (key) => {
    const map = current();
    let entries = map.get(key);
    if (!entries) map.set(key, (entries = new Map()));
    return entries;
  };
}
