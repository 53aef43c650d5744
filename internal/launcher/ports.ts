// Loopback ports for what must know its peers' ports before any of them starts
// (etcd peer URLs in --initial-cluster, NATS cluster routes): bound on port 0 all
// at once, so they differ, then released for the child to bind.
import net from 'node:net';

export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: count }, () => new Promise<net.Server>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject).listen(0, '127.0.0.1', () => resolve(server));
  })));
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}
