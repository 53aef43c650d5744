// The message table, compiled once from the shared data: the field numbers of
// `shared/protobuf/messages.json`, and from `shared/openapi/definitions.json`
// the JSON facts the field numbers alone do not carry (a few JSON names that
// differ from the Protobuf names, embedded structs that JSON inlines, and the
// required fields whose zero values JSON keeps).
import { readSharedJson } from '../../config/shared.js';
import { DOMAIN, UPSTREAM_DOMAIN } from '../../names/index.js';
import { WIRE_BYTES, WIRE_VARINT } from './wire.js';
import { zeroIsMeaningful } from './pointers.js';

/** How a field maps between JSON and the wire; the scalars come first (the codec relies on it). */
export enum Kind { String, Int32, Int64, Bool, Bytes, Message, Time, MicroTime, Duration, Quantity, IntOrString, RawExtension, FieldsV1, StringList }

export interface Field {
  /** JSON name. */
  name: string;
  number: number;
  /** The field's key on the wire: number and wire type. */
  key: number;
  kind: Kind;
  repeated: boolean;
  map: boolean;
  /** The message of a Message kind, or of a special kind (whose own field numbers it holds). */
  message?: Message;
  /** An embedded struct whose fields JSON puts in the parent object. */
  inline: boolean;
  /** A required field, or a pointer whose zero means something: JSON shows its zero value. */
  keepZero: boolean;
}

export interface Message {
  name: string;
  /** By ascending number: the order in which fields are written. */
  fields: Field[];
  byNumber: Field[];
  /** Field numbers by JSON name, for code that handles a message's fields by name. */
  num: Record<string, number>;
}

interface RawField { number: number; type: string; repeated?: boolean; map?: boolean; keyType?: string }
type RawMessages = Record<string, Record<string, RawField>>;
interface Definition { properties?: Record<string, unknown>; required?: string[] }

const MESSAGE_PREFIX = `${DOMAIN}.`;
const MACHINERY = `${DOMAIN}.apimachinery.pkg`;
const DEFINITION_PREFIX = `${DOMAIN.split('.').reverse().join('.')}.`;

const SPECIAL: Record<string, Kind> = {
  [`${MACHINERY}.apis.meta.v1.Time`]: Kind.Time,
  [`${MACHINERY}.apis.meta.v1.MicroTime`]: Kind.MicroTime,
  [`${MACHINERY}.apis.meta.v1.Duration`]: Kind.Duration,
  [`${MACHINERY}.api.resource.Quantity`]: Kind.Quantity,
  [`${MACHINERY}.api.resource.QuantityValue`]: Kind.Quantity,
  [`${MACHINERY}.util.intstr.IntOrString`]: Kind.IntOrString,
  [`${MACHINERY}.runtime.RawExtension`]: Kind.RawExtension,
  [`${MACHINERY}.apis.meta.v1.FieldsV1`]: Kind.FieldsV1,
};

const SCALARS: Record<string, Kind> = { string: Kind.String, int32: Kind.Int32, int64: Kind.Int64, bool: Kind.Bool, bytes: Kind.Bytes };

export const MESSAGE_NAMES = {
  unknown: `${MACHINERY}.runtime.Unknown`,
  watchEvent: `${MACHINERY}.apis.meta.v1.WatchEvent`,
};

/** `api.core.v1.Pod` → `api.core Pod`: a type's name without its version. */
function groupAndName(path: string): string {
  const parts = path.split('.');
  return `${parts.slice(0, -2).join('.')} ${parts[parts.length - 1]}`;
}


/**
 * A named slice type (`Verbs`, `ExtraValue`) is a message holding only
 * `repeated string items`; JSON shows it as the bare array.
 */
function isStringList(fields: Record<string, RawField>): boolean {
  const names = Object.keys(fields);
  return names.length === 1 && names[0] === 'items' && fields.items.repeated === true && fields.items.type === 'string';
}

function kindOf(type: string, raw: RawMessages): Kind {
  if (type in SCALARS) return SCALARS[type];
  if (type in SPECIAL) return SPECIAL[type];
  if (!(type in raw)) throw new Error(`protobuf: message ${type} is not in the table`);
  return isStringList(raw[type]) ? Kind.StringList : Kind.Message;
}

const wireOf = (kind: Kind, map: boolean): number =>
  !map && (kind === Kind.Int32 || kind === Kind.Int64 || kind === Kind.Bool) ? WIRE_VARINT : WIRE_BYTES;

export class Schema {
  private readonly messages = new Map<string, Message>();
  private readonly compiled = new Set<Message>();
  private readonly packages: Set<string>;
  private readonly byGroupAndName = new Map<string, Definition>();

