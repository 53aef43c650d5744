// Writing API responses: objects, lists and tables in the negotiated format.
import type Koa from 'koa';
import type { ApiObject } from '../internal/apimachinery/meta.js';
import type { KindDef } from '../internal/registry/index.js';
import { createdAtColumn, nameColumn } from '../internal/registry/columns.js';
import { upstreamGroup } from '../internal/names/index.js';
import { StatusError, type Status } from '../internal/apimachinery/status.js';
import { Readable } from 'node:stream';
import { goEscape, isProtobuf, negotiate, serialize, type ResponseFormat } from './negotiation.js';
import { decodeCached } from './objectcache.js';
import { EncodedForms } from './encodedforms.js';
import { ListBody } from './listbody.js';
import type { RequestInfo } from './requestinfo.js';
import { requestQuery } from './context.js';
import { listItemEncoder, listParts, messageNameFor } from '../internal/apimachinery/protobuf/index.js';
import { apiVersionOf, splitApiVersion } from '../internal/apimachinery/meta.js';

export function writeBody(ctx: Koa.Context, status: number, body: unknown, mediaType = 'application/json'): void {
  ctx.status = status;
  ctx.type = mediaType;
  const out = serialize(body, mediaType, pretty(ctx));
  // As bytes: Node writes the header block in a string body's encoding, which would encode the
  // UTF-8 bytes of headerValue() a second time; with a Buffer body it writes them one for one.
  ctx.body = typeof out === 'string' ? Buffer.from(out, 'utf8') : out;
}

/** Whether the client asked for indented JSON. */
function pretty(ctx: Koa.Context): boolean {
  const asked = requestQuery(ctx).get('pretty');
  return asked === 'true' || asked === '1';
}

/** Whether CBOR is served (gate CBORServingAndStorage), as the app records it per request. */
export const cborEnabled = (ctx: Koa.Context): boolean => ctx.state.cbor === true;

const protobufKinds = new WeakMap<KindDef, boolean>();
/** Whether a kind has a Protobuf form: built-in kinds do; custom and aggregated resources do not. */
function hasProtobuf(def: KindDef): boolean {
  let known = protobufKinds.get(def);
  if (known === undefined) {
    known = messageNameFor(apiVersionOf(def.group, def.version), def.kind) !== undefined;
    protobufKinds.set(def, known);
  }
  return known;
}

/** The Accept-driven format of a response about a kind (or of a Status, which always has every form). */
export const formatOf = (ctx: Koa.Context, def?: KindDef): ResponseFormat =>
  negotiate(ctx.get('Accept') || undefined, { table: true, protobuf: def === undefined || hasProtobuf(def), cbor: cborEnabled(ctx) });

/** The format of a Status or discovery answer: any serializer the client accepts, JSON when none fits. */
export function plainFormatOf(ctx: Koa.Context): string {
  try {
    return negotiate(ctx.get('Accept') || undefined, { protobuf: true, cbor: cborEnabled(ctx), views: false }).mediaType;
  } catch {
    return 'application/json';
  }
}

/** A metadata-only view of an object, in the meta group version the client asked for. */
export const partialMetadata = (obj: ApiObject, apiVersion: string) =>
  ({ kind: 'PartialObjectMetadata', apiVersion, metadata: obj.metadata });

/** The Go type the platform names when a view does not fit the answer (an object where a list was asked, or back). */
function typeName(def: KindDef, list: boolean): string {
  if (!hasProtobuf(def)) return `*unstructured.Unstructured${list ? 'List' : ''}`;
  return `*${def.group ? def.group.split('.')[0] : 'core'}.${def.kind}${list ? 'List' : ''}`;
}

/** 406 for a metadata view that does not fit the answer: PartialObjectMetadataList is for lists, PartialObjectMetadata for one object. */
export function metadataMisfit(def: KindDef, list: boolean): StatusError {
  const message = list ? `you requested PartialObjectMetadata, but the requested object is a list (${typeName(def, true)})`
    : `you requested PartialObjectMetadataList, but the requested object is not a list (${typeName(def, false)})`;
  return new StatusError(406, 'NotAcceptable', message);
}

/** The objects as a Table of the kind's columns (Name and Created At by default). */
export function toTable(ctx: Koa.Context, def: KindDef, objects: ApiObject[], listMeta: Record<string, unknown>, apiVersion: string): unknown {
  const columns = def.tableColumns ?? [nameColumn, createdAtColumn];
  const include = (ctx.query.includeObject as string) || 'Metadata';
  return {
    kind: 'Table', apiVersion, metadata: listMeta,
    columnDefinitions: columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority ?? 0 })),
    rows: objects.map((o) => ({
      cells: columns.map((c) => c.cell(o)),
      ...(include === 'None' ? {} : { object: include === 'Object' ? presented(ctx, o, def) : partialMetadata(o, apiVersion) }),
    })),
  };
}

