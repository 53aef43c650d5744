// The local NATS the launcher starts when no --nats-url is given: one nats-server,
// or a cluster of several whose routes name each other. Each node picks its client
// port (`-p -1`) and logs it; a restart takes the same port. Cluster ports are
// chosen before the first start, as every node's routes must name them.
import net from 'node:net';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { Child } from './child.js';
import { portOf } from './announce.js';
import { freePorts } from './ports.js';

/** Events carry whole objects: 8 MiB leaves headroom above the 3 MiB request body limit. */
const MAX_NATS_PAYLOAD = 8 * 1024 * 1024;
const CLUSTER_NAME = 'svc-apiserver';

const hostOf = (address: string): string => address.slice(0, address.lastIndexOf(':')).replace(/^\[(.*)\]$/, '$1');

/** Whether something accepts TCP connections at `address`. */
export function accepts(address: string): Promise<boolean> {
  return new Promise((done) => {
    const socket = net.connect(portOf(address), hostOf(address), () => { socket.end(); done(true); });
    socket.on('error', () => done(false));
  });
}

/** The configuration of one node: the payload limit, and in a cluster its route port and routes to the others. */
function natsConfig(node: number, clusterPorts: number[]): string {
  const lines = [`max_payload: ${MAX_NATS_PAYLOAD}`];
  if (clusterPorts.length > 1) {
    const routes = clusterPorts.filter((_, i) => i !== node).map((p) => `    nats-route://127.0.0.1:${p}`);
    lines.push(`server_name: nats-${node + 1}`, 'cluster {', `  name: ${CLUSTER_NAME}`, `  listen: 127.0.0.1:${clusterPorts[node]}`, '  routes: [', ...routes, '  ]', '}');
  }
  return `${lines.join('\n')}\n`;
}

/** `nodes` nats-servers (named nats, or nats-1, nats-2, ... in a cluster), their configurations written under dataDir. */
export async function natsChildren(binary: string, dataDir: string, nodes: number): Promise<Child[]> {
  const clusterPorts = nodes > 1 ? await freePorts(nodes) : [0];
  return clusterPorts.map((_, i) => {
    const name = nodes > 1 ? `nats-${i + 1}` : 'nats';
    const conf = join(dataDir, `${name}.conf`);
    writeFileSync(conf, natsConfig(i, clusterPorts));
    return new Child({
      name, command: binary, announces: true, healthy: (address) => (address ? accepts(address) : Promise.resolve(false)),
      args: (address) => ['-c', conf, '-a', '127.0.0.1', '-p', address ? String(portOf(address)) : '-1'],
    });
  });
}
