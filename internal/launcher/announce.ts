// The address a process says it serves on, read from its output: every service
// binds its own port (port 0 picks a free one) or Unix socket and announces it, so
// no port is chosen for it and raced for by another process.

/** `<program> listening on host:port` or `... listening on unix:///path` (gRPC services), `gateway serving on
 * https://host:port`, nats-server's `Listening for client connections on host:port`. */
const ANNOUNCEMENT = /(?:listening on |serving on https:\/\/|Listening for client connections on )(?:(unix:\/\/\/\S+)|(\S+):(\d+))/;

/** The address announced in one line of output, if it is an announcement: `host:port` (an IPv6 host in
 * brackets) or `unix:///path`. */
export function announcedAddress(line: string): string | undefined {
  const m = ANNOUNCEMENT.exec(line);
  if (!m) return undefined;
  if (m[1]) return m[1];
  const host = m[2].replace(/^\[(.*)\]$/, '$1');
  return host.includes(':') ? `[${host}]:${m[3]}` : `${host}:${m[3]}`;
}

/** The port of a `host:port` address. */
export const portOf = (address: string): number => Number(address.slice(address.lastIndexOf(':') + 1));
