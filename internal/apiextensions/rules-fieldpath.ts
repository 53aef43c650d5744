// A validation rule's `fieldPath`: a JSON path of properties (`.spec.replicas`)
// and map keys (`['key']`) below the rule's node, reported as a field path.
import { isObject } from '../registry/values.js';
import type { Schema } from './structural.js';

const TOKEN = /'(?:[^'\\]|\\.)*'|[.[\]]|[^.[\]']+/g;

/** The field path (`spec.replicas`, `labels[app]`) a rule's fieldPath names, or undefined when it names no field of the schema. */
export function resolveFieldPath(jsonPath: string, schema: Schema): string | undefined {
  const tokens = jsonPath.match(TOKEN) ?? [];
  if (tokens.join('') !== jsonPath || tokens.length === 0) return undefined;
  let s: Schema | undefined = schema;
  let out = '';
  for (let i = 0; i < tokens.length; i++) {
    let name: string;
    if (tokens[i] === '.') {
      name = tokens[++i];
      if (name === undefined || name === '.' || name === '[' || name === ']') return undefined;
    } else if (tokens[i] === '[') {
      const quoted = tokens[++i];
      if (!quoted || quoted.length < 2 || !quoted.startsWith("'") || !quoted.endsWith("'") || tokens[++i] !== ']') return undefined;
      name = quoted.slice(1, -1).replace(/\\(.)/g, '$1');
    } else {
      return undefined;
    }
    const step = next(s, name);
    if (!step) return undefined;
    out = step.named ? (out ? `${out}.${name}` : name) : `${out}[${name}]`;
    s = step.schema;
  }
  return out;
}

function next(s: Schema | undefined, name: string): { schema: Schema; named: boolean } | undefined {
  if (!s) return undefined;
  if (s.properties) return s.properties[name] ? { schema: s.properties[name], named: true } : undefined;
  if (isObject(s.additionalProperties)) return { schema: s.additionalProperties as Schema, named: false };
  return undefined;
}
