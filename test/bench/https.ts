// Requests to the API as a client makes them: HTTPS on keep-alive connections,
// authenticated with the admin client certificate.
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { pkiPaths } from '../../internal/pki/index.js';

export type Tls = { ca: Buffer; cert: Buffer; key: Buffer };

export function adminTls(dataDir: string): Tls {
  const p = pkiPaths(dataDir);
  return { ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) };
}

export const keepAlive = (tls: Tls, maxSockets: number): https.Agent => new https.Agent({ ...tls, keepAlive: true, maxSockets });

/** One request; resolves with the status once the body is read. A reused socket
 *  the server closed while idle is retried once on a fresh one. */
export function send(agent: https.Agent, port: number, method: string, path: string, body?: string, accept = 'application/json', retried = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { Accept: accept, ...(body === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }) };
    const req = https.request({ agent, host: '127.0.0.1', port, method, path, headers, timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (req.reusedSocket && err.code === 'ECONNRESET' && !retried) send(agent, port, method, path, body, accept, true).then(resolve, reject);
      else reject(err);
    });
    req.end(body);
  });
}

/** Opens the agent's `connections` sockets (TLS handshakes included) with as many concurrent cheap requests, so
 * that a measured phase starts on open connections, as a client's steady state is: otherwise its first requests
 * wait for handshakes the gateway makes one after another, and show as its slowest. */
export async function openConnections(agent: https.Agent, port: number, connections: number): Promise<void> {
  const statuses = await Promise.all(Array.from({ length: connections }, () => send(agent, port, 'GET', '/version')));
  for (const status of statuses) expectStatus(200, 'GET /version')(status);
}

export const expectStatus = (want: number, what: string) => (status: number): void => {
  if (status !== want) throw new Error(`${what} answered ${status}, expected ${want}`);
};
