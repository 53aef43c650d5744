// Requests to the API as a client makes them: HTTPS on keep-alive connections,
// authenticated with the admin client certificate.
import { Agent, type Dispatcher } from 'undici';
import { readFileSync } from 'node:fs';
import { pkiPaths } from '../../internal/pki/index.js';

export type Tls = { ca: Buffer; cert: Buffer; key: Buffer };

export function adminTls(dataDir: string): Tls {
  const p = pkiPaths(dataDir);
  return { ca: readFileSync(p.caCert), cert: readFileSync(p.adminCert), key: readFileSync(p.adminKey) };
}

/** The load generator's HTTP client: undici, which spends about half what node:https does per request (measured
 * on gets, 0.11 vs 0.23 ms of CPU), so that on a machine it shares with the server it takes less from the server. */
export type Client = Agent;

export const keepAlive = (tls: Tls, connections: number): Client =>
  new Agent({ connections, connect: { ...tls }, headersTimeout: 30_000, bodyTimeout: 30_000 });

/** One request; resolves with the status once the body is read. */
export async function send(client: Client, port: number, method: string, path: string, body?: string, accept = 'application/json'): Promise<number> {
  const headers = { accept, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  const res = await client.request({ origin: `https://127.0.0.1:${port}`, method: method as Dispatcher.HttpMethod, path, headers, body });
  await res.body.dump({ limit: Number.MAX_SAFE_INTEGER }); // read whole: past the limit it would cut the body
  return res.statusCode;
}

/** Opens the agent's `connections` sockets (TLS handshakes included) with as many concurrent cheap requests, so
 * that a measured phase starts on open connections, as a client's steady state is: otherwise its first requests
 * wait for handshakes the gateway makes one after another, and show as its slowest. */
export async function openConnections(agent: Client, port: number, connections: number): Promise<void> {
  const statuses = await Promise.all(Array.from({ length: connections }, () => send(agent, port, 'GET', '/version')));
  for (const status of statuses) expectStatus(200, 'GET /version')(status);
}

export const expectStatus = (want: number, what: string) => (status: number): void => {
  if (status !== want) throw new Error(`${what} answered ${status}, expected ${want}`);
};
