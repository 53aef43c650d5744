// The HTTPS server under the gateway app, and the bounds a request must keep to
// before the app sees it: how long a client may take to send it, and how large
// its request line and headers may be. What breaks them is answered with a Status
// (as far as the connection allows) and the connection is closed.
import https from 'node:https';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { StatusError, badRequest } from '../internal/apimachinery/status.js';
import { encodeJson } from './negotiation.js';

export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
  /** The CAs whose client certificates are asked for; authn decides whether they count. */
  ca: Buffer[];
}

/** Request headers may total this much, as upstream's 1 MiB: an oversized credential is refused as such, not cut off. */
export const MAX_HEADER_BYTES = 1 << 20;
/** The request URL may be this long. Upstream (Go) counts it within the 1 MiB of headers and answers 431
 * beyond; here it has a budget of its own of the same size, and a longer one is answered 414. */
export const MAX_URL_BYTES = 1 << 20;
/** What Node's parser buffers at most: the request line and the headers, each at its limit, and room for framing. */
const MAX_PARSED_BYTES = MAX_URL_BYTES + MAX_HEADER_BYTES + 4096;
/** Upstream's ReadHeaderTimeout: the TLS handshake and the headers must arrive within it. */
const HEADERS_TIMEOUT_MS = 32_000;
/** Upstream's IdleTimeout: a kept-alive connection may wait this long for its next request, so a client asking
 * now and then (a controller's rediscovery every 30 s) keeps its connection rather than a TLS handshake each time. */
const KEEP_ALIVE_MS = 90_000;
/** A body still arriving this long after the request timed out (and was answered 504) ends the connection. */
const BODY_GRACE_MS = 5_000;
/** Node looks for connections past those deadlines every quarter of the shortest one, within these bounds: often
 * enough that a deadline is kept to within a quarter, and no more, since each look wakes an idle server. */
const CONNECTIONS_CHECK_MS = { min: 1_000, max: 10_000 };

export interface ServerOptions {
  /** `--request-timeout` in milliseconds; 0 leaves requests without a deadline. */
  requestTimeoutMs: number;
}

/** An HTTPS server that asks for (but does not require) a client certificate and bounds what clients send. */
export function createHttpsServer(app: Koa, tls: TlsFiles, opts: ServerOptions): https.Server {
  // No request can succeed after its whole timeout, so its headers get no longer than that either.
  const headersTimeout = opts.requestTimeoutMs > 0 ? Math.min(HEADERS_TIMEOUT_MS, opts.requestTimeoutMs) : HEADERS_TIMEOUT_MS;
  const handle = app.callback();
  const server = https.createServer({
    ...tls, requestCert: true, rejectUnauthorized: false, maxHeaderSize: MAX_PARSED_BYTES,
    headersTimeout, requestTimeout: opts.requestTimeoutMs > 0 ? opts.requestTimeoutMs + BODY_GRACE_MS : 0,
    connectionsCheckingInterval: Math.min(CONNECTIONS_CHECK_MS.max, Math.max(CONNECTIONS_CHECK_MS.min, headersTimeout / 4)),
    handshakeTimeout: headersTimeout, keepAliveTimeout: KEEP_ALIVE_MS,
  }, (req, res) => {
    const refused = sizeError(req);
    if (refused) return writeStatus(res, refused);
    return handle(req, res);
  });
  server.on('clientError', answerClientError);
  server.on('checkExpectation', refuseExpectation);
  return server;
}

function sizeError(req: IncomingMessage): StatusError | undefined {
  if ((req.url ?? '').length > MAX_URL_BYTES) {
    return new StatusError(414, 'RequestURITooLong', `the request URL is longer than ${MAX_URL_BYTES} bytes`);
  }
  const headerBytes = req.rawHeaders.reduce((sum, h) => sum + h.length + 2, 0);
  return headerBytes > MAX_HEADER_BYTES ? headersTooLarge() : undefined;
}

const headersTooLarge = () => new StatusError(431, 'RequestHeaderFieldsTooLarge', `the request headers are larger than ${MAX_HEADER_BYTES} bytes`);

function writeStatus(res: ServerResponse, err: StatusError): void {
  res.writeHead(err.code, { 'Content-Type': 'application/json', Connection: 'close' }).end(encodeJson(err.toStatus()));
}

/** An `Expect` other than 100-continue cannot be met: a 417 Status, as every other refusal. */
function refuseExpectation(req: IncomingMessage, res: ServerResponse): void {
  writeStatus(res, new StatusError(417, 'ExpectationFailed', 'the server cannot meet the Expect header of the request: only "100-continue" is supported'));
  req.resume();
}

/** The Status a request Node's parser refused gets; none when the client is gone anyway. */
function parseFailure(err: NodeJS.ErrnoException): StatusError | undefined {
  if (err.code === 'HPE_HEADER_OVERFLOW') return headersTooLarge();
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new StatusError(408, 'Timeout', 'the request was not received within the allotted time');
  if (err.code?.startsWith('HPE_')) return badRequest(`malformed HTTP request: ${err.message}`);
  return undefined;
}

/** Answers a request the parser refused or a client too slow to send one, instead of a bare reset. */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const status = parseFailure(err);
  // A response already under way cannot be replaced; Node keeps it on the socket while it is written.
  const current = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (!status || !socket.writable || current?.headersSent) {
    socket.destroy();
    return;
  }
  const body = encodeJson(status.toStatus());
  // An answer to HEAD carries no body; its length is still the one a GET would get.
  const head = isHead(err);
  socket.end(`HTTP/1.1 ${status.code} ${STATUS_CODES[status.code]}\r\nContent-Type: application/json\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`);
}

/** Whether the request the parser refused is a HEAD, as far as its first bytes tell. */
const isHead = (err: Error & { rawPacket?: Buffer }) => err.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
