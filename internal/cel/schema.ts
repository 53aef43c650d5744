// Types for self and oldSelf, derived from an OpenAPI schema, so a rule is type
// checked when it is written. Each schema node becomes a declaration that knows
// its expression type, how to convert JSON data to values of that type, and how
// large such values can be (for the worst-case cost estimate).
import { extension } from '../names/index.js';
import type { Schema } from '../apimachinery/schema.js';
import { parseDuration } from './duration.js';
import { escapeProperty } from './escaping.js';
import { ObjectValue, type ObjectShape } from './object.js';
import { fromJson, parseTimestamp } from './values.js';

export type { Schema };

export const INT_OR_STRING = extension('int-or-string');
export const PRESERVE_UNKNOWN_FIELDS = extension('preserve-unknown-fields');
export const EMBEDDED_RESOURCE = extension('embedded-resource');

/** Largest request body the server accepts; bounds every value without a declared size. */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

export type BoundKeyword = 'maxLength' | 'maxItems' | 'maxProperties';

/** How large a value can be: a string's length, a list's items, a map's entries. */
interface SizeBound {
  readonly max: number;
  /** The schema keyword that would bound the size, when the size can vary. */
  readonly keyword?: BoundKeyword;
  /** True when the schema declares the bound, false when it is a worst case. */
  readonly declared: boolean;
}

interface DeclBase {
  /** Where the value sits, e.g. self.spec.items[*].name, for messages. */
  readonly path: string;
  /** Smallest JSON serialization of a value, used to bound unbounded lists and maps. */
  readonly minSize: number;
  readonly size: SizeBound;
  readonly celType: string;
  readonly convert: (raw: unknown) => unknown;
}
interface ScalarDecl extends DeclBase { readonly kind: 'scalar' }
interface DynDecl extends DeclBase { readonly kind: 'dyn' }
interface ListDecl extends DeclBase { readonly kind: 'list'; readonly element: DeclType }
interface MapDecl extends DeclBase { readonly kind: 'map'; readonly value: DeclType }
interface ObjectDecl extends DeclBase, ObjectShape {
  readonly kind: 'object';
  readonly fieldTypes: ReadonlyMap<string, DeclType>;
  readonly ctor: new (raw: Record<string, unknown>, shape: ObjectShape) => ObjectValue;
}
export type DeclType = ScalarDecl | DynDecl | ListDecl | MapDecl | ObjectDecl;

const FIXED: SizeBound = { max: 1, declared: true };
const identity = (v: unknown): unknown => v;
const unboundedString = (keyword: BoundKeyword | undefined, max?: number): SizeBound =>
  max === undefined ? { max: MAX_REQUEST_SIZE_BYTES - 2, keyword, declared: false }
    : { max: Math.max(0, max), keyword, declared: true };

function toInt(raw: unknown): unknown {
  return typeof raw === 'number' && Number.isInteger(raw) ? BigInt(raw) : raw;
}
function toDouble(raw: unknown): unknown {
  return typeof raw === 'bigint' ? Number(raw) : raw;
}
function toBytes(raw: unknown): unknown {
  return typeof raw === 'string' ? new Uint8Array(Buffer.from(raw, 'base64')) : raw;
}
function toTimestamp(raw: unknown): unknown {
  return typeof raw === 'string' ? parseTimestamp(raw) ?? raw : raw;
}
function toDuration(raw: unknown): unknown {
  return typeof raw === 'string' ? parseDuration(raw) ?? raw : raw;
}

/** A dynamic declaration: values keep whatever type their JSON has. */
export function dynDecl(path: string, size: SizeBound = unboundedString(undefined)): DynDecl {
  return { kind: 'dyn', path, minSize: 1, size, celType: 'dyn', convert: fromJson };
}

/** A declaration of a scalar expression type that is not derived from a schema. */
export function scalarDecl(celType: string, path: string): ScalarDecl {
  return { kind: 'scalar', path, minSize: 1, size: FIXED, celType, convert: identity };
}

/** Adds the fields every resource root has: apiVersion, kind and metadata.name/generateName. */
function withTypeAndObjectMeta(schema: Schema): Schema {
  const str: Schema = { type: 'string' };
  return {
    ...schema,
    type: 'object',
    properties: {
      ...schema.properties,
      apiVersion: str,
      kind: str,
      metadata: { type: 'object', properties: { name: str, generateName: str } },
    },
  };
}

class DeclBuilder {
  private readonly names = new Set<string>();

  /** escape: property names that are reserved words are spelled `__word__`, as custom resources have them. */
  constructor(private readonly escape = true) {}

  build(schema: Schema, path: string, typePath: string, resourceRoot: boolean): DeclType {
    if (schema[INT_OR_STRING] === true) return dynDecl(path, unboundedString('maxLength', schema.maxLength));
    if (schema[PRESERVE_UNKNOWN_FIELDS] === true) return dynDecl(path);
    const s = resourceRoot || schema[EMBEDDED_RESOURCE] === true ? withTypeAndObjectMeta(schema) : schema;
    switch (s.type) {
      case 'array': return this.list(s, path, typePath);
      case 'object': return s.additionalProperties ? this.map(s, path, typePath) : this.object(s, path, typePath);
      case 'string': return this.string(s, path);
      case 'integer': return { kind: 'scalar', path, minSize: 1, size: FIXED, celType: 'int', convert: toInt };
      case 'number': return { kind: 'scalar', path, minSize: 1, size: FIXED, celType: 'double', convert: toDouble };
      case 'boolean': return { kind: 'scalar', path, minSize: 4, size: FIXED, celType: 'bool', convert: identity };
      default: return dynDecl(path);
    }
  }

