// The API JSON of a stored value, made from the stored bytes themselves. Stored values
// are JSON.stringify's output without the resourceVersion (encodeStored), which decoding
// puts back at the end of the metadata: splicing it in there gives the very text that
// decoding and encoding again would, at a fraction of the cost. Text not in that form
// (spaces, escapes or numbers JSON.stringify would not write, no metadata object, a
// resourceVersion already there) is decoded and encoded instead.
import { isAscii } from 'node:buffer';
import { decodeValue } from '../internal/storage/objects.js';
import type { KeyValue } from '../internal/storage/client.js';
import { goEscape } from './negotiation.js';
import { turnMap } from './turnmap.js';

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

/** An object's API JSON, and where its metadata object lies in it (known when the text was in stored form). The
 * place is found when first asked: the cache keeps only the text, a metadata watch asks for the place too. */
export class StoredText {
  private span?: { start: number; end: number } | null;

  constructor(readonly json: string, private readonly locate?: () => { start: number; end: number }) {}

  get metadata(): { start: number; end: number } | undefined {
    if (this.span === undefined) this.span = this.locate?.() ?? null;
    return this.span ?? undefined;
  }
}

/** The object's API JSON, with the platform encoder's escapes, as a get writes it. */
export function storedJson(value: Buffer, revision: number): string {
  return storedText(value, revision).json;
}

/** storedJson, with where the metadata object is in it. */
export function storedText(value: Buffer, revision: number): StoredText {
  // Scanned one char a byte, so that indices are byte offsets: the text itself when it is all ASCII. The bytes of
  // other characters are all above ASCII, so they are never read as quotes, brackets or backslashes.
  const ascii = isAscii(value);
  const bytes = value.toString('latin1');
  const span = metadataSpan(bytes);
  if (!span) return new StoredText(goEscape(JSON.stringify(decodeValue(value, revision))));
  const text = (from: number, to?: number): string => (ascii ? bytes.slice(from, to) : value.toString('utf8', from, to));
  const field = `${bytes.charCodeAt(span.end - 1) === OPEN ? '' : ','}"resourceVersion":"${revision}"`;
  const spliced = text(0, span.end) + field + text(span.end);
  const json = goEscape(spliced);
  // Escapes lengthen the text: unchanged, it is the stored text with the field inserted. Otherwise the metadata's
  // place is that of the escaped text before it (the escapes are of single characters).
  const unchanged = ascii && json.length === spliced.length;
  return new StoredText(json, () => ({
    start: unchanged ? span.start : goEscape(text(0, span.start)).length,
    end: (unchanged ? span.end : goEscape(text(0, span.end)).length) + field.length + 1,
  }));
}

/** The texts of the values of the changes the hub is handing out in this turn: the cache and every watch of a
 * change in a JSON form share one. */
const textsOfTurn = turnMap<KeyValue, { text: StoredText; revision: number }>();

/** storedText of a changed value, made once for all who ask in the same turn. */
export function sharedStoredText(kv: KeyValue, revision: number): StoredText {
  const texts = textsOfTurn();
  let shared = texts.get(kv);
  if (shared?.revision !== revision) texts.set(kv, (shared = { text: storedText(kv.value, revision), revision }));
  return shared.text;
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

/** Where the top-level metadata object opens and closes (its braces), or undefined when the text is not in stored form. */
function metadataSpan(bytes: string): { start: number; end: number } | undefined {
  if (bytes.charCodeAt(0) !== OPEN) return undefined;
  let depth = 0;
  let metadata: 'before' | 'next' | 'in' | 'after' = 'before';
  let start = -1;
  let end = -1;
  const escapes = { next: bytes.indexOf('\\') };
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes.charCodeAt(i);
    if (c === QUOTE) {
      const close = stringEnd(bytes, i, escapes);
      if (close < 0) return undefined;
      if (bytes.charCodeAt(close + 1) === COLON) {
        if (depth === 1 && close - i === 9 && bytes.startsWith('metadata', i + 1)) {
          if (metadata !== 'before' || bytes.charCodeAt(close + 2) !== OPEN) return undefined;
          metadata = 'next';
        } else if (depth === 2 && metadata === 'in' && close - i === 16 && bytes.startsWith('resourceVersion', i + 1)) return undefined;
      }
      i = close;
    } else if (c === OPEN || c === OPEN_LIST) {
      depth++;
      if (metadata === 'next') {
        metadata = 'in';
        start = i;
      }
    } else if (c === CLOSE || c === CLOSE_LIST) {
      depth--;
      if (depth === 1 && metadata === 'in') {
        metadata = 'after';
        end = i;
      }
      if (depth === 0) return i === bytes.length - 1 && metadata === 'after' ? { start, end } : undefined;
    } else if (c !== COLON && c !== COMMA) {
      const after = tokenEnd(bytes, i);
      if (after < 0) return undefined;
      i = after - 1;
    }
  }
  return undefined;
}
