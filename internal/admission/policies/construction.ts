// Mutations build objects with the language's message construction:
// `Object{spec: Object.spec{replicas: 1}}` (an apply configuration) and
// `JSONPatch{op: "add", path: "/x", value: 1}`. The expression engine has no
// message types, so each construction is read as the map literal it denotes
// before compiling: field names quoted, each field's value wrapped in `dyn()`
// (a message's fields may differ in type, a map literal's values may not).
// `jsonpatch.escapeKey(k)` becomes the two replacements it stands for. String
// literals are left alone.

/** Type names a mutation may construct. */
const CONSTRUCTED = /^(Object(\.[A-Za-z_][A-Za-z0-9_]*)*|JSONPatch)$/;
const ESCAPE_KEY = 'jsonpatch.escapeKey';
const IDENT_START = /[A-Za-z_]/;
const IDENT = /[A-Za-z0-9_.]/;

/** A construction whose type name does not follow its field path (`Object.spec{selector: Object.spec.wrong{}}`). */
export class ConstructionError extends Error {}

/** The end (exclusive) of the string literal starting at i (quotes, triple quotes, r/b prefixes). */
function stringEnd(text: string, i: number): number {
  let j = i;
  let raw = false;
  while (/[rRbB]/.test(text[j])) { raw ||= /[rR]/.test(text[j]); j++; }
  const quote = text[j];
  const triple = text.startsWith(quote.repeat(3), j);
  const close = triple ? quote.repeat(3) : quote;
  for (j += close.length; j < text.length; j++) {
    if (!raw && text[j] === '\\') { j++; continue; }
    if (text.startsWith(close, j)) return j + close.length;
  }
  return text.length;
}

const isStringStart = (text: string, i: number): boolean => /["']/.test(text[i]) || /^[rRbB]{1,2}["']/.test(text.slice(i, i + 3));

/** An open bracket: a construction's braces (with its type and the field being written), an escapeKey call, or any other. */
type Frame = { kind: 'struct'; type: string; field?: string; valueOpen: boolean } | { kind: 'escape' } | { kind: 'other' };

const nextNonSpace = (text: string, i: number): number => { while (/\s/.test(text[i] ?? '')) i++; return i; };

/** The expression with every construction of a known type rewritten as a map literal; throws ConstructionError. */
export function rewriteConstructions(expression: string): string {
  let out = '';
  const stack: Frame[] = [];
  let expectField = false;
  const top = () => stack.at(-1);
  /** Closes the dyn() around the value of the struct field being written. */
  const closeValue = () => {
    const t = top();
    if (t?.kind === 'struct' && t.valueOpen) { out += ')'; t.valueOpen = false; }
  };
  for (let i = 0; i < expression.length;) {
    const ch = expression[i];
    const startsToken = !IDENT.test(expression[i - 1] ?? '');
    if (startsToken && isStringStart(expression, i)) {
      const end = stringEnd(expression, i);
      out += expression.slice(i, end);
      i = end;
      expectField = false;
      continue;
    }
    if (startsToken && IDENT_START.test(ch)) {
      let end = i;
      while (end < expression.length && IDENT.test(expression[end])) end++;
      const name = expression.slice(i, end);
      const next = nextNonSpace(expression, end);
      const t = top();
      if (expectField && t?.kind === 'struct' && expression[next] === ':') {
        out += `${JSON.stringify(name)}: dyn(`;
        t.field = name;
        t.valueOpen = true;
        i = nextNonSpace(expression, next + 1);
      } else if (CONSTRUCTED.test(name) && expression[next] === '{') {
        if (t?.kind === 'struct' && t.field && name !== `${t.type}.${t.field}` && t.type !== 'JSONPatch') {
          throw new ConstructionError(`type mismatch: field "${t.field}" of ${t.type} constructed as ${name}`);
        }
        out += '{';
        stack.push({ kind: 'struct', type: name, valueOpen: false });
        i = next + 1;
        expectField = true;
        continue;
      } else if (name === ESCAPE_KEY && expression[next] === '(') {
        out += '((';
        stack.push({ kind: 'escape' });
        i = next + 1;
      } else {
        out += name;
        i = end;
      }
      expectField = false;
      continue;
    }
    if (ch === '{' || ch === '(' || ch === '[') stack.push({ kind: 'other' });
    if (ch === '}') closeValue();
    if (ch === ',') closeValue();
    if (ch === ')' && top()?.kind === 'escape') {
      stack.pop();
      out += ").replace('~', '~0').replace('/', '~1'))";
      i++;
      continue;
    }
    if (ch === '}' || ch === ')' || ch === ']') stack.pop();
    expectField = ch === ',' ? top()?.kind === 'struct' : expectField && /\s/.test(ch);
    out += ch;
    i++;
  }
  return out;
}
