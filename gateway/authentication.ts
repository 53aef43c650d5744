// Authentication of every request, before anything else: the request's headers
// and TLS client chain go to the authentication service; a refusal is a 401
// Status, an accepted caller may then impersonate someone else.
import type Koa from 'koa';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { unauthorized } from '../internal/apimachinery/status.js';
import type { Backends, UserInfo } from './backends.js';
import { impersonatedUser } from './impersonation.js';
import { addWarning } from './headers.js';

/** Client chains by connection: a TLS session presents one chain, read once. */
const chainsBySocket = new WeakMap<object, Buffer[]>();
/** Longest client chain forwarded, leaf included. */
const MAX_CHAIN = 10;

/** The TLS client chain, DER, leaf first. */
export function peerCertificates(req: IncomingMessage): Buffer[] {
  const socket = req.socket as TLSSocket;
  const known = chainsBySocket.get(socket);
  if (known) return known;
  const chain: Buffer[] = [];
  let cert = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate(true) : undefined;
  while (cert && cert.raw && chain.length < MAX_CHAIN) {
    chain.push(cert.raw);
    if (!cert.issuerCertificate || cert.issuerCertificate === cert) break;
    cert = cert.issuerCertificate;
  }
  chainsBySocket.set(socket, chain);
  return chain;
}

/** Every header with each value it was sent with (repeated headers are not joined with commas). */
export const distinctHeaders = (req: IncomingMessage): Array<{ name: string; values: string[] }> =>
  Object.entries(req.headersDistinct).map(([name, values]) => ({ name, values: values ?? [] }));

/** Drops the headers that carried the credential (Authorization, the proxy's identity headers), so nothing later reads them. */
function dropCredentialHeaders(req: IncomingMessage, names: string[]): void {
  for (const name of names) {
    delete req.headers[name];
    delete req.headersDistinct[name];
  }
}

/** The caller (or whom it impersonates); a refusal is 401. */
export async function authenticateRequest(ctx: Koa.Context, backends: Backends): Promise<UserInfo> {
  const res = await backends.authenticate({
    headers: distinctHeaders(ctx.req), peerCertificates: peerCertificates(ctx.req), remoteAddress: ctx.ip, audiences: [], path: ctx.path,
  });
  for (const warning of res.warnings) addWarning(ctx, warning);
  if (!res.authenticated || !res.user) throw unauthorized();
  dropCredentialHeaders(ctx.req, res.credentialHeaders);
  return impersonatedUser(ctx, backends, res.user);
}
