// A list in its Protobuf form, written a piece at a time. The envelope's length
// prefixes need the size of everything after them, so the items are encoded
// first (or taken from a cache of encoded items) and their sizes summed; the
// pieces then go out without the response ever being one buffer.
import { fieldNamed, messageNameFor, writeEnvelopeHead, writeEnvelopeTail, writeMessage, type JsonObject } from './codec.js';
import { ProtobufError } from './errors.js';
import { getSchema } from './schema.js';
import { Writer } from './wire.js';

function varintSize(n: number): number {
  let size = 1;
  for (; n >= 128; n = Math.floor(n / 128)) size++;
  return size;
}

/**
 * The enveloped list `listKind` of `apiVersion` holding `items` (each the bytes of one item's message), as
 * pieces of about `pieceBytes` each; the same bytes as encoding the whole list at once.
 */
export function* encodeListPieces(apiVersion: string, listKind: string, listMeta: JsonObject, items: Uint8Array[],
  pieceBytes = 64 * 1024): Generator<Buffer> {
  const name = messageNameFor(apiVersion, listKind);
  if (!name) throw new ProtobufError(`no Protobuf form for kind ${JSON.stringify(listKind)} of ${JSON.stringify(apiVersion)}`);
  const list = getSchema().message(name);
  const metadata = fieldNamed(list, 'metadata');
  const itemsKey = fieldNamed(list, 'items').key;

  const meta = new Writer(256);
  meta.uint(metadata.key);
  const mark = meta.begin();
  writeMessage(meta, metadata.message!, listMeta);
  meta.end(mark);
  const metaBytes = meta.take();
  let listLength = metaBytes.length;
  for (const item of items) listLength += varintSize(itemsKey) + varintSize(item.length) + item.length;

  const head = new Writer(1024);
  writeEnvelopeHead(head, apiVersion, listKind);
  head.uint(listLength);
  head.raw(metaBytes);
  // Each item's key and length, all in one buffer; the items' bytes are joined to them a piece at a time.
  const prefixes = new Writer(items.length * 11 + 16);
  let parts: Uint8Array[] = [head.take()];
  let size = parts[0].length;
  for (const item of items) {
    const start = prefixes.length;
    prefixes.uint(itemsKey);
    prefixes.uint(item.length);
    parts.push(prefixes.take().subarray(start), item);
    size += prefixes.length - start + item.length;
    if (size >= pieceBytes) {
      yield Buffer.concat(parts, size);
      parts = [];
      size = 0;
    }
  }
  const tail = new Writer(16);
  writeEnvelopeTail(tail);
  parts.push(tail.take());
  yield Buffer.concat(parts, size + tail.length);
}
