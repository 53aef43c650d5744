// Watch over Protobuf: each event is a 4-byte big-endian length, then a
// `meta.v1.WatchEvent` whose object is a RawExtension holding the enveloped object.
import { decodeObject, JsonObject, writeEnvelope, writeMessage } from './codec.js';
import { ProtobufError } from './errors.js';
import { getSchema, Kind, MESSAGE_NAMES } from './schema.js';
import { Writer } from './wire.js';

export interface WatchEvent {
  type: string;
  object: JsonObject;
}

/** One length-prefixed frame of a watch stream. */
export function encodeWatchEvent(type: string, object: JsonObject): Buffer {
  const message = getSchema().message(MESSAGE_NAMES.watchEvent);
  const objectField = message.byNumber[message.num.object];
  if (objectField.kind !== Kind.RawExtension) throw new Error('protobuf: WatchEvent.object is not a RawExtension');
  const w = new Writer();
  const frame = w.beginFrame();
  writeMessage(w, message, { type });
  // The object goes straight into the RawExtension's raw bytes.
  const raw = objectField.message!;
  w.uint(objectField.key);
  const ext = w.begin();
  w.uint(raw.byNumber[raw.num.raw].key);
  const bytes = w.begin();
  writeEnvelope(w, object);
  w.end(bytes);
  w.end(ext);
  w.endFrame(frame);
  return w.finish();
}

/** The complete frames at the start of `data`, and the bytes of an incomplete last one. */
export function decodeWatchEvents(data: Uint8Array): { events: WatchEvent[]; rest: Uint8Array } {
  const events: WatchEvent[] = [];
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let pos = 0;
  while (data.length - pos >= 4) {
    const len = view.getUint32(pos);
    if (data.length - pos - 4 < len) break;
    const event = decodeObject(data.subarray(pos + 4, pos + 4 + len), MESSAGE_NAMES.watchEvent);
    if (typeof event.type !== 'string' || typeof event.object !== 'object' || event.object === null) {
      throw new ProtobufError('watch event without type or object');
    }
    events.push({ type: event.type, object: event.object as JsonObject });
    pos += 4 + len;
  }
  return { events, rest: data.subarray(pos) };
}
