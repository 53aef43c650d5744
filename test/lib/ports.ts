// A loopback port nothing listens on (bound, then closed), for tests that need an
// address where no server answers. Servers under test bind port 0 themselves.
import net from 'node:net';

export function unusedPort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
