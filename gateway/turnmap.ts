// A map that lasts one turn of the event loop: what the watchers of one change share while
// the hub hands it out (its decoded object, its encoded events), and nothing afterwards.
// Keyed weakly instead, every value would outlive the next young-generation collection,
// as a weak map's values do even when their key dies in it, and under a stream of changes
// many would be promoted to the old generation: garbage, with the event bytes it holds,
// until a full collection.

/** The map of the current turn: the same one until the turn ends, then a new one. */
export function turnMap<K, V>(): () => Map<K, V> {
  let map: Map<K, V> | undefined;
  return () => {
    if (!map) {
      map = new Map();
      setImmediate(() => { map = undefined; });
    }
    return map;
  };
}
