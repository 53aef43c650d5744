// Objects in their JSON form to Protobuf and back, driven by the message table.
//
// Encoding writes every field the JSON object holds, zero values included (a
// zero the JSON carries is a set optional field), in field-number order, map
// entries sorted by key. Decoding leaves out the zero values of singular
// scalars and int-or-strings unless the field is required or a pointer whose
// zero means something (pointers.ts): Go clients write every non-pointer field,
// and the API's JSON form omits those zero values.
import { ProtobufError } from './errors.js';
import { Field, getSchema, Kind, Message, MESSAGE_NAMES } from './schema.js';
import { formatDuration, formatTime, parseDuration, parseTime } from './time.js';
import { Reader, WIRE_BYTES, WIRE_VARINT, Writer } from './wire.js';

export type JsonObject = Record<string, unknown>;

/** The 4 bytes before every Protobuf-encoded object. */
export const PROTOBUF_PREFIX = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

const MAP_KEY = (1 << 3) | WIRE_BYTES;
const MAP_VALUE_NUMBER = 2;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function expectObject(v: unknown, what: string): JsonObject {
  if (!isObject(v)) throw new ProtobufError(`${what}: want an object`);
  return v;
}

function toInteger(v: unknown, f: Field): number {
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isInteger(n)) throw new ProtobufError(`field ${f.name}: ${JSON.stringify(v)} is not an integer`);
  return n;
}

const toBytes = (v: unknown): Uint8Array => (v instanceof Uint8Array ? v : Buffer.from(String(v), 'base64'));

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

// ---- encoding ----

export function writeMessage(w: Writer, message: Message, obj: JsonObject): void {
  const fields = message.fields;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i];
    if (f.inline) {
      w.uint(f.key);
      const mark = w.begin();
      writeMessage(w, f.message!, obj);
      w.end(mark);
      continue;
    }
    const v = obj[f.name];
    if (v === undefined || v === null) continue;
    if (f.map) writeMap(w, f, expectObject(v, f.name));
    else if (f.repeated) {
      if (!Array.isArray(v)) throw new ProtobufError(`field ${f.name}: want an array`);
      for (const item of v) {
        w.uint(f.key);
        writeValue(w, f, item);
      }
    } else {
      w.uint(f.key);
      writeValue(w, f, v);
    }
  }
}

function writeMap(w: Writer, f: Field, obj: JsonObject): void {
  const valueKey = (MAP_VALUE_NUMBER << 3) | (f.kind === Kind.Int32 || f.kind === Kind.Int64 || f.kind === Kind.Bool ? WIRE_VARINT : WIRE_BYTES);
  for (const key of sortedKeys(obj)) {
    const v = obj[key];
    w.uint(f.key);
    const mark = w.begin();
    w.uint(MAP_KEY);
    w.string(key);
    w.uint(valueKey);
    // A null value (a zero time) is the zero on the wire: a 0 varint or an empty value.
    if (v === undefined || v === null) w.uint(0);
    else writeValue(w, f, v);
    w.end(mark);
  }
}

/** Map keys in the order Go writes them; objects often hold them sorted already. */
function sortedKeys(obj: JsonObject): string[] {
  const keys = Object.keys(obj);
  for (let i = 1; i < keys.length; i++) if (keys[i - 1] > keys[i]) return keys.sort();
  return keys;
}

/** One value of field `f`, after its key. */
function writeValue(w: Writer, f: Field, v: unknown): void {
  switch (f.kind) {
    case Kind.String: return w.string(typeof v === 'string' ? v : String(v));
    case Kind.Int32:
    case Kind.Int64: return w.int(toInteger(v, f));
    case Kind.Bool: return w.bool(v === true);
    case Kind.Bytes: return w.bytes(toBytes(v));
    case Kind.Message: {
      const mark = w.begin();
      writeMessage(w, f.message!, expectObject(v, f.name));
      return w.end(mark);
    }
    default: {
      const mark = w.begin();
      writeSpecial(w, f.kind, f.message!, v);
      return w.end(mark);
    }
  }
}

const tag = (m: Message, name: string, wire: number): number => (m.num[name] << 3) | wire;

