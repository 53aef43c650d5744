// YAML request bodies within limits: nesting is refused while the text is
// still being parsed (before the recursive composer runs), aliases are
// counted, and what they expand to is bounded, so no small document becomes
// a huge value ("billion laughs").
import { CST, Composer, Lexer, Parser, type Document, type DocumentOptions, type ParseOptions } from 'yaml';
import { MAX_NESTING_DEPTH, tooDeep, valueTooDeep } from './depth.js';
import { badRequest } from './status.js';

/** The most alias nodes one document may hold (resolving each scans the document). */
export const MAX_YAML_ALIASES = 1000;
/** Values and collections aliases may add to a document beyond its own, or a tenth of its size when larger. */
export const MAX_ALIAS_EXPANSION = 400_000;

export type YamlOptions = ParseOptions & DocumentOptions;

const excessiveAliasing = () => badRequest('error converting YAML to JSON: yaml: document contains excessive aliasing');

/** Parses one document, refusing nesting beyond the limit and excessive aliasing; syntax errors stay in `errors`. */
export function parseYamlDocument(text: string, options: YamlOptions = {}): { doc: Document.Parsed; aliases: number } {
  const parser = new Parser();
  const tokens: CST.Token[] = [];
  let aliases = 0;
  for (const lexeme of new Lexer().lex(text)) {
    if (CST.tokenType(lexeme) === 'alias' && ++aliases > MAX_YAML_ALIASES) throw excessiveAliasing();
    for (const token of parser.next(lexeme)) tokens.push(token);
    // The parser's stack holds the document and each collection still open (plus at most a scalar).
    if (parser.stack.length > MAX_NESTING_DEPTH + 2) throw tooDeep();
  }
  for (const token of parser.end()) tokens.push(token);
  const docs = [...new Composer(options).compose(tokens, true, text.length)];
  const [doc, ...more] = docs;
  if (more.length) throw badRequest('the request body could not be decoded: Source contains multiple documents');
  return { doc, aliases };
}

/** The document's value; with aliases, bounded in depth and in what the aliases add. */
export function yamlValue(doc: Document.Parsed, aliases: number): unknown {
  const value = doc.toJS({ maxAliasCount: aliases ? 100 : -1 });
  if (aliases === 0) return value;
  if (valueTooDeep(value)) throw tooDeep();
  const { distinct, expanded } = countNodes(value);
  if (expanded - distinct > Math.max(MAX_ALIAS_EXPANSION, distinct / 10)) throw excessiveAliasing();
  return value;
}

/** Objects, lists and scalars of a value whose parts may be shared: counted once (`distinct`) and as written out (`expanded`). */
function countNodes(value: unknown): { distinct: number; expanded: number } {
  const sizes = new Map<object, number>();
  const stack: Array<[unknown, boolean]> = [[value, false]];
  let distinct = 0;
  const sizeOf = (v: unknown) => (typeof v === 'object' && v !== null ? sizes.get(v) ?? 0 : 1);
  while (stack.length) {
    const [v, childrenDone] = stack.pop()!;
    if (typeof v !== 'object' || v === null) {
      if (!childrenDone) distinct++;
      continue;
    }
    if (childrenDone) {
      sizes.set(v, Object.values(v).reduce((n: number, c) => n + sizeOf(c), 1));
      continue;
    }
    if (sizes.has(v)) continue;
    distinct++;
    sizes.set(v, 0);
    stack.push([v, true]);
    for (const child of Object.values(v)) stack.push([child, false]);
  }
  return { distinct, expanded: sizeOf(value) };
}

/** Parses one YAML document into its value, within the limits; 400 for errors. */
export function parseYaml(text: string, what = 'YAML'): unknown {
  const { doc, aliases } = parseYamlDocument(text);
  if (doc.errors.length) throw badRequest(`error decoding ${what}: ${doc.errors[0].message}`);
  try {
    return yamlValue(doc, aliases);
  } catch (err) {
    if (err instanceof ReferenceError) throw badRequest(`error decoding ${what}: ${err.message}`);
    throw err;
  }
}
