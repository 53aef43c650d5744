// A local etcd cluster for trying the etcd3 storage backend on one machine: each
// member a child of the launcher, its data under <data-dir>/etcd/<name>. Peer URLs
// are part of every member's --initial-cluster and of the membership etcd keeps in
// its data, so the ports are fixed (from --etcd-port) rather than announced; a
// restart binds the same ones, and so does the next run on the same data dir.
import http from 'node:http';
import { join } from 'node:path';
import { Child } from './child.js';
import { freePorts } from './ports.js';

const CLUSTER_TOKEN = 'svc-apiserver';

export interface EtcdMember {
  name: string;
  clientPort: number;
  peerPort: number;
}

/** The members: member N serves clients on basePort+2(N-1) and peers on the port after; basePort 0 picks free ports. */
export async function planEtcd(count: number, basePort: number): Promise<EtcdMember[]> {
  const ports = basePort > 0 ? Array.from({ length: 2 * count }, (_, i) => basePort + i) : await freePorts(2 * count);
  return Array.from({ length: count }, (_, i) => ({ name: `etcd-${i + 1}`, clientPort: ports[2 * i], peerPort: ports[2 * i + 1] }));
}

/** The --etcd-servers of storage: every member's client URL. */
export const etcdServers = (members: EtcdMember[]): string => members.map((m) => `http://127.0.0.1:${m.clientPort}`).join(',');

/** Healthy once the member answers /health with 200: it has a leader (a quorum of members runs). */
function etcdHealthy(port: number): Promise<boolean> {
  return new Promise((done) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/health', timeout: 1000 }, (res) => {
      res.resume();
      done(res.statusCode === 200);
    });
    req.on('error', () => done(false));
    req.on('timeout', () => { req.destroy(); done(false); });
  });
}

export function etcdChildren(binary: string, dataDir: string, members: EtcdMember[]): Child[] {
  const initialCluster = members.map((m) => `${m.name}=http://127.0.0.1:${m.peerPort}`).join(',');
  return members.map((m) => {
    const client = `http://127.0.0.1:${m.clientPort}`;
    const peer = `http://127.0.0.1:${m.peerPort}`;
    const args = [
      `--name=${m.name}`, `--data-dir=${join(dataDir, 'etcd', m.name)}`,
      `--listen-client-urls=${client}`, `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`, `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=${initialCluster}`, '--initial-cluster-state=new', `--initial-cluster-token=${CLUSTER_TOKEN}`,
      '--logger=zap', '--log-level=error',
    ];
    return new Child({ name: m.name, command: binary, args: () => args, healthy: () => etcdHealthy(m.clientPort), address: `127.0.0.1:${m.clientPort}` });
  });
}