/** The body of a special type from its JSON form; field numbers come from the type's own message. */
function writeSpecial(w: Writer, kind: Kind, m: Message, v: unknown): void {
  switch (kind) {
    case Kind.Time:
    case Kind.MicroTime: {
      const t = parseTime(String(v));
      w.uint(tag(m, 'seconds', WIRE_VARINT));
      w.int(t.seconds);
      w.uint(tag(m, 'nanos', WIRE_VARINT));
      return w.int(t.nanos);
    }
    case Kind.Duration:
      w.uint(tag(m, 'duration', WIRE_VARINT));
      return w.int(parseDuration(String(v)));
    case Kind.Quantity:
      w.uint(tag(m, 'string', WIRE_BYTES));
      return w.string(String(v));
    case Kind.IntOrString: {
      // The Go form writes all three fields: type 0 with intVal, or type 1 with strVal.
      const isString = typeof v === 'string';
      w.uint(tag(m, 'type', WIRE_VARINT));
      w.int(isString ? 1 : 0);
      w.uint(tag(m, 'intVal', WIRE_VARINT));
      w.int(isString ? 0 : Number(v));
      w.uint(tag(m, 'strVal', WIRE_BYTES));
      return w.string(isString ? v : '');
    }
    // JSON text goes in as a string: the same length-prefixed UTF-8 bytes, without a Buffer made for each.
    case Kind.RawExtension:
      w.uint(tag(m, 'raw', WIRE_BYTES));
      return v instanceof Uint8Array ? w.bytes(v) : w.string(JSON.stringify(v));
    case Kind.FieldsV1:
      w.uint(tag(m, 'Raw', WIRE_BYTES));
      return w.string(JSON.stringify(v));
    case Kind.StringList: {
      if (!Array.isArray(v)) throw new ProtobufError(`${m.name}: want an array`);
      const key = tag(m, 'items', WIRE_BYTES);
      for (const item of v) {
        w.uint(key);
        w.string(String(item));
      }
      return;
    }
  }
}

/** The Protobuf bytes of `obj` as message `messageName` (no envelope). */
export function encodeObject(obj: JsonObject, messageName: string): Buffer {
  const w = new Writer();
  writeMessage(w, getSchema().message(messageName), obj);
  return w.finish();
}

// ---- decoding ----

/** Reads the fields up to the reader's end into `out`. */
function readMessage(r: Reader, message: Message, out: JsonObject): void {
  while (r.pos < r.end) {
    const key = r.uint();
    const f = message.byNumber[key >>> 3];
    if (f === undefined) {
      r.skip(key & 7);
      continue;
    }
    if (key !== f.key) {
      if (f.repeated && (key & 7) === WIRE_BYTES && (f.key & 7) === WIRE_VARINT) {
        readPacked(r, f, out);
        continue;
      }
      throw new ProtobufError(`${message.name}: field ${f.number} has wire type ${key & 7}`);
    }
    if (f.inline) {
      const outer = r.enter();
      readMessage(r, f.message!, out);
      r.leave(outer);
    } else if (f.map) readMapEntry(r, f, out);
    else if (f.repeated) {
      const list = (out[f.name] ??= []) as unknown[];
      list.push(readValue(r, f) ?? null);
    } else {
      const v = readValue(r, f);
      if (v === undefined) continue;
      if ((f.kind <= Kind.Bytes || f.kind === Kind.IntOrString) && !f.keepZero && (v === '' || v === 0 || v === false)) continue;
      out[f.name] = v;
    }
  }
}

function readPacked(r: Reader, f: Field, out: JsonObject): void {
  const list = (out[f.name] ??= []) as unknown[];
  const outer = r.enter();
  while (r.pos < r.end) list.push(f.kind === Kind.Bool ? r.uint() !== 0 : r.int());
  r.leave(outer);
}

function readMapEntry(r: Reader, f: Field, out: JsonObject): void {
  const map = (out[f.name] ??= {}) as JsonObject;
  const outer = r.enter();
  let key = '';
  let value: unknown;
  while (r.pos < r.end) {
    const k = r.uint();
    if (k === MAP_KEY) key = r.string();
    else if (k >>> 3 === MAP_VALUE_NUMBER) value = readValue(r, f);
    else r.skip(k & 7);
  }
  r.leave(outer);
  map[key] = value === undefined ? zeroOf(f.kind) : value;
}