const aliasOf = (ctx: Koa.Context): RequestInfo | undefined => {
  const info = ctx.state.info as RequestInfo | undefined;
  return info?.groupAlias ? info : undefined;
};

/** The object as the client addressed its group: through an upstream group name, its apiVersion and the group
 * names its contents carry are in that spelling, so typed clients recognise the kind and a manifest applied
 * again compares equal. Objects of other groups (and already presented ones) are left as they are. */
export function presented<T extends { apiVersion?: unknown }>(ctx: Koa.Context, obj: T, def?: KindDef): T {
  const info = aliasOf(ctx);
  if (!info || typeof obj.apiVersion !== 'string') return obj;
  const { group, version } = splitApiVersion(obj.apiVersion);
  if (group !== info.group) return obj;
  const out = { ...obj, apiVersion: apiVersionOf(info.groupAlias!, version) };
  return def?.spellGroups ? spelled(out, def) : out;
}

/** A copy of an object (decoded objects are shared between requests) with its contents' groups in the upstream spelling. */
function spelled<T>(obj: T, def: KindDef): T {
  const copy = structuredClone(obj);
  def.spellGroups!(copy as ApiObject, upstreamGroup);
  return copy;
}

/** A Status about a resource asked for through an upstream group name names the group in that spelling. */
export function presentedStatus(ctx: Koa.Context, status: Status): Status {
  const info = aliasOf(ctx);
  if (!info) return status;
  const message = status.message?.split(info.group).join(info.groupAlias!);
  const details = status.details?.group === info.group ? { ...status.details, group: info.groupAlias! } : status.details;
  return { ...status, ...(message !== undefined ? { message } : {}), ...(details ? { details } : {}) };
}

/** Writes one object as the client asked: the object, a one-row Table, or its metadata. */
export function writeObject(ctx: Koa.Context, def: KindDef, status: number, obj: ApiObject): void {
  obj = presented(ctx, obj, def);
  const format = formatOf(ctx, def);
  if (format.as === 'PartialObjectMetadataList') throw metadataMisfit(def, false);
  const body = format.as === 'Table' ? toTable(ctx, def, [obj], { resourceVersion: obj.metadata?.resourceVersion }, format.metaVersion!)
    : format.as === 'PartialObjectMetadata' ? partialMetadata(obj, format.metaVersion!) : obj;
  writeBody(ctx, status, body, format.mediaType);
}

/** The kind of a list of the kind's objects. */
const listKindOf = (def: KindDef): string => def.listKind ?? `${def.kind}List`;

/** Writes a list: `<Kind>List` (or the kind's listKind) with items stripped of their type (but custom ones), a Table, or the items' metadata. */
export function writeList(ctx: Koa.Context, def: KindDef, apiVersion: string, items: ApiObject[], listMeta: Record<string, unknown>): void {
  const format = formatOf(ctx, def);
  if (format.as === 'PartialObjectMetadata') throw metadataMisfit(def, true);
  let body: unknown;
  if (format.as === 'Table') body = toTable(ctx, def, items, listMeta, format.metaVersion!);
  else if (format.as === 'PartialObjectMetadataList') {
    const metaVersion = format.metaVersion!;
    body = { kind: 'PartialObjectMetadataList', apiVersion: metaVersion, metadata: listMeta, items: items.map((o) => partialMetadata(o, metaVersion)) };
  } else {
    // Custom objects keep their type in a list, as the platform's unstructured lists do.
    const bare = def.custom ? items : items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
    body = presented(ctx, { kind: listKindOf(def), apiVersion, metadata: listMeta, items: aliasOf(ctx) && def.spellGroups ? bare.map((o) => spelled(o, def)) : bare });
  }
  writeBody(ctx, 200, body, format.mediaType);
}

/** Whether a response is the objects as stored: of the storage version, neither a table nor metadata, names unchanged. */
const asStored = (ctx: Koa.Context, def: KindDef, format: ResponseFormat): boolean =>
  format.as === 'object' && !def.fromStorage && !aliasOf(ctx);

/** Whether a response can be the cached JSON text as it is: plain JSON of the storage version, as stored, not pretty-printed. */
function rawJson(ctx: Koa.Context, def: KindDef, format: ResponseFormat): boolean {
  return format.mediaType === 'application/json' && asStored(ctx, def, format) && !pretty(ctx);
}

/** Writes one object from its cached JSON, which a plain JSON answer is already. */
export function writeCachedObject(ctx: Koa.Context, def: KindDef, json: string): void {
  if (!rawJson(ctx, def, formatOf(ctx, def))) return writeObject(ctx, def, 200, decodeCached(def, json));
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = Buffer.from(`${json}\n`, 'utf8');
}

