// The variables an expression may use, with their types. self and oldSelf are
// typed from a schema; claims, user, request and authorizer have fixed types;
// any other name is dynamic. One environment is built per distinct set of
// declarations and shared by every expression compiled against it.
import { createHash } from 'node:crypto';
import { Environment, Optional } from '@marcbachmann/cel-js';
import { AuthorizerValue, type AuthorizerBinding } from './authz.js';
import { registerLibraries } from './library.js';
import {
  type DeclType, type Schema, declFromSchema, dynDecl, objectDecls, PRESERVE_UNKNOWN_FIELDS, scalarDecl,
} from './schema.js';
import { ACCESS_REVIEW_TYPE, AUTHORIZER_TYPE, SELF_TYPE, USER_INFO_TYPE } from './typenames.js';

const STRING: Schema = { type: 'string' };
const STRINGS: Schema = { type: 'array', items: STRING };
const EXTRA: Schema = { type: 'object', additionalProperties: STRINGS };

/** The authenticated user, as user validation rules see it. */
export const USER_INFO_SCHEMA: Schema = {
  type: 'object',
  properties: { username: STRING, uid: STRING, groups: STRINGS, extra: EXTRA },
};

const SELECTOR: Schema = {
  type: 'object',
  properties: {
    rawSelector: STRING,
    requirements: {
      type: 'array',
      items: { type: 'object', properties: { key: STRING, operator: STRING, values: STRINGS } },
    },
  },
};

/** The request an authorizer decides on, as its match conditions see it. */
export const ACCESS_REVIEW_SCHEMA: Schema = {
  type: 'object',
  properties: {
    resourceAttributes: {
      type: 'object',
      properties: {
        namespace: STRING, verb: STRING, group: STRING, version: STRING, resource: STRING,
        subresource: STRING, name: STRING, fieldSelector: SELECTOR, labelSelector: SELECTOR,
      },
    },
    nonResourceAttributes: { type: 'object', properties: { path: STRING, verb: STRING } },
    user: STRING, groups: STRINGS, extra: EXTRA, uid: STRING,
  },
};

const CLAIMS_SCHEMA: Schema = { type: 'object', additionalProperties: { [PRESERVE_UNKNOWN_FIELDS]: true } };

export interface DeclarationOptions {
  /** Types self and oldSelf; without it they are dynamic. */
  readonly schema?: Schema;
  /** self is the root of a resource: apiVersion, kind and metadata are always there. */
  readonly resourceRoot?: boolean;
  /** Names to declare besides self and oldSelf (which a schema declares). */
  readonly variables?: readonly string[];
  /** oldSelf is `optional<self's type>`: a transition rule that also runs when there is no old value. */
  readonly optionalOldSelf?: boolean;
  /** Names among `variables` declared dynamic whatever type the name usually has (admission's `request` is no access review). */
  readonly dynamic?: readonly string[];
  /** Variables typed by a schema of their own, e.g. an admission policy's object (these names take no fixed type). */
  readonly typed?: Readonly<Record<string, Schema>>;
}

export interface Declarations {
  /** Identifies the declarations in caches. */
  readonly key: string;
  readonly env: Environment;
  readonly variables: ReadonlyMap<string, DeclType>;
}

function authorizerDecl(): DeclType {
  return {
    ...scalarDecl(AUTHORIZER_TYPE, 'authorizer'),
    convert: (v) => (v instanceof AuthorizerValue ? v : new AuthorizerValue(v as AuthorizerBinding)),
  };
}

/** oldSelf as an optional of self's type: absent old values are `optional.none()`. */
function optionalDecl(decl: DeclType): DeclType {
  return {
    ...decl, celType: `optional<${decl.celType}>`,
    convert: (v) => (v instanceof Optional ? v : Optional.of(decl.convert(v))),
  } as DeclType;
}

