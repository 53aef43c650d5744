// A list in its Protobuf form, written a piece at a time. The envelope's length
// prefixes need the size of everything after them, so the items are encoded
// first (or taken from a cache of encoded items) and their sizes summed; the
// pieces then go out without the response ever being one buffer, each filled in
// place with the items' keys, lengths and bytes.
import { fieldNamed, messageNameFor, writeEnvelopeHead, writeEnvelopeTail, writeMessage, type JsonObject } from './codec.js';
import { ProtobufError } from './errors.js';
import { getSchema } from './schema.js';
import { Writer } from './wire.js';

/** Room the Writer asks for beyond a varint it writes, so that a piece sized exactly never grows. */
const VARINT_SLACK = 10;

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
  const keySize = varintSize(itemsKey);
  for (const item of items) listLength += keySize + varintSize(item.length) + item.length;

  const head = new Writer(1024);
  writeEnvelopeHead(head, apiVersion, listKind);
  head.uint(listLength);
  head.raw(metaBytes);
  const tail = new Writer(16);
  writeEnvelopeTail(tail);
  // Each piece is one buffer of the size its items need, filled in place: the head, then each item's key, length
  // and bytes, up to about pieceBytes; the last piece ends with the tail.
  let leading: Buffer | undefined = head.take();
  let next = 0;
  do {
    let size = leading?.length ?? 0;
    let end = next;
    for (; end < items.length && size < pieceBytes; end++) size += keySize + varintSize(items[end].length) + items[end].length;
    const last = end === items.length;
    const piece = new Writer(size + (last ? tail.length : 0) + VARINT_SLACK);
    if (leading) piece.raw(leading);
    leading = undefined;
    for (; next < end; next++) {
      piece.uint(itemsKey);
      piece.uint(items[next].length);
      piece.raw(items[next]);
    }
    if (last) piece.raw(tail.take());
    yield piece.take();
  } while (next < items.length);
}
