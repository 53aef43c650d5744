// The API JSON of a stored value, made from the stored text itself. Stored values are
// JSON.stringify's output without the resourceVersion (encodeStored), which decoding
// puts back at the end of the metadata: splicing it in there gives the very text that
// decoding and encoding again would, at a fraction of the cost. Text not in that form
// (spaces, escapes or numbers JSON.stringify would not write, no metadata object, a
// resourceVersion already there) is decoded and encoded instead.
import { decodeValue } from '../internal/storage/objects.js';
import { goEscape } from './negotiation.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;
/** The characters JSON.stringify writes after a backslash, `u` aside. */
const SHORT_ESCAPES = new Set([...'"\\bfnrt'].map((c) => c.charCodeAt(0)));
/** Control characters JSON.stringify writes with a short escape rather than `\u`. */
const SHORT_ESCAPED = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);
const NUMBER_CHAR = /[-+.0-9eE]/;

/** The stored bytes and revision a write's answer was decoded from, while the answer is about. */
const storedForms = new WeakMap<object, { value: Buffer; revision: number }>();

/** Notes that `obj` is `value` decoded at `revision`, unchanged: its JSON can be spliced rather than encoded. */
export function keepStoredForm(obj: object, value: Buffer, revision: number): void {
  storedForms.set(obj, { value, revision });
}

/** The API JSON of an object decoded from a stored form and kept so (see keepStoredForm), else undefined. */
export function keptJson(obj: object): string | undefined {
  const form = storedForms.get(obj);
  return form && storedJson(form.value, form.revision);
}

/** The object's API JSON, with the platform encoder's escapes, as a get writes it. */
export function storedJson(value: Buffer, revision: number): string {
  const text = value.toString('utf8');
  const at = metadataEnd(text);
  if (at < 0) return goEscape(JSON.stringify(decodeValue(value, revision)));
  const comma = text.charCodeAt(at - 1) === OPEN ? '' : ',';
  return goEscape(`${text.slice(0, at)}${comma}"resourceVersion":"${revision}"${text.slice(at)}`);
}

/** Where the string opening at `i` ends (its closing quote), or -1 when JSON.stringify would not have written it so. */
function stringEnd(text: string, i: number): number {
  for (i++; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i;
    if (c < 0x20) return -1;
    if (c !== BACKSLASH) continue;
    const next = text.charCodeAt(++i);
    if (SHORT_ESCAPES.has(next)) continue;
    // `\u` is written for the other control characters only, in lower-case hex.
    const code = parseInt(text.slice(i + 1, i + 5), 16);
    if (next !== 0x75 || !(code < 0x20) || SHORT_ESCAPED.has(code) || text.slice(i + 1, i + 5) !== code.toString(16).padStart(4, '0')) return -1;
    i += 4;
  }
  return -1;
}

/** The end of a number or literal token starting at `i`, or -1 when it is not as JSON.stringify writes it. */
function tokenEnd(text: string, i: number): number {
  for (const literal of ['true', 'false', 'null']) if (text.startsWith(literal, i)) return i + literal.length;
  let end = i;
  while (end < text.length && NUMBER_CHAR.test(text[end])) end++;
  const token = text.slice(i, end);
  return end > i && String(Number(token)) === token ? end : -1;
}

/** The index of the closing brace of the top-level metadata object, or -1 when the text is not in stored form. */
function metadataEnd(text: string): number {
  if (text.charCodeAt(0) !== OPEN) return -1;
  let depth = 0;
  let metadata: 'before' | 'next' | 'in' | 'after' = 'before';
  let end = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const close = stringEnd(text, i);
      if (close < 0) return -1;
      if (text.charCodeAt(close + 1) === COLON) {
        const key = close - i === 9 || close - i === 16 ? text.slice(i + 1, close) : '';
        if (depth === 1 && key === 'metadata') {
          if (metadata !== 'before' || text.charCodeAt(close + 2) !== OPEN) return -1;
          metadata = 'next';
        } else if (depth === 2 && metadata === 'in' && key === 'resourceVersion') return -1;
      }
      i = close;
    } else if (c === OPEN || c === OPEN_LIST) {
      depth++;
      if (metadata === 'next') metadata = 'in';
    } else if (c === CLOSE || c === CLOSE_LIST) {
      depth--;
      if (depth === 1 && metadata === 'in') {
        metadata = 'after';
        end = i;
      }
      if (depth === 0) return i === text.length - 1 && metadata === 'after' ? end : -1;
    } else if (c !== COLON && c !== COMMA) {
      const after = tokenEnd(text, i);
      if (after < 0) return -1;
      i = after - 1;
    }
  }
  return -1;
}
