// Servers on Unix sockets (`unix:///absolute/path`), for services on one machine:
// no TCP/IP stack between them.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { dirname } from 'node:path';

const UNIX_SCHEME = 'unix://';
/** The path of a `unix:///path` address; undefined for `host:port`. */
export const unixPath = (address: string): string | undefined =>
  (address.startsWith(UNIX_SCHEME) ? address.slice(UNIX_SCHEME.length) : undefined);

/** Whether a server accepts connections on the Unix socket at path. */
function socketAnswers(path: string): Promise<boolean> {
  return new Promise((done) => {
    const socket = net.connect(path, () => { socket.end(); done(true); });
    socket.on('error', () => done(false));
  });
}

/** A socket file left by a process that ended without closing it (a crash) is removed, so a restart binds the
 * same path again; one a live server answers on stays, and the bind fails as for a port in use. */
async function clearStaleSocket(path: string): Promise<void> {
  if (!existsSync(path) || await socketAnswers(path)) return;
  rmSync(path, { force: true });
}

/** Makes a Unix socket's address ready to bind: its directory exists, and a stale socket file is gone. */
export async function prepareSocket(address: string): Promise<void> {
  const path = unixPath(address);
  if (!path) return;
  mkdirSync(dirname(path), { recursive: true });
  await clearStaleSocket(path);
}
