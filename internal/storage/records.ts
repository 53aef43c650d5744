// The LevelDB key space of the store. Every LevelDB key starts with one byte
// naming its table:
//   c<key>                current value of a key
//   v<key>\0<rev><kind>   the key's value as of revision rev, so a read at revision R
//                         seeks the newest version <= R; kind 1 (and no value) when
//                         the key was deleted at rev, so key-only scans can count
//   h<rev>                the committed event of revision rev (an `Event` message,
//                         exactly the NATS payload)
//   t<time>               the newest revision committed at or before time (ms),
//                         one mark per interval, to apply the history window
//   m<name>               meta: current and compacted revision
// Revisions and times are 8-byte big-endian so byte order is numeric order.
import type { KeyValue } from './events.js';

const CURRENT = 0x63;
const VERSION = 0x76;
const HISTORY = 0x68;
const MARK = 0x74;
const SEPARATOR = 0x00;
// No UTF-8 string contains this byte, so `<prefix>\xff` bounds every key under a prefix.
const PAST_ANY_KEY = 0xff;

export const META_REVISION = Buffer.from('mrevision');
export const META_COMPACTED = Buffer.from('mcompacted');

const U32 = 0x1_0000_0000;

function writeUint64(buf: Buffer, n: number, offset: number): void {
  buf.writeUInt32BE(Math.floor(n / U32), offset);
  buf.writeUInt32BE(n % U32, offset + 4);
}

export function readUint64(buf: Buffer, offset = 0): number {
  return buf.readUInt32BE(offset) * U32 + buf.readUInt32BE(offset + 4);
}

export function uint64(n: number): Buffer {
  const buf = Buffer.allocUnsafe(8);
  writeUint64(buf, n, 0);
  return buf;
}

function tableKey(table: number, key: string, extra = 0): Buffer {
  const len = Buffer.byteLength(key);
  const buf = Buffer.allocUnsafe(1 + len + extra);
  buf[0] = table;
  buf.write(key, 1);
  return buf;
}

export const currentKey = (key: string): Buffer => tableKey(CURRENT, key);

/** The bounds of the current values under a prefix, after an optional key. */
export function currentRange(prefix: string, after?: string): { gt?: Buffer; gte?: Buffer; lt: Buffer } {
  const lt = tableKey(CURRENT, prefix, 1);
  lt[lt.length - 1] = PAST_ANY_KEY;
  return after ? { gt: currentKey(after), lt } : { gte: currentKey(prefix), lt };
}

export const keyOfCurrent = (dbKey: Buffer): string => dbKey.toString('utf8', 1);

const VERSION_SUFFIX = 10;

export function versionKey(key: string, revision: number, deleted = false): Buffer {
  const buf = tableKey(VERSION, key, VERSION_SUFFIX);
  buf[buf.length - 10] = SEPARATOR;
  writeUint64(buf, revision, buf.length - 9);
  buf[buf.length - 1] = deleted ? 1 : 0;
  return buf;
}

/** The bounds of the versions of keys under a prefix, after an optional key. */
export function versionRange(prefix: string, after?: string): { gte: Buffer; lt: Buffer } {
  const lt = tableKey(VERSION, prefix, 1);
  lt[lt.length - 1] = PAST_ANY_KEY;
  if (!after) return { gte: tableKey(VERSION, prefix), lt };
  // Every version of `after` is `after\0...`, so `after\x01` is past all of them.
  const gte = tableKey(VERSION, after, 1);
  gte[gte.length - 1] = SEPARATOR + 1;
  return { gte, lt };
}

export function parseVersionKey(dbKey: Buffer): { key: string; revision: number; deleted: boolean } {
  return {
    key: dbKey.toString('utf8', 1, dbKey.length - VERSION_SUFFIX),
    revision: readUint64(dbKey, dbKey.length - 9),
    deleted: dbKey[dbKey.length - 1] === 1,
  };
}

export function historyKey(revision: number): Buffer {
  const buf = Buffer.allocUnsafe(9);
  buf[0] = HISTORY;
  writeUint64(buf, revision, 1);
  return buf;
}

export const historyRevision = (dbKey: Buffer): number => readUint64(dbKey, 1);

export function markKey(time: number): Buffer {
  const buf = Buffer.allocUnsafe(9);
  buf[0] = MARK;
  writeUint64(buf, time, 1);
  return buf;
}

export const markTime = (dbKey: Buffer): number => readUint64(dbKey, 1);
export const MARK_RANGE = { gte: markKey(0), lt: Buffer.from([MARK + 1]) };

// A value record: mod revision, create revision, uid length, uid, value.
const HEADER = 18;

export function encodeRecord(kv: KeyValue): Buffer {
  const uidLength = Buffer.byteLength(kv.uid);
  const buf = Buffer.allocUnsafe(HEADER + uidLength + kv.value.length);
  writeUint64(buf, kv.modRevision, 0);
  writeUint64(buf, kv.createRevision, 8);
  buf.writeUInt16BE(uidLength, 16);
  buf.write(kv.uid, HEADER);
  buf.set(kv.value, HEADER + uidLength);
  return buf;
}

export function decodeRecord(key: string, buf: Buffer): KeyValue {
  const uidEnd = HEADER + buf.readUInt16BE(16);
  return {
    key,
    value: buf.subarray(uidEnd),
    modRevision: readUint64(buf, 0),
    createRevision: readUint64(buf, 8),
    uid: buf.toString('utf8', HEADER, uidEnd),
  };
}

/** The version record of a deletion. */
export const TOMBSTONE = Buffer.alloc(0);