/** A streamed list is written in chunks of about this many characters. */
const STREAM_CHUNK = 64 * 1024;
/** Responses at least this large are compressed for clients that accept gzip; lists shorter are written in one piece. */
export const COMPRESSION_THRESHOLD = 128 * 1024;

/** A list's chunks as its body: one buffer when its items (`sizes`) sum to less than the compression threshold, else a stream. */
function chunkedBody(sizes: ArrayLike<{ length: number }>, chunks: Iterable<Buffer>): Buffer | Readable {
  let size = 0;
  for (let i = 0; i < sizes.length && size < COMPRESSION_THRESHOLD; i++) size += sizes[i].length;
  return size < COMPRESSION_THRESHOLD ? Buffer.concat([...chunks]) : Readable.from(chunks, { objectMode: false });
}

/** Writes a list from the cached JSON of its items: a JSON list streams out item by item (each written as
 * cached, without apiVersion and kind); other forms decode the items. */
export function writeCachedList(ctx: Koa.Context, def: KindDef, apiVersion: string, items: string[], listMeta: Record<string, unknown>): void {
  const format = formatOf(ctx, def);
  if (isProtobuf(format.mediaType) && asStored(ctx, def, format)) {
    return writeProtobufList(ctx, def, apiVersion, items, listMeta, format.mediaType);
  }
  if (!rawJson(ctx, def, format)) return writeList(ctx, def, apiVersion, items.map((json) => decodeCached(def, json)), listMeta);
  const head = `{${goEscape(JSON.stringify({ kind: listKindOf(def), apiVersion, metadata: listMeta })).slice(1, -1)},"items":[`;
  const typeMeta = `"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(def.kind)}`;
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = chunkedBody(items, jsonList(head, items, { lead: `{${typeMeta},`, end: `,${typeMeta}}` }));
}

/** Lists' items in Protobuf (each as its list holds it), kept within this many bytes so that a collection read often is encoded once. */
const protobufItems = new EncodedForms(32 * 1024 * 1024);

/** Item encoders by list (`<apiVersion>/<listKind>`). */
const itemEncoders = new Map<string, (obj: ApiObject) => Buffer>();

function itemEncoder(form: string, apiVersion: string, listKind: string, message: string): (obj: ApiObject) => Buffer {
  let encode = itemEncoders.get(form);
  if (!encode) itemEncoders.set(form, encode = listItemEncoder(apiVersion, listKind, message));
  return encode;
}

/** Writes a list in Protobuf: each item as the list holds it (kept, or encoded from its JSON), then the list around them. */
function writeProtobufList(ctx: Koa.Context, def: KindDef, apiVersion: string, items: string[], listMeta: Record<string, unknown>, mediaType: string): void {
  const listKind = listKindOf(def);
  const form = `${apiVersion}/${listKind}`;
  const encodeItem = itemEncoder(form, apiVersion, listKind, messageNameFor(apiVersion, def.kind)!);
  const encode = (json: string) => encodeItem(decodeCached(def, json));
  const encoded = new Array<Buffer>(items.length);
  protobufItems.startRound();
  for (let i = 0; i < items.length; i++) encoded[i] = protobufItems.get(items[i], form, encode);
  ctx.status = 200;
  ctx.type = mediaType;
  const parts = listParts(apiVersion, listKind, listMeta, encoded);
  let size = 0;
  for (const part of parts) size += part.length;
  if (size < COMPRESSION_THRESHOLD) {
    ctx.body = Buffer.concat(parts, size);
    return;
  }
  const body: ListBody = new ListBody(parts, size, () => (ctx.body === body ? ctx.res : undefined));
  ctx.body = body;
  // Its length is known: the response is not chunked (a compressed one is, and drops it).
  ctx.length = size;
}

/** The chunks of a JSON list. */
function* jsonList(head: string, items: string[], typeMeta: TypeMetaText): Generator<Buffer> {
  let chunk = head;
  for (let i = 0; i < items.length; i++) {
    chunk += (i > 0 ? ',' : '') + listItem(items[i], typeMeta);
    if (chunk.length >= STREAM_CHUNK) {
      yield Buffer.from(chunk, 'utf8');
      chunk = '';
    }
  }
  yield Buffer.from(`${chunk}]}\n`, 'utf8');
}

/** An item's apiVersion and kind as the server writes them at the start or the end of an object. */
interface TypeMetaText { lead: string; end: string }

/** A list item's JSON: the object's without apiVersion and kind, which are cut out where they lead or end
 * the object (as the server writes them), else removed by decoding. */
function listItem(json: string, { lead, end }: TypeMetaText): string {
  if (json.startsWith(lead)) return `{${json.slice(lead.length)}`;
  if (json.endsWith(end)) return `${json.slice(0, -end.length)}}`;
  const { apiVersion: _a, kind: _k, ...rest } = JSON.parse(json) as ApiObject;
  return goEscape(JSON.stringify(rest));
}
