// The committed changes as they travel on NATS: subjects derived from storage
// keys, the headers that chain consecutive publishes, and the `Event` message of
// proto/svc/storage/v1/storage.proto as payload.
import { NATS_EVENTS_PREFIX } from '../names/index.js';
import { protoRoot } from '../rpc/descriptor.js';
import { finished, sizedWriter } from '../rpc/writer.js';
import type { KeyValue__Output } from '../rpc/gen/svc/storage/v1/KeyValue.js';
import type { Event__Output } from '../rpc/gen/svc/storage/v1/Event.js';

export type KeyValue = KeyValue__Output;
export type StorageEvent = Event__Output;

/** Header: the revision of the event in this message. */
export const REVISION_HEADER = 'Svc-Revision';
/** Header: the revision of the previous message the storage process published
 * (after a restart, the store revision at start); a subscriber of every event that
 * has not seen this revision has missed messages. */
export const PREV_REVISION_HEADER = 'Svc-Prev-Revision';

/** Subject of the empty messages that say the stream reached the revision in their headers without a change
 * (one token under the prefix: no object key has a single segment). */
export const PROGRESS_SUBJECT = `${NATS_EVENTS_PREFIX}.progress`;

const EventMessage = protoRoot.lookupType('svc.storage.v1.Event');
const TYPE_NUMBER = { PUT: 0, DELETE: 1, PROGRESS: 2 } as const;
const toObjectOptions = { longs: Number, enums: String, defaults: true };

/** Bytes of an event's message besides its keys and values (tags, lengths, revisions, uids). */
const EVENT_OVERHEAD = 192;
const kvSize = (kv: KeyValue | null): number => (kv ? kv.key.length * 3 + kv.value.length : 0);

/** The `Event` message bytes of an event. */
export function encodeEvent(event: StorageEvent): Uint8Array {
  const w = sizedWriter(EVENT_OVERHEAD + kvSize(event.kv) + kvSize(event.prevKv));
  return finished(EventMessage.encode({ ...event, type: TYPE_NUMBER[event.type] }, w));
}

/** Decodes an `Event` message; `value`s are Buffers viewing the input. */
export function decodeEvent(bytes: Uint8Array): StorageEvent {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return EventMessage.toObject(EventMessage.decode(buf), toObjectOptions) as StorageEvent;
}

// Bytes kept as they are in a subject token; every other byte is percent-encoded,
// so `.`, `*`, `>`, whitespace and `%` never reach the subject and `_` is free to
// stand for the empty token.
const PLAIN_TOKEN = /^[A-Za-z0-9:~-]+$/;
const isPlainByte = (b: number): boolean =>
  (b >= 0x30 && b <= 0x3a) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x2d || b === 0x7e;

/** One key segment as a NATS subject token. */
export function encodeSubjectToken(segment: string): string {
  if (segment === '') return '_';
  if (PLAIN_TOKEN.test(segment)) return segment;
  let out = '';
  for (const b of Buffer.from(segment)) {
    out += isPlainByte(b) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The key segment a subject token encodes. */
export function decodeSubjectToken(token: string): string {
  return token === '_' ? '' : decodeURIComponent(token);
}

/** The subject of the events of a key: `<prefix>.<group>.<resource>.<namespace>.<name>`. */
export function eventSubject(key: string): string {
  return `${NATS_EVENTS_PREFIX}.${key.split('/').map(encodeSubjectToken).join('.')}`;
}

/** The wildcard subject of every event under a key prefix (`""` or ending in `/`),
 * e.g. `core/configmaps/` or `core/configmaps/ns1/`. */
export function subscriptionSubject(prefix: string): string {
  if (prefix === '') return `${NATS_EVENTS_PREFIX}.>`;
  if (!prefix.endsWith('/')) throw new Error(`storage prefix "${prefix}" does not end with "/"`);
  return `${eventSubject(prefix.slice(0, -1))}.>`;
}
