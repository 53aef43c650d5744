// Protobuf wire primitives. A nested message is written in place after a
// one-byte length slot that is widened afterwards when needed, so encoding
// needs a single pass over the object and no size pre-computation.
import { ProtobufError } from './errors.js';
import { MAX_NESTING_DEPTH } from '../depth.js';

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
export const WIRE_FIXED32 = 5;

const TWO_32 = 4294967296;
const MAX_MESSAGE_DEPTH = 2 * MAX_NESTING_DEPTH;

/** Node's fast paths behind `toString('utf8')` and `write(s, 'utf8')`, without their argument handling. */
interface NodeBuffer extends Buffer {
  utf8Slice(start: number, end: number): string;
  utf8Write(s: string, offset: number, length: number): number;
  latin1Slice(start: number, end: number): string;
}

const SHORT = 24;
const CACHE_SIZE = 1024;
const cache = new Array<string | undefined>(CACHE_SIZE).fill(undefined);

export class Writer {
  private buf: NodeBuffer;
  private pos = 0;

  constructor(size = 4096) {
    this.buf = Buffer.allocUnsafe(size) as NodeBuffer;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n)) as NodeBuffer;
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** An unsigned varint; `v` is a non-negative integer up to 2^53. */
  uint(v: number): void {
    this.ensure(10);
    const buf = this.buf;
    let pos = this.pos;
    if (v < TWO_32) {
      while (v > 127) {
        buf[pos++] = (v & 127) | 128;
        v >>>= 7;
      }
    } else {
      while (v > 127) {
        buf[pos++] = (v % 128) | 128;
        v = Math.floor(v / 128);
      }
    }
    buf[pos++] = v;
    this.pos = pos;
  }

  /** A signed int32 or int64: negatives take ten bytes of two's complement. */
  int(v: number): void {
    if (v >= 0) return this.uint(v);
    let u = BigInt.asUintN(64, BigInt(Math.trunc(v)));
    this.ensure(10);
    while (u > 127n) {
      this.buf[this.pos++] = Number(u & 127n) | 128;
      u >>= 7n;
    }
    this.buf[this.pos++] = Number(u);
  }

  bool(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
  }

  /** A length-prefixed UTF-8 string. */
  string(s: string): void {
    const len = s.length;
    // Up to 42 UTF-16 units encode to at most 127 bytes: one length byte, encoded by hand.
    if (len <= 42) {
      this.ensure(1 + len * 3);
      const buf = this.buf;
      const start = this.pos;
      let pos = start + 1;
      for (let i = 0; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c < 0x80) buf[pos++] = c;
        else return this.longString(s);
      }
      buf[start] = pos - start - 1;
      this.pos = pos;
      return;
    }
    this.longString(s);
  }

  private longString(s: string): void {
    const n = Buffer.byteLength(s);
    this.uint(n);
    this.ensure(n);
    this.pos += this.buf.utf8Write(s, this.pos, n);
  }

  bytes(b: Uint8Array): void {
    this.uint(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Bytes as they are, without a length. */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Reserves a 4-byte big-endian length, for the frames of a stream; returns the mark `endFrame` needs. */
  beginFrame(): number {
    this.ensure(4);
    this.pos += 4;
    return this.pos - 4;
  }

  endFrame(mark: number): void {
    this.buf.writeUInt32BE(this.pos - mark - 4, mark);
  }

  /** Starts a length-delimited value; returns the mark `end` needs. */
  begin(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Closes the value started at `mark`, widening its length slot when the value reached 128 bytes. */
  end(mark: number): void {
    const len = this.pos - mark - 1;
    if (len < 128) {
      this.buf[mark] = len;
      return;
    }
    let extra = 1;
    for (let v = len >>> 14; v > 0; v >>>= 7) extra++;
    this.ensure(extra);
    this.buf.copyWithin(mark + 1 + extra, mark + 1, this.pos);
    const end = this.pos + extra;
    this.pos = mark;
    this.uint(len);
    this.pos = end;
  }

  finish(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }

  /** Starts over, keeping the memory: a writer used for one value after another allocates only what it outgrows. */
  reset(): void {
    this.pos = 0;
  }

  /** The bytes written so far, sharing the writer's memory (no copy): valid while the writer does not grow. */
  take(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  get length(): number {
    return this.pos;
  }
}

export class Reader {
  pos: number;
  private readonly buf: NodeBuffer;

  /** `depth`: messages already open around this data (an envelope inside another's raw field starts deeper). */
  constructor(buf: Buffer, start = 0, public end = buf.length, public depth = 0) {
    this.buf = buf as NodeBuffer;
    this.pos = start;
  }

  private truncated(): never {
    throw new ProtobufError('truncated data');
  }

  /** An unsigned varint up to 2^53 (larger values lose precision, as JSON numbers do). */
  uint(): number {
    const buf = this.buf;
    let pos = this.pos;
    let b = pos < this.end ? buf[pos++] : this.truncated();
    if (b < 128) {
      this.pos = pos;
      return b;
    }
    let v = b & 127;
    let mul = 128;
    for (let i = 1; i < 10; i++) {
      if (pos >= this.end) this.truncated();
      b = buf[pos++];
      v += (b & 127) * mul;
      if (b < 128) {
        this.pos = pos;
        return v;
      }
      mul *= 128;
    }
    throw new ProtobufError('malformed varint');
  }

  /** A signed int32 or int64 (two's complement on the wire). */
  int(): number {
    const start = this.pos;
    const v = this.uint();
    if (v < 2 ** 63) return v;
    // A negative value: re-read the ten bytes exactly.
    let u = 0n;
    for (let i = this.pos - 1; i >= start; i--) u = (u << 7n) | BigInt(this.buf[i] & 127);
    return Number(BigInt.asIntN(64, u));
  }

  /** Narrows the reader to the length-delimited value that follows; returns what `leave` restores. */
  enter(): number {
    // Messages nest by recursion when decoded: bounded like any body's nesting (a map entry is a message of its own).
    if (++this.depth > MAX_MESSAGE_DEPTH) throw new ProtobufError(`exceeded max depth of ${MAX_MESSAGE_DEPTH} nested messages`);
    const len = this.uint();
    const outer = this.end;
    if (this.pos + len > outer) this.truncated();
    this.end = this.pos + len;
    return outer;
  }

  leave(outer: number): void {
    this.depth--;
    this.end = outer;
  }

  /** The bounds of a length-delimited value; the reader moves past it. */
  delimited(): number {
    const len = this.uint();
    const start = this.pos;
    if (start + len > this.end) this.truncated();
    this.pos = start + len;
    return start;
  }

  /** A string; short ASCII ones come from a small cache, as lists repeat them (namespaces, label keys, images). */
  string(): string {
    const start = this.delimited();
    const end = this.pos;
    const buf = this.buf;
    if (end - start > SHORT) return buf.utf8Slice(start, end);
    let hash = end - start;
    for (let i = start; i < end; i++) {
      const c = buf[i];
      if (c >= 0x80) return buf.utf8Slice(start, end);
      hash = (hash * 31 + c) | 0;
    }
    const slot = hash & (CACHE_SIZE - 1);
    const cached = cache[slot];
    if (cached !== undefined && cached.length === end - start) {
      let i = 0;
      while (i < cached.length && cached.charCodeAt(i) === buf[start + i]) i++;
      if (i === cached.length) return cached;
    }
    const s = buf.latin1Slice(start, end);
    cache[slot] = s;
    return s;
  }

  bytes(): Buffer {
    const start = this.delimited();
    return this.buf.subarray(start, this.pos);
  }

  /** Skips a value of the given wire type. */
  skip(wire: number): void {
    switch (wire) {
      case WIRE_VARINT: this.uint(); return;
      case WIRE_FIXED64: this.advance(8); return;
      case WIRE_BYTES: this.delimited(); return;
      case WIRE_FIXED32: this.advance(4); return;
      default: throw new ProtobufError(`unsupported wire type ${wire}`);
    }
  }

  private advance(n: number): void {
    if (this.pos + n > this.end) this.truncated();
    this.pos += n;
  }
}
