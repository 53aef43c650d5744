// Content negotiation: which representation a client accepts, how a request
// body is decoded, and how a response is written.
import YAML, { isCollection, visit } from 'yaml';
import { Encoder as CborEncoder } from 'cbor-x';
import { duplicateJsonFields, parseYamlWithDuplicates } from './fieldvalidation.js';
import { StatusError, badRequest, notAcceptable, unsupportedMediaType } from '../internal/apimachinery/status.js';
import { GROUP_META, MEDIA_PROTOBUF, UPSTREAM_GROUP_META, UPSTREAM_MEDIA_PROTOBUF } from '../internal/names/index.js';
import { decodeEnvelope, encodeEnvelope } from '../internal/apimachinery/protobuf/index.js';
import { cborTooDeep, checkJsonDepth, checkValueDepth, tooDeep, valueTooDeep } from '../internal/apimachinery/depth.js';

export interface MediaRange {
  type: string;
  params: Record<string, string>;
  q: number;
}

/** Accept headers parsed lately: a client sends the same one with each request. Cleared when full, so a client
 * sending ever new ones costs no memory. */
const parsedAccepts = new Map<string, readonly MediaRange[]>();
const MAX_PARSED_ACCEPTS = 256;
const ANY: readonly MediaRange[] = Object.freeze([{ type: '*/*', params: {}, q: 1 }]);

/** Parses an Accept header into media ranges, best first (stable for equal q); shared by every request with the same header. */
export function parseAccept(header: string | undefined): readonly MediaRange[] {
  if (!header) return ANY;
  let ranges = parsedAccepts.get(header);
  if (ranges) return ranges;
  if (parsedAccepts.size >= MAX_PARSED_ACCEPTS) parsedAccepts.clear();
  parsedAccepts.set(header, ranges = Object.freeze(parseRanges(header)));
  return ranges;
}

function parseRanges(header: string): MediaRange[] {
  return header.split(',').map((part, i) => {
    const [type, ...rawParams] = part.split(';').map((s) => s.trim());
    const params: Record<string, string> = {};
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
    }
    const q = params.q === undefined ? 1 : Number(params.q);
    delete params.q;
    return { type: type.toLowerCase(), params, q: Number.isNaN(q) ? 0 : q, i };
  }).filter((r) => r.type && r.q > 0).sort((a, b) => b.q - a.q || a.i - b.i).map(({ type, params, q }) => ({ type, params, q }));
}

/** The forms the gateway writes: plain objects, or a Table / metadata-only view of them. */
export type Representation = 'object' | 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList';
export const MEDIA_CBOR = 'application/cbor';
export type MediaType = 'application/json' | 'application/yaml' | typeof MEDIA_PROTOBUF | typeof UPSTREAM_MEDIA_PROTOBUF | typeof MEDIA_CBOR;
export interface ResponseFormat {
  mediaType: MediaType;
  as: Representation;
  /** The apiVersion of a Table or metadata view: the meta group in the spelling the client asked for, and its version. */
  metaVersion?: string;
}

const PROTOBUF_TYPES: string[] = [MEDIA_PROTOBUF, UPSTREAM_MEDIA_PROTOBUF];
export const isProtobuf = (mediaType: string): boolean => PROTOBUF_TYPES.includes(mediaType);

const isMetaGroup = (g: string | undefined) => g === GROUP_META || g === UPSTREAM_GROUP_META;
/** The meta versions a view may be asked in. */
const META_VERSIONS = ['v1', 'v1beta1'];
const SERIALIZERS = ['application/json', 'application/yaml', MEDIA_PROTOBUF, UPSTREAM_MEDIA_PROTOBUF, MEDIA_CBOR] as const;

/** What a response may be besides JSON and YAML. */
export interface Offer {
  table?: boolean;
  protobuf?: boolean;
  /** Gate CBORServingAndStorage. */
  cbor?: boolean;
  /** False for answers that have no views (`as=`) at all: those not about a kind's objects (a Status). */
  views?: boolean;
}

function matchType(type: string): MediaType | undefined {
  if (type === '*/*' || type === 'application/*') return 'application/json';
  return (SERIALIZERS as readonly string[]).includes(type) ? (type as MediaType) : undefined;
}

const offered = (mediaType: MediaType, offer: Offer): boolean =>
  (isProtobuf(mediaType) ? offer.protobuf !== false : mediaType !== MEDIA_CBOR || offer.cbor === true);

/** The view a media range asks for, when the server has it in that media type: a Table as JSON or YAML only;
 * metadata in every serializer, Protobuf too (the meta types have it, whatever the kind). */
function view(mediaType: MediaType, params: Record<string, string>, offer: Offer): ResponseFormat | undefined {
  if (offer.views === false || !isMetaGroup(params.g) || !META_VERSIONS.includes(params.v)) return undefined;
  const metaVersion = `${params.g}/${params.v}`;
  if (params.as === 'Table') {
    return offer.table && (mediaType === 'application/json' || mediaType === 'application/yaml') ? { mediaType, as: 'Table', metaVersion } : undefined;
  }
  if (params.as !== 'PartialObjectMetadata' && params.as !== 'PartialObjectMetadataList') return undefined;
  return mediaType !== MEDIA_CBOR || offer.cbor ? { mediaType, as: params.as, metaVersion } : undefined;
}

