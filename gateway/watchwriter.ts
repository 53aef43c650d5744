// A watch's events go to its connection as ready-made HTTP/1.1 chunks. The watchers
// given the same events share one framed buffer, and each connection gets one write of
// one buffer, which TLS encrypts as it is: a response's own write hands the socket the
// chunk's size line, the data and the closing CRLF apart, and TLS first allocates a
// buffer and copies them into it, for every watcher at every flush.
import type { ServerResponse } from 'node:http';

const CRLF = Buffer.from('\r\n');

/** The last events joined for a write, raw and framed as a chunk (made when first asked). */
let last: { parts: Buffer[]; joined: Buffer; chunk?: Buffer } | undefined;

function shared(parts: Buffer[]): { joined: Buffer; chunk?: Buffer } {
  if (last && samePieces(last.parts, parts)) return last;
  last = { parts, joined: parts.length === 1 ? parts[0] : Buffer.concat(parts) };
  return last;
}

/** Whether two lists hold the same buffers in order (a loop: it runs per watcher at each flush). */
function samePieces(a: Buffer[], b: Buffer[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether the response's body goes straight to its connection as chunks: its headers are out, it is chunked, and
 * it owns the connection (a response waiting behind another on the connection has no socket yet). */
function direct(res: ServerResponse): boolean {
  return res.socket !== null && res.chunkedEncoding && res.headersSent && !res.writableEnded;
}

/** Writes the events, in one piece, to the response. */
export function writeEvents(res: ServerResponse, parts: Buffer[]): void {
  const s = shared(parts);
  if (!direct(res)) {
    res.write(s.joined);
    return;
  }
  s.chunk ??= Buffer.concat([Buffer.from(`${s.joined.length.toString(16)}\r\n`, 'latin1'), s.joined, CRLF]);
  res.socket!.write(s.chunk);
}

/** Whether the client has not read what it was sent: written through the response or straight to its connection. */
export function needsDrain(res: ServerResponse): boolean {
  return res.writableNeedDrain || (res.socket?.writableNeedDrain ?? false);
}

/** Calls fn whenever what was sent drains, through the response or its connection; returns the way to stop. */
export function onDrain(res: ServerResponse, fn: () => void): () => void {
  const socket = res.socket;
  res.on('drain', fn);
  socket?.on('drain', fn);
  return () => { res.off('drain', fn); socket?.off('drain', fn); };
}
