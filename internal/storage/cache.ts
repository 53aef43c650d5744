// A sorted index of records in memory, keyed in LevelDB's order (the UTF-8 bytes of
// the keys), for caches that answer gets and pages of a prefix: the gateway's object
// cache keeps each object's JSON text in one.
//
// Keys are kept in a two-level sorted index: leaves of at most LEAF_MAX sorted keys,
// found by binary search over the last key of each leaf. An insert or delete shifts
// one leaf (and the leaf list on a split or merge); a page is a binary search and a
// walk; the keys left under a prefix are counted a leaf at a time. Per entry: the key
// string, the record and two array slots, nothing per reader.

const LEAF_MAX = 512;
/** A leaf shrunk below this merges with a neighbour, so sparse leaves do not pile up. */
const LEAF_MIN = LEAF_MAX / 8;

/** A code unit's rank in UTF-8 byte order: surrogates (4-byte sequences) sort after U+E000..U+FFFF. */
const utf8Rank = (unit: number): number => (unit < 0xd800 ? unit : unit < 0xe000 ? unit + 0x2000 : unit - 0x800);

function utf8Compare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

const codeUnitCompare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
/** Code units where UTF-16 and UTF-8 order can disagree; only two strings that both hold one order differently. */
const WIDE_UNIT = /[\ud800-\uffff]/;

/** The first i in [0, n) for which `past(i)` holds (false up to some i, then true), or n. */
function bisect(n: number, past: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (past(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

interface Leaf<V> { keys: string[]; records: V[] }
interface Position { leaf: number; at: number }

/** Keys in UTF-8 byte order with their records (any value). */
export class SortedRecords<V = Buffer> {
  private readonly leaves: Array<Leaf<V>> = [];
  /** The last key of each leaf. */
  private readonly lasts: string[] = [];
  /** Code unit order is exact until a key holds a unit from U+D800 up. */
  private compare = codeUnitCompare;
  size = 0;

  get(key: string): V | undefined {
    const { leaf, at } = this.seek(key);
    const l = this.leaves[leaf];
    return l?.keys[at] === key ? l.records[at] : undefined;
  }

  set(key: string, record: V): void {
    if (this.compare === codeUnitCompare && WIDE_UNIT.test(key)) this.compare = utf8Compare;
    if (this.leaves.length === 0) {
      this.leaves.push({ keys: [], records: [] });
      this.lasts.push(key);
    }
    const pos = this.seek(key);
    if (pos.leaf === this.leaves.length) { // past every key: the end of the last leaf
      pos.leaf--;
      pos.at = this.leaves[pos.leaf].keys.length;
    }
    const { keys, records } = this.leaves[pos.leaf];
    if (keys[pos.at] === key) {
      records[pos.at] = record;
      return;
    }
    keys.splice(pos.at, 0, key);
    records.splice(pos.at, 0, record);
    this.size++;
    this.lasts[pos.leaf] = keys[keys.length - 1];
    if (keys.length > LEAF_MAX) this.split(pos.leaf);
  }

  delete(key: string): void {
    const { leaf, at } = this.seek(key);
    const l = this.leaves[leaf];
    if (l?.keys[at] !== key) return;
    l.keys.splice(at, 1);
    l.records.splice(at, 1);
    this.size--;
    if (l.keys.length === 0) {
      this.leaves.splice(leaf, 1);
      this.lasts.splice(leaf, 1);
      return;
    }
    this.lasts[leaf] = l.keys[l.keys.length - 1];
    if (l.keys.length < LEAF_MIN && this.leaves.length > 1) this.merge(leaf > 0 ? leaf - 1 : leaf);
  }

  /** Up to `limit` (0: every) keys under a prefix (after `after`, when given), and how many more are under it. */
  page(prefix: string, limit: number, after = ''): { entries: Array<[string, V]>; remaining: number } {
    const entries: Array<[string, V]> = [];
    let { leaf, at } = this.start(prefix, after);
    for (; leaf < this.leaves.length; leaf++, at = 0) {
      const { keys, records } = this.leaves[leaf];
      for (; at < keys.length; at++) {
        if (!keys[at].startsWith(prefix)) return { entries, remaining: 0 };
        if (limit && entries.length === limit) return { entries, remaining: this.countFrom({ leaf, at }, prefix) };
        entries.push([keys[at], records[at]]);
      }
    }
    return { entries, remaining: 0 };
  }

  /** Visits the keys under a prefix (after `after`, when given) in order, until visit returns false. */
  walk(prefix: string, after: string, visit: (key: string, record: V) => boolean): void {
    let { leaf, at } = this.start(prefix, after);
    for (; leaf < this.leaves.length; leaf++, at = 0) {
      const { keys, records } = this.leaves[leaf];
      for (; at < keys.length; at++) {
        if (!keys[at].startsWith(prefix) || !visit(keys[at], records[at])) return;
      }
    }
  }

  /** The position of the first key under prefix, or of the first one after `after`. */
  private start(prefix: string, after: string): Position {
    if (!after) return this.seek(prefix);
    const pos = this.seek(after);
    if (this.leaves[pos.leaf]?.keys[pos.at] === after) pos.at++;
    return pos;
  }

  /** The position of the first key at or after `key`. */
  private seek(key: string): Position {
    const leaf = bisect(this.lasts.length, (i) => this.compare(this.lasts[i], key) >= 0);
    if (leaf === this.leaves.length) return { leaf, at: 0 };
    const keys = this.leaves[leaf].keys;
    return { leaf, at: bisect(keys.length, (i) => this.compare(keys[i], key) >= 0) };
  }

  /** The keys under a prefix from a position under it: whole leaves while their last key is under it. */
  private countFrom({ leaf, at }: Position, prefix: string): number {
    let n = 0;
    for (; leaf < this.leaves.length; leaf++, at = 0) {
      const keys = this.leaves[leaf].keys;
      if (!keys[keys.length - 1].startsWith(prefix)) return n + bisect(keys.length - at, (i) => !keys[at + i].startsWith(prefix));
      n += keys.length - at;
    }
    return n;
  }

  private split(leaf: number): void {
    const { keys, records } = this.leaves[leaf];
    const half = keys.length >>> 1;
    this.leaves.splice(leaf + 1, 0, { keys: keys.splice(half), records: records.splice(half) });
    this.lasts.splice(leaf, 0, keys[half - 1]);
  }

  /** Merges leaf i+1 into leaf i. */
  private merge(leaf: number): void {
    const into = this.leaves[leaf];
    const [from] = this.leaves.splice(leaf + 1, 1);
    into.keys.push(...from.keys);
    into.records.push(...from.records);
    this.lasts.splice(leaf, 1);
    if (into.keys.length > LEAF_MAX) this.split(leaf);
  }
}
