// A list in its Protobuf form, made of parts that are written one after another:
// the envelope and list metadata, each item as the list holds it (the items field's
// key, the length, the item's message), then the envelope's tail. The envelope's
// length prefixes need the size of everything after them, so the items are encoded
// first (or taken from a cache of encoded items) and their sizes summed; the parts
// are never joined into one buffer.
import { fieldNamed, messageNameFor, writeEnvelopeHead, writeEnvelopeTail, writeMessage, type JsonObject } from './codec.js';
import { ProtobufError } from './errors.js';
import { getSchema } from './schema.js';
import { Writer } from './wire.js';

function listMessage(apiVersion: string, listKind: string): string {
  const name = messageNameFor(apiVersion, listKind);
  if (!name) throw new ProtobufError(`no Protobuf form for kind ${JSON.stringify(listKind)} of ${JSON.stringify(apiVersion)}`);
  return name;
}

/** Encodes an object of message `itemMessage` as the list `listKind` of `apiVersion` holds an item: the items
 * field's key, the length, the object's message. */
export function listItemEncoder(apiVersion: string, listKind: string, itemMessage: string): (obj: JsonObject) => Buffer {
  const key = fieldNamed(getSchema().message(listMessage(apiVersion, listKind)), 'items').key;
  const message = getSchema().message(itemMessage);
  // One writer for every item (encoding is synchronous); each item's bytes are copied out of it.
  const w = new Writer();
  return (obj) => {
    w.reset();
    w.uint(key);
    const mark = w.begin();
    writeMessage(w, message, obj);
    w.end(mark);
    return w.finish();
  };
}

/** The parts of the enveloped list `listKind` of `apiVersion` around `items` (each made by listItemEncoder):
 * written head, items, tail, they are the same bytes as the whole list encoded at once. */
export function listParts(apiVersion: string, listKind: string, listMeta: JsonObject, items: Uint8Array[]): Uint8Array[] {
  const list = getSchema().message(listMessage(apiVersion, listKind));
  const metadata = fieldNamed(list, 'metadata');
  const meta = new Writer(256);
  meta.uint(metadata.key);
  const mark = meta.begin();
  writeMessage(meta, metadata.message!, listMeta);
  meta.end(mark);
  const metaBytes = meta.take();
  let listLength = metaBytes.length;
  for (const item of items) listLength += item.length;

  const head = new Writer(1024);
  writeEnvelopeHead(head, apiVersion, listKind);
  head.uint(listLength);
  head.raw(metaBytes);
  const tail = new Writer(16);
  writeEnvelopeTail(tail);
  return [head.take(), ...items, tail.take()];
}
