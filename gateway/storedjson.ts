// The API JSON of a stored value, made from the stored bytes themselves. Stored values
// are JSON.stringify's output without the resourceVersion (encodeStored), which decoding
// puts back at the end of the metadata: splicing it in there gives the very text that
// decoding and encoding again would, at a fraction of the cost. Text not in that form
// (spaces, escapes or numbers JSON.stringify would not write, no metadata object, a
// resourceVersion already there) is decoded and encoded instead.
import { isAscii } from 'node:buffer';
import { decodeValue } from '../internal/storage/objects.js';
import { goEscape } from './negotiation.js';

const QUOTE = 0x22;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;
/** The characters JSON.stringify writes after a backslash, `u` aside. */
const SHORT_ESCAPES = '"\\bfnrt';
/** Control characters JSON.stringify writes with a short escape rather than `\u`. */
const SHORT_ESCAPED = new Set([0x08, 0x09, 0x0a, 0x0c, 0x0d]);
const NUMBER = /-?[0-9][-+.0-9eE]*/y;
const LITERAL = /true|false|null/y;

/** The object's API JSON, with the platform encoder's escapes, as a get writes it. */
export function storedJson(value: Buffer, revision: number): string {
  // Scanned one char a byte, so that indices are byte offsets: the text itself when it is all ASCII. The bytes of
  // other characters are all above ASCII, so they are never read as quotes, brackets or backslashes.
  const ascii = isAscii(value);
  const bytes = value.toString('latin1');
  const at = metadataEnd(bytes);
  if (at < 0) return goEscape(JSON.stringify(decodeValue(value, revision)));
  const field = `${bytes.charCodeAt(at - 1) === OPEN ? '' : ','}"resourceVersion":"${revision}"`;
  return goEscape(ascii ? bytes.slice(0, at) + field + bytes.slice(at) : value.toString('utf8', 0, at) + field + value.toString('utf8', at));
}

/**
 * Where the string opening at `i` ends (its closing quote), or -1 when JSON.stringify would not have written it so.
 * `bytes` is the stored text one char a byte. `escapes` holds the position of the next
 * backslash at or after `i` (or -1), kept between calls so that the text is searched for them once.
 */
function stringEnd(bytes: string, i: number, escapes: { next: number }): number {
  for (;;) {
    const quote = bytes.indexOf('"', i + 1);
    if (escapes.next >= 0 && escapes.next <= i) escapes.next = bytes.indexOf('\\', i + 1);
    const backslash = escapes.next;
    if (quote < 0 || backslash < 0 || quote < backslash) return quote;
    const next = bytes[backslash + 1];
    if (SHORT_ESCAPES.includes(next)) {
      i = backslash + 1;
      continue;
    }
    // `\u` is written for the other control characters only, in lower-case hex.
    const hex = bytes.slice(backslash + 2, backslash + 6);
    if (next !== 'u' || !/^[0-9a-f]{4}$/.test(hex)) return -1;
    const code = parseInt(hex, 16);
    if (code >= 0x20 || SHORT_ESCAPED.has(code)) return -1;
    i = backslash + 5;
  }
}

/** The end of a number or literal token starting at `i`, or -1 when it is not as JSON.stringify writes it. */
function tokenEnd(bytes: string, i: number): number {
  LITERAL.lastIndex = i;
  if (LITERAL.test(bytes)) return LITERAL.lastIndex;
  NUMBER.lastIndex = i;
  const token = NUMBER.exec(bytes)?.[0];
  return token !== undefined && String(Number(token)) === token ? i + token.length : -1;
}

/** The index of the closing brace of the top-level metadata object, or -1 when the text is not in stored form. */
function metadataEnd(bytes: string): number {
  if (bytes.charCodeAt(0) !== OPEN) return -1;
  let depth = 0;
  let metadata: 'before' | 'next' | 'in' | 'after' = 'before';
  let end = -1;
  const escapes = { next: bytes.indexOf('\\') };
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes.charCodeAt(i);
    if (c === QUOTE) {
      const close = stringEnd(bytes, i, escapes);
      if (close < 0) return -1;
      if (bytes.charCodeAt(close + 1) === COLON) {
        if (depth === 1 && close - i === 9 && bytes.startsWith('metadata', i + 1)) {
          if (metadata !== 'before' || bytes.charCodeAt(close + 2) !== OPEN) return -1;
          metadata = 'next';
        } else if (depth === 2 && metadata === 'in' && close - i === 16 && bytes.startsWith('resourceVersion', i + 1)) return -1;
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
      if (depth === 0) return i === bytes.length - 1 && metadata === 'after' ? end : -1;
    } else if (c !== COLON && c !== COMMA) {
      const after = tokenEnd(bytes, i);
      if (after < 0) return -1;
      i = after - 1;
    }
  }
  return -1;
}