/** The JSON form of a map value the wire leaves out or empty; null for a zero time. */
function zeroOf(kind: Kind): unknown {
  switch (kind) {
    case Kind.String:
    case Kind.Bytes: return '';
    case Kind.Int32:
    case Kind.Int64: return 0;
    case Kind.Bool: return false;
    case Kind.Message: return {};
    default: return null;
  }
}

/** One value of field `f`; undefined for a special type's empty form (zero time, no raw data). */
function readValue(r: Reader, f: Field): unknown {
  switch (f.kind) {
    case Kind.String: return r.string();
    case Kind.Int32:
    case Kind.Int64: return r.int();
    case Kind.Bool: return r.uint() !== 0;
    case Kind.Bytes: return r.bytes().toString('base64');
    case Kind.Message: {
      const obj: JsonObject = {};
      const outer = r.enter();
      readMessage(r, f.message!, obj);
      r.leave(outer);
      return obj;
    }
    default: {
      const outer = r.enter();
      const v = readSpecial(r, f.kind, f.message!);
      r.leave(outer);
      return v;
    }
  }
}

/** A special type's JSON form from its fields. */
function readSpecial(r: Reader, kind: Kind, m: Message): unknown {
  if (kind === Kind.StringList) return readStrings(r, m.num.items);
  const present = readFlat(r);
  switch (kind) {
    case Kind.Time:
    case Kind.MicroTime:
      // Zero time is an empty message; its JSON form is null, left out.
      return present ? formatTime(varints[m.num.seconds] ?? 0, varints[m.num.nanos] ?? 0, kind === Kind.MicroTime ? 6 : 0) : undefined;
    case Kind.Duration: return formatDuration(varints[m.num.duration] ?? 0);
    case Kind.Quantity: return blobs[m.num.string]?.toString('utf8') || '0';
    case Kind.IntOrString: return varints[m.num.type] === 1 ? blobs[m.num.strVal]?.toString('utf8') ?? '' : varints[m.num.intVal] ?? 0;
    case Kind.RawExtension: return decodeRaw(blobs[m.num.raw], r.depth);
    case Kind.FieldsV1: return decodeRaw(blobs[m.num.Raw], r.depth);
  }
  return undefined;
}

/** Scratch space of readFlat: a special type's fields by number (its numbers are small). */
const SCRATCH_SIZE = 16;
const varints = new Array<number | undefined>(SCRATCH_SIZE).fill(undefined);
const blobs = new Array<Buffer | undefined>(SCRATCH_SIZE).fill(undefined);

/** Reads a special type's fields into the scratch space; whether it had any. */
function readFlat(r: Reader): boolean {
  varints.fill(undefined, 0, SCRATCH_SIZE);
  blobs.fill(undefined, 0, SCRATCH_SIZE);
  const present = r.pos < r.end;
  while (r.pos < r.end) {
    const key = r.uint();
    const number = key >>> 3;
    const wire = key & 7;
    if (number < SCRATCH_SIZE && wire === WIRE_VARINT) varints[number] = r.int();
    else if (number < SCRATCH_SIZE && wire === WIRE_BYTES) blobs[number] = r.bytes();
    else r.skip(wire);
  }
  return present;
}

function readStrings(r: Reader, number: number): string[] {
  const items: string[] = [];
  while (r.pos < r.end) {
    const key = r.uint();
    if (key === ((number << 3) | WIRE_BYTES)) items.push(r.string());
    else r.skip(key & 7);
  }
  return items;
}

/** Embedded raw data: an enveloped Protobuf object or JSON. */
function decodeRaw(raw: Buffer | undefined, depth: number): unknown {
  if (!raw || raw.length === 0) return undefined;
  if (hasPrefix(raw)) return decodeEnvelope(raw, undefined, depth);
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ProtobufError('embedded raw data is neither Protobuf nor JSON');
  }
}

/** Decodes the Protobuf bytes of message `messageName` (no envelope). */
export function decodeObject(bytes: Uint8Array, messageName: string): JsonObject {
  const out: JsonObject = {};
  readMessage(new Reader(asBuffer(bytes)), getSchema().message(messageName), out);
  return out;
}

// ---- the envelope ----

const hasPrefix = (b: Uint8Array): boolean => b.length >= 4 && b[0] === 0x6b && b[1] === 0x38 && b[2] === 0x73 && b[3] === 0x00;

