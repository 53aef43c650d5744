// The `Frames` message of proto/svc/rpc/v1/multiplex.proto, encoded and decoded
// by hand. The generic path (proto-loader) copies each frame into a protobufjs
// object and back on both sides; here a batch is sized once, written into one
// buffer, and read with its payloads as views of the bytes received. The wire
// format is the proto's, field for field, and unknown fields are skipped.

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

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const FIXED32 = 5;

const tag = (field: number, wireType: number): number => (field << 3) | wireType;
const FRAMES_FRAME = tag(1, LEN);
const ID = tag(1, VARINT);
const METHOD = tag(2, LEN);
const PAYLOAD = tag(3, LEN);
const CODE = tag(4, VARINT);
const DETAILS = tag(5, LEN);
const TRAILERS = tag(6, LEN);
const CONTEXT = tag(7, LEN);
const ENTRY_KEY = tag(1, LEN);
const ENTRY_VALUE = tag(2, LEN);

const varintSize = (n: number): number => {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
};

/** A field of length-delimited bytes: its tag (one byte for every field here), length and bytes. */
const lenFieldSize = (bytes: number): number => 1 + varintSize(bytes) + bytes;

/** The UTF-8 bytes of the method paths, few and sent on every request. */
const methodBytes = new Map<string, Buffer>();
const methodOf = (method: string): Buffer => {
  let bytes = methodBytes.get(method);
  if (!bytes) methodBytes.set(method, bytes = Buffer.from(method, 'utf8'));
  return bytes;
};

/** A map entry's size (key = 1, value = 2) inside its field. */
const entrySize = (key: string, value: string): number => lenFieldSize(Buffer.byteLength(key)) + lenFieldSize(Buffer.byteLength(value));

function mapSize(map: Record<string, string> | undefined): number {
  let size = 0;
  if (map) for (const key in map) size += lenFieldSize(entrySize(key, map[key]));
  return size;
}

/** The size of a frame's own fields (without its tag and length in the batch). */
function frameSize(f: Frame): number {
  let size = f.id ? 1 + varintSize(f.id) : 0;
  if (f.method) size += lenFieldSize(methodOf(f.method).length);
  if (f.payload?.length) size += lenFieldSize(f.payload.length);
  if (f.code) size += 1 + varintSize(f.code);
  if (f.details) size += lenFieldSize(Buffer.byteLength(f.details));
  return size + mapSize(f.trailers) + mapSize(f.context);
}

class Writer {
  offset = 0;
  constructor(readonly buf: Buffer) {}

  varint(n: number): void {
    while (n >= 128) {
      this.buf[this.offset++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    this.buf[this.offset++] = n;
  }

  bytes(field: number, bytes: Uint8Array): void {
    this.buf[this.offset++] = field;
    this.varint(bytes.length);
    this.buf.set(bytes, this.offset);
    this.offset += bytes.length;
  }

  string(field: number, text: string): void {
    this.buf[this.offset++] = field;
    this.varint(Buffer.byteLength(text));
    this.offset += this.buf.write(text, this.offset, 'utf8');
  }

  map(field: number, map: Record<string, string> | undefined): void {
    if (!map) return;
    for (const key in map) {
      this.buf[this.offset++] = field;
      this.varint(entrySize(key, map[key]));
      this.string(ENTRY_KEY, key);
      this.string(ENTRY_VALUE, map[key]);
    }
  }
}

/** The bytes of a `Frames` message. */
export function encodeFrames(frames: Frame[]): Buffer {
  const sizes = frames.map(frameSize);
  let total = 0;
  for (const size of sizes) total += lenFieldSize(size);
  const w = new Writer(Buffer.allocUnsafe(total));
  frames.forEach((f, i) => {
    w.buf[w.offset++] = FRAMES_FRAME;
    w.varint(sizes[i]);
    if (f.id) {
      w.buf[w.offset++] = ID;
      w.varint(f.id);
    }
    if (f.method) w.bytes(METHOD, methodOf(f.method));
    if (f.payload?.length) w.bytes(PAYLOAD, f.payload);
    if (f.code) {
      w.buf[w.offset++] = CODE;
      w.varint(f.code);
    }
    if (f.details) w.string(DETAILS, f.details);
    w.map(TRAILERS, f.trailers);
    w.map(CONTEXT, f.context);
  });
  return w.buf;
}

const EMPTY = Buffer.alloc(0);

class Reader {
  constructor(readonly buf: Buffer, public offset: number, readonly end: number) {}

  get more(): boolean {
    return this.offset < this.end;
  }

  varint(): number {
    let n = 0;
    let scale = 1;
    for (;;) {
      if (this.offset >= this.end) throw new Error('truncated varint');
      const b = this.buf[this.offset++];
      n += (b & 127) * scale;
      if (b < 128) return n;
      scale *= 128;
      if (scale > 2 ** 63) throw new Error('varint too long');
    }
  }

  /** The next length-delimited field's bytes, as a reader of them. */
  sub(): Reader {
    const length = this.varint();
    const start = this.offset;
    if (start + length > this.end) throw new Error('truncated field');
    this.offset += length;
    return new Reader(this.buf, start, start + length);
  }

  bytes(): Buffer {
    const r = this.sub();
    return this.buf.subarray(r.offset, r.end);
  }

  string(): string {
    const r = this.sub();
    return this.buf.toString('utf8', r.offset, r.end);
  }

  skip(wireType: number): void {
    if (wireType === VARINT) this.varint();
    else if (wireType === LEN) this.sub();
    else if (wireType === FIXED64) this.offset += 8;
    else if (wireType === FIXED32) this.offset += 4;
    else throw new Error(`invalid wire type ${wireType}`);
    if (this.offset > this.end) throw new Error('truncated field');
  }
}

/** A map entry into map (a missing key or value is the empty string, as in proto3). */
function readEntry(r: Reader, map: Record<string, string>): void {
  let key = '';
  let value = '';
  while (r.more) {
    const t = r.varint();
    if (t === ENTRY_KEY) key = r.string();
    else if (t === ENTRY_VALUE) value = r.string();
    else r.skip(t & 7);
  }
  map[key] = value;
}

function readFrame(r: Reader): ReceivedFrame {
  const f: ReceivedFrame = { id: 0, method: '', payload: EMPTY, code: 0, details: '', trailers: {}, context: {} };
  while (r.more) {
    const t = r.varint();
    switch (t) {
      case ID: f.id = r.varint(); break;
      case METHOD: f.method = r.string(); break;
      case PAYLOAD: f.payload = r.bytes(); break;
      case CODE: f.code = r.varint(); break;
      case DETAILS: f.details = r.string(); break;
      case TRAILERS: readEntry(r.sub(), f.trailers); break;
      case CONTEXT: readEntry(r.sub(), f.context); break;
      default: r.skip(t & 7);
    }
  }
  return f;
}

/** The frames of a `Frames` message; payloads are views of `bytes`. Throws on bytes that are not one. */
export function decodeFrames(bytes: Buffer): ReceivedFrame[] {
  const r = new Reader(bytes, 0, bytes.length);
  const frames: ReceivedFrame[] = [];
  while (r.more) {
    const t = r.varint();
    if (t === FRAMES_FRAME) frames.push(readFrame(r.sub()));
    else r.skip(t & 7);
  }
  return frames;
}