  constructor(private readonly raw: RawMessages, private readonly definitions: Record<string, Definition>) {
    for (const [name, definition] of Object.entries(definitions)) {
      if (name.startsWith(DEFINITION_PREFIX)) this.byGroupAndName.set(groupAndName(name.slice(DEFINITION_PREFIX.length)), definition);
    }
    for (const name of Object.keys(raw)) this.messages.set(name, { name, fields: [], byNumber: [], num: {} });
    for (const message of this.messages.values()) this.compile(message);
    this.packages = new Set(Object.keys(raw).filter((n) => n.startsWith(`${DOMAIN}.api.`)).map((n) => n.split('.')[3]));
  }

  message(name: string): Message {
    const message = this.messages.get(name);
    if (!message) throw new Error(`protobuf: unknown message ${name}`);
    return message;
  }

  private compile(message: Message): void {
    if (this.compiled.has(message)) return;
    this.compiled.add(message);
    const rawFields = this.raw[message.name];
    const definition = this.definitionOf(message.name);
    const properties = new Set(Object.keys(definition?.properties ?? {}));
    const unmatched = new Set([...properties].filter((p) => !(p in rawFields)));
    const required = new Set(definition?.required ?? []);
    for (const [protoName, f] of Object.entries(rawFields)) {
      const kind = kindOf(f.type, this.raw);
      const map = f.map === true;
      const field: Field = {
        name: protoName, number: f.number, key: f.number * 8 + wireOf(kind, map), kind,
        repeated: f.repeated === true, map, message: this.messages.get(f.type), inline: false, keepZero: false,
      };
      if (definition && !properties.has(protoName)) this.matchJson(field, unmatched);
      field.keepZero = required.has(field.name) || zeroIsMeaningful(message.name, field.name);
      message.fields.push(field);
      message.byNumber[field.number] = field;
      message.num[field.name] = field.number;
    }
    message.fields.sort((a, b) => a.number - b.number);
  }

  /** Gives a field whose Protobuf name JSON lacks its JSON name, or marks it inline. */
  private matchJson(field: Field, unmatched: Set<string>): void {
    const lower = field.name.toLowerCase();
    const renamed = [...unmatched].filter((p) => p.toLowerCase() === lower);
    if (renamed.length === 1) {
      field.name = renamed[0];
      return;
    }
    if (field.kind !== Kind.Message || field.repeated || field.map) return;
    const inner = this.jsonNames(field.message!.name);
    if (inner.length > 0 && inner.every((n) => unmatched.has(n))) field.inline = true;
  }

  /** The JSON names a message contributes to an object, its inline fields' included. */
  private jsonNames(name: string): string[] {
    const message = this.message(name);
    this.compile(message);
    return message.fields.flatMap((f) => (f.inline ? this.jsonNames(f.message!.name) : [f.name]));
  }

  /**
   * The OpenAPI definition of a message; a version the definitions leave out
   * borrows the one of the same name in another version of its group.
   */
  private definitionOf(name: string): Definition | undefined {
    const path = name.slice(MESSAGE_PREFIX.length);
    return this.definitions[DEFINITION_PREFIX + path] ?? this.byGroupAndName.get(groupAndName(path));
  }

  /**
   * The message of a kind: `<group package>.<version>.<Kind>` (the core group is
   * `core`; a group's package is its first label, or its labels reversed and
   * joined as in `internal.apiserver` → `apiserverinternal`), else the meta
   * types (`Status`, `WatchEvent`, options, ...) for a known group.
   */
  messageNameFor(apiVersion: string, kind: string): string | undefined {
    const slash = apiVersion.lastIndexOf('/');
    const version = apiVersion.slice(slash + 1);
    let group = slash < 0 ? '' : apiVersion.slice(0, slash);
    // Clients may spell groups with the upstream domain.
    for (const domain of [DOMAIN, UPSTREAM_DOMAIN]) if (group.endsWith(`.${domain}`)) group = group.slice(0, -domain.length - 1);
    if (!version || !kind) return undefined;
    const labels = group ? group.split('.') : ['core'];
    const candidates = [labels[0], [...labels].reverse().join('')];
    const pkg = candidates.find((p) => this.packages.has(p));
    for (const p of candidates) {
      const name = `${DOMAIN}.api.${p}.${version}.${kind}`;
      if (this.messages.has(name)) return name;
    }
    if (!pkg && group !== 'meta') return undefined;
    const meta = `${MACHINERY}.apis.meta.${version}.${kind}`;
    if (this.messages.has(meta)) return meta;
    // A meta version without its own type of a kind uses v1's (v1beta1's PartialObjectMetadata is v1's).
    const v1 = `${MACHINERY}.apis.meta.v1.${kind}`;
    return group === 'meta' && this.messages.has(v1) ? v1 : undefined;
  }
}

let schema: Schema | undefined;

/** The compiled table, built on first use. */
export function getSchema(): Schema {
  if (!schema) {
    const messages = readSharedJson<RawMessages>('protobuf/messages.json');
    const openapi = readSharedJson<{ definitions: Record<string, Definition> }>('openapi/definitions.json');
    schema = new Schema(messages, openapi.definitions);
  }
  return schema;
}
