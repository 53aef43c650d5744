// Response headers that carry request text (an unknown field's name, a webhook's
// message): the text is made safe for the wire first, as the platform does.
import type Koa from 'koa';

/** C0 controls, DEL and C1 controls: never written into a header. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** Warnings of one response, in runes, before each is cut short; past that they are dropped, as upstream's recorder. */
const WARNINGS_TOTAL_RUNES = 4096;
const WARNING_ITEM_RUNES = 256;

/**
 * A header value from any text: control characters become U+FFFD and the text
 * goes out as UTF-8 bytes, as upstream writes it. Node accepts only Latin-1
 * characters in a header and writes each as one byte (when the body is bytes,
 * see writeBody), so each UTF-8 byte is handed over as one Latin-1 character.
 */
export function headerValue(text: string): string {
  return Buffer.from(text.replace(CONTROL, '\ufffd'), 'utf8').toString('latin1');
}

/** `299 - "<text>"`: a quoted-string with `"` and `\` escaped (RFC 7234 warn-text). */
export function warningValue(text: string): string {
  return headerValue(`299 - "${text.replace(/["\\]/g, (c) => `\\${c}`)}"`);
}

const runeCount = (text: string) => [...text].length;

/** Adds a `Warning` header once per distinct text; when the warnings of a response grow large, each is cut short, then dropped. */
export function addWarning(ctx: Koa.Context, text: string): void {
  const sent: { texts: Set<string>; runes: number } = (ctx.state.warnings ??= { texts: new Set(), runes: 0 });
  if (!text || sent.texts.has(text)) return;
  let item = text;
  if (sent.runes + runeCount(item) > WARNINGS_TOTAL_RUNES) item = [...item].slice(0, WARNING_ITEM_RUNES).join('');
  if (sent.runes + runeCount(item) > WARNINGS_TOTAL_RUNES) return;
  sent.texts.add(text);
  sent.runes += runeCount(item);
  ctx.append('Warning', warningValue(item));
}
