// The `Frames` message of proto/svc/rpc/v1/multiplex.proto, written and read with
// protobufjs's wire-format Writer and Reader rather than through proto-loader's
// generic path, which copies each frame into a protobufjs object and back on both
// sides: here a batch is written in one pass, and read with its payloads as views
// of the bytes received. Unknown fields are skipped.
import protobuf from 'protobufjs';
import { finished, sizedWriter } from './writer.js';

/** One frame as the multiplex sends it. */
export interface Frame {
  id: number;
  method?: string;
  payload?: Uint8Array;
  code?: number;
  details?: string;
  trailers?: Record<string, string>;
  context?: Record<string, string>;
}

/** One frame as received: every field present, empty when not sent. */
export interface ReceivedFrame {
  id: number;
  method: string;
  payload: Buffer;
  code: number;
  details: string;
  trailers: Record<string, string>;
  context: Record<string, string>;
}

const LEN = 2;
const tag = (field: number, wireType: number): number => (field << 3) | wireType;
const FRAMES_FRAME = tag(1, LEN);
const ID = tag(1, 0);
const METHOD = tag(2, LEN);
const PAYLOAD = tag(3, LEN);
const CODE = tag(4, 0);
const DETAILS = tag(5, LEN);
const TRAILERS = tag(6, LEN);
const CONTEXT = tag(7, LEN);
const ENTRY_KEY = tag(1, LEN);
const ENTRY_VALUE = tag(2, LEN);

/** The UTF-8 bytes of the method paths, few and sent on every request. */
const methodBytes = new Map<string, Buffer>();
const methodOf = (method: string): Buffer => {
  let bytes = methodBytes.get(method);
  if (!bytes) methodBytes.set(method, bytes = Buffer.from(method, 'utf8'));
  return bytes;
};

function writeMap(w: protobuf.Writer, field: number, map: Record<string, string> | undefined): void {
  if (!map) return;
  for (const key in map) w.uint32(field).fork().uint32(ENTRY_KEY).string(key).uint32(ENTRY_VALUE).string(map[key]).ldelim();
}

/** Bytes a frame takes besides its payload, method and details (tags, lengths, id, code), and per map entry. */
const FRAME_OVERHEAD = 32;
const ENTRY_OVERHEAD = 64;

function entries(map: Record<string, string> | undefined): number {
  let n = 0;
  for (const _ in map) n++;
  return n;
}

/** About the size of a batch of frames (a little more, unless their maps hold long values). */
function sizeOf(frames: Frame[]): number {
  let size = 0;
  for (const f of frames) {
    size += FRAME_OVERHEAD + (f.payload?.length ?? 0) + (f.method?.length ?? 0) + (f.details?.length ?? 0) * 3
      + (entries(f.trailers) + entries(f.context)) * ENTRY_OVERHEAD;
  }
  return size;
}

/** The bytes of a `Frames` message. */
export function encodeFrames(frames: Frame[]): Buffer {
  const w = sizedWriter(sizeOf(frames));
  for (const f of frames) {
    w.uint32(FRAMES_FRAME).fork();
    if (f.id) w.uint32(ID).uint64(f.id);
    if (f.method) w.uint32(METHOD).bytes(methodOf(f.method));
    if (f.payload?.length) w.uint32(PAYLOAD).bytes(f.payload);
    if (f.code) w.uint32(CODE).uint32(f.code);
    if (f.details) w.uint32(DETAILS).string(f.details);
    writeMap(w, TRAILERS, f.trailers);
    writeMap(w, CONTEXT, f.context);
    w.ldelim();
  }
  return finished(w);
}

const EMPTY = Buffer.alloc(0);

/** A map entry into map (a missing key or value is the empty string, as in proto3). */
function readEntry(r: protobuf.Reader, map: Record<string, string>): void {
  const end = r.uint32() + r.pos;
  let key = '';
  let value = '';
  while (r.pos < end) {
    const t = r.uint32();
    if (t === ENTRY_KEY) key = r.string();
    else if (t === ENTRY_VALUE) value = r.string();
    else r.skipType(t & 7);
  }
  map[key] = value;
}

/** An unsigned 64-bit value as a number, from its two halves: Number() of a Long goes through its decimal text.
 * Frame ids are counters, far below 2^53. */
const uint64Number = (v: protobuf.Long | number): number => (typeof v === 'number' ? v : (v.high >>> 0) * 0x1_0000_0000 + (v.low >>> 0));

function readFrame(r: protobuf.Reader): ReceivedFrame {
  const end = r.uint32() + r.pos;
  if (end > r.len) throw new RangeError(`truncated frame: ${end} > ${r.len}`);
  const f: ReceivedFrame = { id: 0, method: '', payload: EMPTY, code: 0, details: '', trailers: {}, context: {} };
  while (r.pos < end) {
    const t = r.uint32();
    switch (t) {
      case ID: f.id = uint64Number(r.uint64()); break;
      case METHOD: f.method = r.string(); break;
      case PAYLOAD: f.payload = r.bytes() as Buffer; break;
      case CODE: f.code = r.uint32(); break;
      case DETAILS: f.details = r.string(); break;
      case TRAILERS: readEntry(r, f.trailers); break;
      case CONTEXT: readEntry(r, f.context); break;
      default: r.skipType(t & 7);
    }
  }
  return f;
}

/** The frames of a `Frames` message; payloads are views of `bytes`. Throws on bytes that are not one. */
export function decodeFrames(bytes: Buffer): ReceivedFrame[] {
  const r = protobuf.Reader.create(bytes);
  const frames: ReceivedFrame[] = [];
  while (r.pos < r.len) {
    const t = r.uint32();
    if (t === FRAMES_FRAME) frames.push(readFrame(r));
    else r.skipType(t & 7);
  }
  return frames;
}