/** The message of a kind, or undefined for kinds without Protobuf (custom resources, unknown kinds). */
export const messageNameFor = (apiVersion: string, kind: string): string | undefined =>
  getSchema().messageNameFor(apiVersion, kind);

function requireMessage(apiVersion: string, kind: string): string {
  const name = messageNameFor(apiVersion, kind);
  if (!name) throw new ProtobufError(`no Protobuf form for kind ${JSON.stringify(kind)} of ${JSON.stringify(apiVersion)}`);
  return name;
}

/** A message's field by its name. */
export const fieldNamed = (message: Message, name: string): Field => message.byNumber[message.num[name]];

/**
 * Writes the prefix and the `runtime.Unknown` envelope of `obj`, its message
 * picked from its apiVersion and kind unless `messageName` is given.
 */
export function writeEnvelope(w: Writer, obj: JsonObject, messageName?: string): void {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  const message = getSchema().message(messageName ?? requireMessage(apiVersion, kind));
  writeEnvelopeHead(w, apiVersion, kind);
  const raw = w.begin();
  writeMessage(w, message, obj);
  w.end(raw);
  writeEnvelopeTail(w);
}

/** The prefix and the envelope up to its raw field's key: the raw bytes' length comes next. */
export function writeEnvelopeHead(w: Writer, apiVersion: string, kind: string): void {
  const unknown = getSchema().message(MESSAGE_NAMES.unknown);
  w.raw(PROTOBUF_PREFIX);
  const typeMeta = fieldNamed(unknown, 'typeMeta');
  w.uint(typeMeta.key);
  const tm = w.begin();
  writeMessage(w, typeMeta.message!, { apiVersion, kind });
  w.end(tm);
  w.uint(fieldNamed(unknown, 'raw').key);
}

/** The envelope's fields after its raw bytes: empty content encoding and type. */
export function writeEnvelopeTail(w: Writer): void {
  const unknown = getSchema().message(MESSAGE_NAMES.unknown);
  w.uint(fieldNamed(unknown, 'contentEncoding').key);
  w.string('');
  w.uint(fieldNamed(unknown, 'contentType').key);
  w.string('');
}

/** The full Protobuf form of an object: prefix, then `runtime.Unknown` holding the object. */
export function encodeEnvelope(obj: JsonObject, messageName?: string): Buffer {
  const w = new Writer();
  writeEnvelope(w, obj, messageName);
  return w.finish();
}

/**
 * The JSON form of an enveloped object, apiVersion and kind set from the
 * envelope; `messageName` decodes envelopes whose type is left empty.
 */
export function decodeEnvelope(bytes: Uint8Array, messageName?: string, depth = 0): JsonObject {
  if (!hasPrefix(bytes)) throw new ProtobufError('data does not start with the Protobuf prefix 6b 38 73 00');
  const schema = getSchema();
  const unknown = schema.message(MESSAGE_NAMES.unknown);
  const r = new Reader(asBuffer(bytes), PROTOBUF_PREFIX.length, bytes.length, depth);
  let typeMeta: JsonObject = {};
  let rawStart = -1;
  let rawEnd = -1;
  let contentEncoding = '';
  while (r.pos < r.end) {
    const key = r.uint();
    const f = unknown.byNumber[key >>> 3];
    if (f?.key !== key) r.skip(key & 7);
    else if (f.name === 'typeMeta') typeMeta = readValue(r, f) as JsonObject;
    else if (f.name === 'raw') {
      rawStart = r.delimited();
      rawEnd = r.pos;
    } else if (f.name === 'contentEncoding') contentEncoding = r.string();
    else r.skip(key & 7);
  }
  if (contentEncoding) throw new ProtobufError(`unsupported content encoding ${JSON.stringify(contentEncoding)}`);
  const apiVersion = typeof typeMeta.apiVersion === 'string' ? typeMeta.apiVersion : '';
  const kind = typeof typeMeta.kind === 'string' ? typeMeta.kind : '';
  const message = schema.message(messageName ?? requireMessage(apiVersion, kind));
  const out: JsonObject = {};
  if (apiVersion) out.apiVersion = apiVersion;
  if (kind) out.kind = kind;
  if (rawStart >= 0) {
    r.pos = rawStart;
    r.end = rawEnd;
    readMessage(r, message, out);
  }
  return out;
}