  private string(s: Schema, path: string): ScalarDecl {
    switch (s.format) {
      case 'byte':
        return { kind: 'scalar', path, minSize: 2, size: unboundedString('maxLength', s.maxLength), celType: 'bytes', convert: toBytes };
      case 'date': case 'date-time':
        return { kind: 'scalar', path, minSize: 12, size: FIXED, celType: 'google.protobuf.Timestamp', convert: toTimestamp };
      case 'duration':
        return { kind: 'scalar', path, minSize: 4, size: FIXED, celType: 'google.protobuf.Duration', convert: toDuration };
      default:
        return { kind: 'scalar', path, minSize: 2, size: unboundedString('maxLength', s.maxLength), celType: 'string', convert: identity };
    }
  }

  private list(s: Schema, path: string, typePath: string): DeclType {
    const element = s.items ? this.build(s.items, `${path}[*]`, `${typePath}.items`, false) : dynDecl(`${path}[*]`);
    const convert = element.convert === identity ? identity
      : (raw: unknown) => (Array.isArray(raw) ? raw.map(element.convert) : raw);
    const size: SizeBound = s.maxItems !== undefined
      ? { max: Math.max(0, s.maxItems), keyword: 'maxItems', declared: true }
      : { max: Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (element.minSize + 1)), keyword: 'maxItems', declared: false };
    return { kind: 'list', path, minSize: 2, size, celType: `list<${element.celType}>`, element, convert };
  }

  private map(s: Schema, path: string, typePath: string): DeclType {
    const valueSchema = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
    const value = valueSchema ? this.build(valueSchema, `${path}[*]`, `${typePath}.values`, false) : dynDecl(`${path}[*]`);
    const convert = (raw: unknown): unknown => {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
      const map = new Map<string, unknown>();
      for (const [k, v] of Object.entries(raw)) if (v !== null) map.set(k, value.convert(v));
      return map;
    };
    const size: SizeBound = s.maxProperties !== undefined
      ? { max: Math.max(0, s.maxProperties), keyword: 'maxProperties', declared: true }
      : { max: Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (value.minSize + 6)), keyword: 'maxProperties', declared: false };
    return { kind: 'map', path, minSize: 2, size, celType: `map<string, ${value.celType}>`, value, convert };
  }

  private object(s: Schema, path: string, typePath: string): ObjectDecl {
    const typeName = this.uniqueName(typePath);
    const fields = new Map<string, { property: string; convert: (raw: unknown) => unknown }>();
    const fieldTypes = new Map<string, DeclType>();
    const required = new Set(s.required ?? []);
    let minSize = 2;
    for (const [property, propSchema] of Object.entries(s.properties ?? {})) {
      const name = this.escape ? escapeProperty(property) : property;
      if (name === undefined) continue;
      const decl = this.build(propSchema, `${path}.${property}`, `${typePath}.${name}`, false);
      fields.set(name, { property, convert: decl.convert });
      fieldTypes.set(name, decl);
      if (required.has(property) && propSchema.default === undefined) minSize += property.length + decl.minSize + 4;
    }
    const ctor = class extends ObjectValue {};
    const decl: ObjectDecl = {
      kind: 'object', path, minSize, size: FIXED, celType: typeName, typeName, fields, fieldTypes, ctor,
      convert: (raw) => (raw !== null && typeof raw === 'object' && !Array.isArray(raw)
        ? new ctor(raw as Record<string, unknown>, decl) : raw),
    };
    return decl;
  }

  private uniqueName(typePath: string): string {
    let name = typePath;
    for (let i = 2; this.names.has(name); i++) name = `${typePath}${i}`;
    this.names.add(name);
    return name;
  }
}

/**
 * The declaration of a variable typed by schema. typeName names the root object
 * type (nested objects are named after their path below it); resourceRoot adds
 * apiVersion, kind and metadata as every resource has them. Fixed types of the
 * server's own (a SubjectAccessReview) keep their field names unescaped, as upstream's do.
 */
export function declFromSchema(schema: Schema, opts: { path: string; typeName: string; resourceRoot?: boolean; escape?: boolean }): DeclType {
  return new DeclBuilder(opts.escape ?? true).build(schema, opts.path, opts.typeName, opts.resourceRoot ?? false);
}

/** Every object declaration in a declaration tree, children first. */
export function objectDecls(decl: DeclType, out: ObjectDecl[] = []): ObjectDecl[] {
  switch (decl.kind) {
    case 'list': objectDecls(decl.element, out); break;
    case 'map': objectDecls(decl.value, out); break;
    case 'object':
      for (const field of decl.fieldTypes.values()) objectDecls(field, out);
      out.push(decl);
      break;
  }
  return out;
}

/** The smallest JSON serialization of a value of the schema: bounds how many such values a request holds. */
export function minSerializedSize(schema: Schema): number {
  return new DeclBuilder().build(schema, 'self', 'self', false).minSize;
}
