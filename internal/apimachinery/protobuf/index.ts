// The Protobuf serialization of the API (`application/vnd.svc.protobuf`):
// objects, the envelope every object travels in, and watch frames.
export { decodeEnvelope, decodeObject, encodeEnvelope, encodeObject, messageNameFor, PROTOBUF_PREFIX } from './codec.js';
export type { JsonObject } from './codec.js';
export { listItemEncoder, listParts } from './list.js';
export { ProtobufError } from './errors.js';
export { decodeWatchEvents, encodeWatchEvent } from './watch.js';
export type { WatchEvent } from './watch.js';
