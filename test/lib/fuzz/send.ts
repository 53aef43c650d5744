// Sends fuzzed requests over HTTPS and judges each answer: a status line, no 5xx
// but those the protocol defines (503, 504), and a Status body of that code on
// every error, in whatever format the client accepted.
import https from 'node:https';
import YAML from 'yaml';
import { decodeEnvelope } from '../../../internal/apimachinery/protobuf/index.js';
import { decodeCbor } from '../../../gateway/negotiation.js';
import type { FuzzRequest } from './http.js';

export interface Credentials {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

export interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
}

const MAX_ERROR_BODY = 1 << 20;

/** Connections kept open between requests, so that the run measures the server rather than TLS handshakes. */
export function keepAliveAgent(creds: Credentials, sockets: number): https.Agent {
  return new https.Agent({ keepAlive: true, maxSockets: sockets, ca: creds.ca });
}

/**
 * Sends one request; resolves at the headers of a success (a watch never ends), after the body of a
 * failure. A kept-alive connection the server closed while idle is the one error retried, once, on a
 * fresh connection: a reset of a request the server had read fails the same way again there.
 */
export async function send(port: number, creds: Credentials, req: FuzzRequest, timeoutMs: number, agent?: https.Agent): Promise<Answer> {
  try {
    return await sendOnce(port, creds, req, timeoutMs, agent);
  } catch (err) {
    if (!agent || !(err as { reusedSocket?: boolean }).reusedSocket) throw err;
    return sendOnce(port, creds, req, timeoutMs, undefined);
  }
}

function sendOnce(port: number, creds: Credentials, req: FuzzRequest, timeoutMs: number, agent: https.Agent | undefined): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...req.headers };
    if (req.body) headers['Content-Length'] = String(req.body.length);
    // A client certificate and keep-alive go together: the agent keys its connections by certificate.
    const r = https.request({
      host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent: req.anonymous ? false : agent ?? false, ca: creds.ca,
      ...(req.anonymous ? {} : { cert: creds.cert, key: creds.key }), timeout: timeoutMs,
    }, (res) => {
      const status = res.statusCode ?? 0;
      const contentType = String(res.headers['content-type'] ?? '');
      if (status < 400) {
        // A success's body is not judged (a watch would never end): the connection goes with it.
        r.destroy();
        resolve({ status, contentType, body: Buffer.alloc(0) });
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => { size += c.length; if (size <= MAX_ERROR_BODY) chunks.push(c); });
      res.on('end', () => resolve({ status, contentType, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    r.on('timeout', () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    r.on('error', (err) => reject(Object.assign(err, { reusedSocket: r.reusedSocket })));
    r.end(req.body);
  });
}

/** The Status object of an error body, decoded by its Content-Type. */
function decodeStatus(answer: Answer): unknown {
  const type = answer.contentType.split(';')[0].trim();
  if (type.includes('protobuf')) return decodeEnvelope(answer.body);
  if (type === 'application/cbor') return decodeCbor(answer.body);
  if (type === 'application/yaml') return YAML.parse(answer.body.toString('utf8'));
  if (type === 'application/json') return JSON.parse(answer.body.toString('utf8'));
  throw new Error(`an error body of type ${JSON.stringify(answer.contentType)}`);
}

/** What is wrong with an answer, or undefined when it is acceptable. */
export function judge(req: FuzzRequest, answer: Answer): string | undefined {
  const { status } = answer;
  if (status >= 500 && status !== 503 && status !== 504) return `answered ${status}: ${answer.body.toString('utf8').slice(0, 300)}`;
  if (status < 400 || req.method === 'HEAD') return undefined;
  let decoded: any;
  try {
    decoded = decodeStatus(answer);
  } catch (err) {
    return `answered ${status} without a readable Status body (${(err as Error).message}): ${answer.body.toString('utf8').slice(0, 200)}`;
  }
  if (decoded?.kind !== 'Status' || decoded.code !== status) {
    return `answered ${status} with a body that is no Status of that code: ${JSON.stringify(decoded)?.slice(0, 300)}`;
  }
  return undefined;
}

/** Runs tasks with at most `limit` at once, in order of index. */
export async function pool(count: number, limit: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}