/** Picks the response format from the Accept header, the first acceptable range in order of preference;
 * 406 when nothing acceptable is served. */
export function negotiate(accept: string | undefined, offer: Offer): ResponseFormat {
  for (const r of parseAccept(accept)) {
    const mediaType = matchType(r.type);
    if (!mediaType) continue;
    const transforms = r.params.as !== undefined || r.params.g !== undefined || r.params.v !== undefined;
    if (!transforms && offered(mediaType, offer)) return { mediaType, as: 'object' };
    const format = transforms ? view(mediaType, r.params, offer) : undefined;
    if (format) return format;
  }
  throw notAcceptable(SERIALIZERS.filter((t) => offered(t, offer)));
}

/** CBOR documents start with the self-describing tag 55799, as the upstream encoder writes them. */
const CBOR_SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7]);
const cbor = new CborEncoder({ useRecords: false, mapsAsObjects: true, tagUint8Array: false, variableMapSize: true });

export const encodeCbor = (value: unknown): Buffer => Buffer.concat([CBOR_SELF_DESCRIBED, cbor.encode(value)]);
/** Decodes CBOR whose nesting was checked first: the decoder recurses. */
export function decodeCbor(raw: Buffer): unknown {
  if (cborTooDeep(raw)) throw tooDeep();
  return cbor.decode(raw.subarray(0, 3).equals(CBOR_SELF_DESCRIBED) ? raw.subarray(3) : raw);
}

/** Collections nested this deep are written in flow style: block style indents each level, growing with the square of the depth. */
const BLOCK_DEPTH = 32;

function serializeYaml(body: unknown): string {
  const doc = new YAML.Document(body);
  if (valueTooDeep(body, BLOCK_DEPTH)) {
    visit(doc, {
      Collection(_key, node, path) {
        if (path.filter(isCollection).length < BLOCK_DEPTH) return undefined;
        node.flow = true;
        return visit.SKIP;
      },
    });
  }
  return doc.toString({ lineWidth: 0 });
}

/** What the platform's JSON encoder escapes besides what JSON.stringify does: HTML's special characters and the JavaScript line separators. */
const GO_ESCAPED = /[<>&\u2028\u2029]/g;
const GO_ESCAPED_ANY = /[<>&\u2028\u2029]/;
const escapeChar = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** JSON text with the platform encoder's escapes; most texts have none of those characters and are returned as they are. */
export const goEscape = (text: string): string => (GO_ESCAPED_ANY.test(text) ? text.replace(GO_ESCAPED, escapeChar) : text);

/** JSON as the platform's encoder writes it, which clients comparing bodies byte for byte see: the same escapes,
 * and a newline at the end of every document. */
export function encodeJson(body: unknown, pretty = false): string {
  return `${goEscape(pretty ? JSON.stringify(body, null, 2) : JSON.stringify(body))}\n`;
}

/** Serializes a response body in the negotiated media type. */
export function serialize(body: unknown, mediaType: string, pretty = false): string | Buffer {
  if (isProtobuf(mediaType)) return encodeEnvelope(body as Record<string, unknown>);
  if (mediaType === MEDIA_CBOR) return encodeCbor(body);
  if (mediaType === 'application/yaml') return serializeYaml(body);
  return encodeJson(body, pretty);
}

/** Decodes a request body by its Content-Type; 415 for a type the server does not read. */
export function decodeBody(raw: Buffer, contentType: string | undefined, cborEnabled = false, duplicates?: string[]): unknown {
  const type = (contentType ?? 'application/json').split(';')[0].trim().toLowerCase();
  const json = type === 'application/json' || type === '';
  const value = decodeBodyAs(raw, json ? 'application/json' : type, cborEnabled, duplicates);
  // JSON's nesting is the nesting of its text, which is checked before parsing; other forms are walked once decoded.
  return json ? value : checkValueDepth(value);
}

function decodeBodyAs(raw: Buffer, type: string, cborEnabled: boolean, duplicates?: string[]): unknown {
  if (PROTOBUF_TYPES.includes(type)) return decodeEnvelope(raw);
  const text = raw.toString('utf8');
  if (type === 'application/json') checkJsonDepth(text);
  try {
    if (type === 'application/json') {
      const value = JSON.parse(text);
      if (duplicates) for (const field of duplicateJsonFields(text)) duplicates.push(field);
      return value;
    }
    if (type === MEDIA_CBOR && cborEnabled) return decodeCbor(raw);
    if (type === 'application/yaml' || type === 'application/x-yaml' || type === 'text/yaml') {
      const parsed = parseYamlWithDuplicates(text);
      duplicates?.push(...parsed.duplicates);
      return parsed.value;
    }
  } catch (err) {
    if (err instanceof StatusError) throw err;
    throw badRequest(`the request body could not be decoded: ${(err as Error).message}`);
  }
  throw unsupportedMediaType(type, ['application/json', 'application/yaml', MEDIA_PROTOBUF, ...(cborEnabled ? [MEDIA_CBOR] : [])]);
}
