// The address a process says it serves on, read from its output: every service
// binds its own port (port 0 picks a free one) and announces it, so no port is
// chosen for it and raced for by another process.

/** `<program> listening on host:port` (gRPC services), `gateway serving on https://host:port`,
 * nats-server's `Listening for client connections on host:port`. */
const ANNOUNCEMENT = /(?:listening on |serving on https:\/\/|Listening for client connections on )(\S+):(\d+)/;

export interface Announced {
  host: string;
  port: number;
}

/** The address announced in one line of output, if it is an announcement. */
export function announcedAddress(line: string): Announced | undefined {
  const m = ANNOUNCEMENT.exec(line);
  return m ? { host: m[1].replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]) } : undefined;
}

/** `host:port`, with an IPv6 host in brackets. */
export const hostPort = (a: Announced): string => (a.host.includes(':') ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`);
