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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const isJsonSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The index of the quote that ends the JSON string opened at `start`. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i;
    if (c === BACKSLASH) i++;
  }
  return text.length;
}

interface Frame { keys?: Set<string>; path: string; index: number }

/** Paths (`spec.foo`) of keys that appear twice in one JSON object, from one scan of (well-formed) JSON text. */
export function duplicateJsonFields(text: string): string[] {
  const found: string[] = [];
  const frames: Frame[] = [];
  let pendingKey = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      const top = frames[frames.length - 1];
      let j = end + 1;
      while (j < text.length && isJsonSpace(text.charCodeAt(j))) j++;
      if (top?.keys && text.charCodeAt(j) === 0x3a) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? JSON.parse(`"${raw}"`) as string : raw;
        if (top.keys.has(key)) found.push(top.path ? `${top.path}.${key}` : key);
        top.keys.add(key);
        pendingKey = key;
      }
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      const top = frames[frames.length - 1];
      const path = !top ? '' : top.keys ? (top.path ? `${top.path}.${pendingKey}` : pendingKey) : `${top.path}[${top.index}]`;
      frames.push(c === 0x7b ? { keys: new Set(), path, index: 0 } : { path, index: 0 });
    } else if (c === 0x7d || c === 0x5d) {
      frames.pop();
    } else if (c === 0x2c) {
      const top = frames[frames.length - 1];
      if (top && !top.keys) top.index++;
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

/** A schema walk's unknown-field path (`.spec.foo`) as requests name it (`spec.foo`). */
export const fieldPath = (path: string): string => path.replace(/^\./, '');

/** The fields of a decoded body the kind's schema does not know, as `spec.foo`. */
export function unknownFields(def: KindDef, obj: ApiObject): string[] {
  const schema = def.schema();
  if (!schema) return [];
  return checkSchema(structuredClone(obj), schema, { prune: false, required: false }).unknownFields.map(fieldPath);
}

/** Applies the directive: nothing, one Warning header per problem, or a 400 listing them. */
export function enforceFieldValidation(ctx: Koa.Context, directive: FieldValidation, unknown: string[], duplicates: string[]): void {
  if (directive === 'Ignore') return;
  const problems = [...unknown.map((f) => `unknown field "${f}"`), ...duplicates.map((f) => `duplicate field "${f}"`)];
  if (problems.length === 0) return;
  if (directive === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
  for (const p of problems) addWarning(ctx, p);
}
