// fieldValidation=Ignore|Warn|Strict: unknown fields (absent from the kind's
// schema) and duplicate fields of a request body are dropped silently, reported
// as one `Warning` header each, or refused with one 400 listing them all.
import type Koa from 'koa';
import { isScalar, visit } from 'yaml';
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { badRequest } from '../internal/apimachinery/status.js';
import { parseYamlDocument, yamlValue } from '../internal/apimachinery/yaml.js';
import { checkValueDepth } from '../internal/apimachinery/depth.js';
import { checkSchema, type KindDef } from '../internal/registry/index.js';
import { addWarning } from './headers.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';
const DIRECTIVES: FieldValidation[] = ['Ignore', 'Warn', 'Strict'];

export function fieldValidationOf(query: URLSearchParams): FieldValidation {
  const value = query.get('fieldValidation') ?? 'Warn';
  if (!(DIRECTIVES as string[]).includes(value)) {
    throw badRequest(`fieldValidation: Unsupported value: "${value}": supported values: "Ignore", "Warn", "Strict"`);
  }
  return value as FieldValidation;
}

/** Paths (`spec.foo`) of keys that appear twice in one JSON object. */
export function duplicateJsonFields(text: string): string[] {
  const found: string[] = [];
  const frames: Array<{ keys: Set<string>; path: string } | { index: number; path: string }> = [];
  let pendingKey: string | undefined;
  const childPath = () => {
    const top = frames.at(-1);
    if (!top) return '';
    if ('keys' in top) return top.path ? `${top.path}.${pendingKey}` : pendingKey ?? '';
    return `${top.path}[${top.index}]`;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const top = frames.at(-1);
      let j = end + 1;
      while (j < text.length && /\s/.test(text[j])) j++;
      if (top && 'keys' in top && text[j] === ':') {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) found.push(top.path ? `${top.path}.${key}` : key);
        top.keys.add(key);
        pendingKey = key;
      }
      i = end;
    } else if (ch === '{' || ch === '[') {
      const path = childPath();
      frames.push(ch === '{' ? { keys: new Set(), path } : { index: 0, path });
    } else if (ch === '}' || ch === ']') {
      frames.pop();
    } else if (ch === ',') {
      const top = frames.at(-1);
      if (top && 'index' in top) top.index++;
    }
  }
  return found;
}

/** Parses YAML keeping the last of repeated keys, and names the repeated ones; `failure` starts the message of a 400. */
export function parseYamlWithDuplicates(text: string, failure = 'the request body could not be decoded'): { value: unknown; duplicates: string[] } {
  const json = asJson(text);
  if (json) return json;
  const doc = parseYamlDocument(text);
  if (doc.errors.length) throw badRequest(`${failure}: ${doc.errors[0].message}`);
  const duplicates: string[] = [];
  visit(doc, {
    Map(_key, node, path) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        if (seen.has(key)) duplicates.push([...yamlPath(path), key].join('.'));
        seen.add(key);
      }
    },
  });
  return { value: yamlValue(doc), duplicates };
}

/**
 * JSON is YAML: a body that is a JSON object (as clients send it) is read by
 * the far faster JSON parser, which does not recurse; anything else is YAML.
 */
function asJson(text: string): { value: unknown; duplicates: string[] } | undefined {
  if (!text.trimStart().startsWith('{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return { value: checkValueDepth(value), duplicates: duplicateJsonFields(text) };
}

function yamlPath(path: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const node of path) {
    if (node && typeof node === 'object' && 'key' in node && isScalar((node as { key: unknown }).key)) {
      out.push(String(((node as { key: { value: unknown } }).key).value));
    }
  }
  return out;
}

/** The fields of a decoded body the kind's schema does not know, as `spec.foo`. */
export function unknownFields(def: KindDef, obj: ApiObject): string[] {
  const schema = def.schema();
  if (!schema) return [];
  return checkSchema(structuredClone(obj), schema, { prune: false, required: false }).unknownFields.map((p) => p.replace(/^\./, ''));
}

/** Applies the directive: nothing, one Warning header per problem, or a 400 listing them. */
export function enforceFieldValidation(ctx: Koa.Context, directive: FieldValidation, unknown: string[], duplicates: string[]): void {
  if (directive === 'Ignore') return;
  const problems = [...unknown.map((f) => `unknown field "${f}"`), ...duplicates.map((f) => `duplicate field "${f}"`)];
  if (problems.length === 0) return;
  if (directive === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
  for (const p of problems) addWarning(ctx, p);
}
