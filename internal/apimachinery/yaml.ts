// YAML request bodies within limits: nesting is refused while the text is
// still being parsed (before the recursive composer runs), and aliases are
// replaced by what they name only when the document they make stays small,
// so no short text becomes a huge value ("billion laughs").
import { CST, Composer, Lexer, Parser, isAlias, isCollection, isPair, isSeq, visit, type Document, type Node } from 'yaml';
import { MAX_NESTING_DEPTH, tooDeep } from './depth.js';
import { badRequest } from './status.js';

/** Nodes aliases may add to a document beyond its own, or a tenth of its size when that is more. */
export const MAX_ALIAS_EXPANSION = 400_000;

const excessiveAliasing = () => badRequest('error converting YAML to JSON: yaml: document contains excessive aliasing');

/**
 * Parses one document, refusing nesting beyond the limit; syntax errors stay
 * in `errors`. Repeated keys are kept (the last wins) for the caller to find:
 * the library's own check is quadratic.
 */
export function parseYamlDocument(text: string): Document.Parsed {
  const parser = new Parser();
  const tokens: CST.Token[] = [];
  for (const lexeme of new Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) tokens.push(token);
    // The parser's stack holds the document and each collection still open (plus at most a scalar).
    if (parser.stack.length > MAX_NESTING_DEPTH + 2) throw tooDeep();
  }
  for (const token of parser.end()) tokens.push(token);
  const [doc, ...more] = new Composer({ uniqueKeys: false }).compose(tokens, true, text.length);
  if (more.length) throw badRequest('the request body could not be decoded: Source contains multiple documents');
  return doc;
}

/** The document's value, each alias written out as a copy of what it names. */
export function yamlValue(doc: Document.Parsed): unknown {
  if (inlineAliases(doc)) checkExpansion(doc.contents);
  return doc.toJS({ maxAliasCount: -1 });
}

/**
 * Puts the node an alias names (the last one anchored before it) in the
 * alias's place, shared; whether there were any. The library would instead
 * search the document for every alias.
 */
function inlineAliases(doc: Document.Parsed): boolean {
  const anchored = new Map<string, Node>();
  const places: Array<{ parent: unknown; key: number | 'key' | 'value'; node: Node }> = [];
  visit(doc, {
    Node(key, node, path) {
      if (isAlias(node)) {
        const target = anchored.get(node.source);
        if (!target) throw badRequest(`error converting YAML to JSON: yaml: unknown anchor '${node.source}' referenced`);
        if (path.includes(target) || key === null) throw excessiveAliasing();
        places.push({ parent: path[path.length - 1], key, node: target });
      } else if (node.anchor) {
        anchored.set(node.anchor, node);
      }
      return undefined;
    },
  });
  for (const { parent, key, node } of places) {
    if (isPair(parent)) parent[key as 'key' | 'value'] = node;
    else if (isSeq(parent)) parent.items[key as number] = node;
  }
  return places.length > 0;
}

/** Refuses a document whose shared nodes, written out, would nest too deep or add too much. */
function checkExpansion(root: unknown): void {
  const sizes = new Map<object, { size: number; depth: number }>();
  const stack: Array<[unknown, boolean]> = [[root, false]];
  let distinct = 0;
  while (stack.length) {
    const [node, childrenDone] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    const children = childrenOf(node);
    if (childrenDone) {
      let size = 1;
      let depth = 0;
      for (const c of children) {
        const s = typeof c === 'object' && c !== null ? sizes.get(c) : undefined;
        size += s?.size ?? 0;
        depth = Math.max(depth, s?.depth ?? 0);
      }
      sizes.set(node, { size, depth: depth + (isCollection(node) ? 1 : 0) });
      continue;
    }
    if (sizes.has(node)) continue;
    distinct++;
    sizes.set(node, { size: 0, depth: 0 });
    stack.push([node, true]);
    for (const c of children) stack.push([c, false]);
  }
  const total = typeof root === 'object' && root !== null ? sizes.get(root)! : { size: 0, depth: 0 };
  if (total.depth > MAX_NESTING_DEPTH) throw tooDeep();
  if (total.size - distinct > Math.max(MAX_ALIAS_EXPANSION, distinct / 10)) throw excessiveAliasing();
}

/** The nodes directly under a collection or pair. */
function childrenOf(node: object): unknown[] {
  if (isPair(node)) return [node.key, node.value];
  const items = (node as { items?: unknown }).items;
  return Array.isArray(items) ? items : [];
}
