// A JSON path of properties (`.spec.replicas`) and quoted keys (`['key']`)
// below a schema node, as validation rules' `fieldPath` and selectable fields
// name a field; reported as a field path (`spec.replicas`, `labels[app]`).
import { isObject } from '../registry/values.js';
import type { Schema } from './structural.js';

const TOKEN = /'(?:[^'\\]|\\.)*'|[.[\]]|[^.[\]']+/g;

export type FieldPathResult = { path: string; schema: Schema; root: string } | { error: string };

/** Resolves a JSON path against a schema; `arrays` false refuses the `['key']` notation. */
export function parseFieldPath(jsonPath: string, schema: Schema, arrays = true): FieldPathResult {
  const tokens = jsonPath.match(TOKEN) ?? [];
  let s: Schema = schema;
  let path = '';
  let root = '';
  for (let i = 0; i < tokens.length; i++) {
    let name: string;
    if (tokens[i] === '[') {
      if (!arrays) return { error: 'array notation is not allowed' };
      const quoted = tokens[++i];
      if (quoted === undefined) return { error: 'unexpected end of JSON path' };
      if (quoted.length < 2 || !quoted.startsWith("'") || !quoted.endsWith("'")) return { error: `expected single quoted string but got ${quoted}` };
      name = quoted.slice(1, -1).replace(/\\(.)/g, '$1');
      if (tokens[i + 1] === undefined) return { error: 'unexpected end of JSON path' };
      if (tokens[++i] !== ']') return { error: `expected ] but got ${tokens[i]}` };
    } else if (tokens[i] === '.') {
      name = tokens[++i];
      if (name === undefined) return { error: 'unexpected end of JSON path' };
    } else {
      return { error: `expected [ or . but got: ${tokens[i]}` };
    }
    const step = next(s, name);
    if (!step) return { error: 'does not refer to a valid field' };
    if (!path) root = name;
    path = step.named ? (path ? `${path}.${name}` : name) : `${path}[${name}]`;
    s = step.schema;
  }
  return { path, schema: s, root };
}

/** The field path a rule's fieldPath names, or undefined when it names no field of the schema. */
export function resolveFieldPath(jsonPath: string, schema: Schema): string | undefined {
  const r = parseFieldPath(jsonPath, schema);
  return 'error' in r || !r.path ? undefined : r.path;
}

function next(s: Schema, name: string): { schema: Schema; named: boolean } | undefined {
  if (isObject(s.properties)) return s.properties[name] ? { schema: s.properties[name], named: true } : undefined;
  if (isObject(s.additionalProperties)) return { schema: s.additionalProperties as Schema, named: false };
  return undefined;
}