function variableDecls(opts: DeclarationOptions): Map<string, DeclType> {
  const names = new Set([...opts.variables ?? [], ...Object.keys(opts.typed ?? {})]);
  if (opts.schema) names.add('self').add('oldSelf');
  const self = opts.schema
    ? declFromSchema(opts.schema, { path: 'self', typeName: SELF_TYPE, resourceRoot: opts.resourceRoot })
    : undefined;
  const decls = new Map<string, DeclType>();
  // Variables of one schema share one type, so they compare with each other.
  const bySchema = new Map<Schema, DeclType>();
  for (const name of [...names].sort()) {
    const schema = opts.typed?.[name];
    if (schema) {
      if (!bySchema.has(schema)) bySchema.set(schema, declFromSchema(schema, { path: name, typeName: name }));
      decls.set(name, bySchema.get(schema)!);
      continue;
    }
    if (opts.dynamic?.includes(name)) {
      decls.set(name, dynDecl(name));
      continue;
    }
    switch (name) {
      case 'self': decls.set(name, self ?? dynDecl(name)); break;
      case 'oldSelf': decls.set(name, opts.optionalOldSelf ? optionalDecl(self ?? dynDecl(name)) : self ?? dynDecl(name)); break;
      case 'claims': decls.set(name, declFromSchema(CLAIMS_SCHEMA, { path: name, typeName: 'claims' })); break;
      case 'user': decls.set(name, declFromSchema(USER_INFO_SCHEMA, { path: name, typeName: USER_INFO_TYPE })); break;
      case 'request': decls.set(name, declFromSchema(ACCESS_REVIEW_SCHEMA, { path: name, typeName: ACCESS_REVIEW_TYPE, escape: false })); break;
      case 'authorizer': decls.set(name, authorizerDecl()); break;
      default: decls.set(name, dynDecl(name));
    }
  }
  return decls;
}

let base: Environment | undefined;

/** The environment every expression starts from: language options and libraries. */
function baseEnvironment(): Environment {
  if (!base) {
    // Literals are checked for one element type after type checking, where dyn elements may mix.
    base = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false, unlistedVariablesAreDyn: false });
    registerLibraries(base);
  }
  return base;
}

function buildEnvironment(variables: ReadonlyMap<string, DeclType>): Environment {
  const env = baseEnvironment().clone();
  const registered = new Set<string>();
  for (const decl of variables.values()) {
    for (const obj of objectDecls(decl)) {
      if (registered.has(obj.typeName)) continue;
      registered.add(obj.typeName);
      const fields = Object.fromEntries([...obj.fieldTypes].map(([name, t]) => [name, t.celType]));
      env.registerType(obj.typeName, { ctor: obj.ctor, fields, convert: obj.convert });
      env.registerOperator(`${obj.typeName} == ${obj.typeName}`, (a: { equals(b: unknown): boolean }, b: unknown) => a.equals(b));
    }
  }
  for (const [name, decl] of variables) env.registerVariable(name, decl.celType);
  return env;
}

/** JSON with object keys in a fixed order, so equal schemas give equal keys. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const schemaDigests = new WeakMap<Schema, string>();

/** A short digest of a schema's content, remembered per schema object. */
function schemaDigest(schema: Schema | undefined): string {
  if (!schema) return '-';
  let digest = schemaDigests.get(schema);
  if (!digest) {
    digest = createHash('sha256').update(stableJson(schema)).digest('base64url');
    schemaDigests.set(schema, digest);
  }
  return digest;
}

const CACHE_LIMIT = 256;
const cache = new Map<string, Declarations>();

/** The declarations for a schema and variable names, built once and cached. */
export function declare(opts: DeclarationOptions = {}): Declarations {
  const typed = Object.entries(opts.typed ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)).map(([n, s]) => `${n}:${schemaDigest(s)}`).join(',');
  const dynamic = [...new Set(opts.dynamic ?? [])].sort().join(',');
  const key = `${schemaDigest(opts.schema)}/${opts.resourceRoot ? 'root' : ''}${opts.optionalOldSelf ? '?' : ''}/${[...new Set(opts.variables ?? [])].sort().join(',')}/${dynamic}/${typed}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const variables = variableDecls(opts);
  const decls: Declarations = { key, env: buildEnvironment(variables), variables };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, decls);
  return decls;
}
