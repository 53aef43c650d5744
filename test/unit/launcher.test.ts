// The launcher's pieces without the services: how an announced address is read,
// a supervised child that binds its own port, is checked there and comes back on
// it after a crash, the topology flags, and a local NATS cluster.
import { expect } from 'chai';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { announcedAddress } from '../../internal/launcher/announce.js';
import { Child } from '../../internal/launcher/child.js';
import { readTopology } from '../../internal/launcher/topology.js';
import { etcdServers, planEtcd } from '../../internal/launcher/etcd.js';
import { natsChildren } from '../../internal/launcher/nats.js';
import { LAUNCHER_FLAGS } from '../../internal/launcher/index.js';
import { waitFor } from '../lib/cluster.js';

/** A program that binds `port` (0: any) and announces it as a gRPC service does, or exits 1 saying it cannot. */
const SERVER = `
const net = require('node:net');
const srv = net.createServer((s) => s.end());
srv.on('error', (err) => { console.error('fake: cannot listen on 127.0.0.1:' + process.argv[1] + ': ' + err.message); process.exit(1); });
srv.listen(Number(process.argv[1]), '127.0.0.1', () => console.log('fake listening on 127.0.0.1:' + srv.address().port));
`;

/** Kills a process and resolves once it is gone. */
function kill(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  return new Promise((resolve) => {
    const poll = setInterval(() => {
      try { process.kill(pid, 0); } catch { clearInterval(poll); resolve(); }
    }, 20);
  });
}

const accepts = (address?: string) => new Promise<boolean>((done) => {
  if (!address) return done(false);
  const socket = net.connect(Number(address.split(':')[1]), '127.0.0.1', () => { socket.end(); done(true); });
  socket.on('error', () => done(false));
});

describe('launcher: announced addresses', () => {
  it('reads the announcements of the services, the gateway and nats-server, and nothing else', () => {
    expect(announcedAddress('storage listening on 127.0.0.1:41233')).to.equal('127.0.0.1:41233');
    expect(announcedAddress('gateway serving on https://0.0.0.0:6443 (kubeconfig /d/admin.kubeconfig)')).to.equal('0.0.0.0:6443');
    expect(announcedAddress('[1] 2026/11/24 02:00:00.000000 [INF] Listening for client connections on 127.0.0.1:4222')).to.equal('127.0.0.1:4222');
    expect(announcedAddress('authz listening on [::1]:7000')).to.equal('[::1]:7000');
    expect(announcedAddress('authn listening on unix:///run/svc/authn.sock')).to.equal('unix:///run/svc/authn.sock');
    expect(announcedAddress('storage: cannot listen on 127.0.0.1:7000: address in use')).to.equal(undefined);
  });
});

describe('launcher: a supervised child that binds its own port', function () {
  this.timeout(30_000);
  let child: Child | undefined;
  afterEach(async () => { await child?.stop(); child = undefined; });

  const fake = () => new Child({
    name: 'fake', command: process.execPath, announces: true, healthy: accepts,
    args: (address) => ['-e', SERVER, address ? address.split(':')[1] : '0'],
  });

  it('is checked where it said it serves; a restart binds the same address', async () => {
    child = fake();
    child.start();
    expect(await child.waitHealthy(10_000)).to.equal(true);
    const address = child.address!;
    expect(address).to.match(/^127\.0\.0\.1:\d+$/);
    const pid = child.pid!;
    await kill(pid);
    expect(await waitFor(async () => child!.pid !== pid && child!.current.includes(`fake listening on ${address}`), 10_000), child.tail.join('\n')).to.equal(true);
    expect(child.tail).to.include('exited (SIGKILL); restarting in 1000 ms');
    expect(child.address).to.equal(address);
    expect(await accepts(address)).to.equal(true);
  });

  it('says so when another process took its address, and keeps trying there', async () => {
    child = fake();
    child.start();
    expect(await child.waitHealthy(10_000)).to.equal(true);
    const address = child.address!;
    await kill(child.pid!);
    const squatter = net.createServer();
    await new Promise<void>((resolve, reject) => squatter.once('error', reject).listen(Number(address.split(':')[1]), '127.0.0.1', resolve));
    try {
      expect(await waitFor(() => child!.tail.some((l) => l.startsWith(`cannot bind ${address} again`)), 10_000), child.tail.join('\n')).to.equal(true);
      expect(child.failure).to.equal(undefined);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
    expect(await waitFor(async () => child!.current.some((l) => l === `fake listening on ${address}`), 15_000), child.tail.join('\n')).to.equal(true);
  });
});

describe('launcher: topology flags', () => {
  const topology = (flags: Record<string, string>, storage: Record<string, string> = {}) =>
    readTopology((n) => flags[n] ?? LAUNCHER_FLAGS[n].default!, new Map(Object.entries(storage)));

  it('runs one of each by default, and storage replicated only on etcd3', () => {
    expect(topology({})).to.deep.equal({ replicas: 1, storageReplicas: 1, natsNodes: 1, etcdMembers: 0, etcdPort: 12379 });
    expect(topology({ replicas: '2' })).to.include({ replicas: 2, storageReplicas: 1 });
    expect(topology({ replicas: '2' }, { 'storage-backend': 'etcd3' })).to.include({ storageReplicas: 2 });
    expect(topology({ replicas: '2', 'etcd-members': '3', 'nats-nodes': '3' })).to.include({ storageReplicas: 2, etcdMembers: 3, natsNodes: 3 });
    expect(topology({}, { 'nats-url': 'nats://a:4222' })).to.include({ natsNodes: 0 });
  });

  it('refuses counts out of range and flags that contradict it, naming them', () => {
    expect(() => topology({ replicas: '0' })).to.throw('invalid value "0" for --replicas: an integer of at least 1');
    expect(() => topology({ 'etcd-members': 'x' })).to.throw('--etcd-members');
    expect(() => topology({ 'etcd-members': '3' }, { 'etcd-servers': 'http://a:2379' })).to.throw('give either it or --etcd-servers');
    expect(() => topology({ 'etcd-members': '3' }, { 'storage-backend': 'leveldb' })).to.throw('--etcd-members needs --storage-backend=etcd3');
    expect(() => topology({ 'nats-nodes': '3' }, { 'nats-url': 'nats://a:4222' })).to.throw('give either it or --nats-url');
    expect(() => topology({ replicas: '2' }, { listen: '127.0.0.1:7000' })).to.throw('--listen names one address');
  });

  it('gives etcd member N the client port --etcd-port+2(N-1) and the peer port after it', async () => {
    const members = await planEtcd(3, 12379);
    expect(members).to.deep.equal([
      { name: 'etcd-1', clientPort: 12379, peerPort: 12380 },
      { name: 'etcd-2', clientPort: 12381, peerPort: 12382 },
      { name: 'etcd-3', clientPort: 12383, peerPort: 12384 },
    ]);
    expect(etcdServers(members)).to.equal('http://127.0.0.1:12379,http://127.0.0.1:12381,http://127.0.0.1:12383');
    const free = (await planEtcd(2, 0)).flatMap((m) => [m.clientPort, m.peerPort]);
    expect(new Set(free).size).to.equal(4);
  });
});

describe('launcher: a local NATS cluster', function () {
  this.timeout(30_000);
  let dir = '';
  let nodes: Child[] = [];
  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('routes a message published on one node to a subscriber on another, also after that node restarts', async () => {
    dir = mkdtempSync(join(tmpdir(), 'launcher-nats-'));
    nodes = await natsChildren('nats-server', dir, 3);
    expect(nodes.map((n) => n.spec.name)).to.deep.equal(['nats-1', 'nats-2', 'nats-3']);
    for (const n of nodes) n.start();
    for (const n of nodes) expect(await n.waitHealthy(10_000), n.tail.join('\n')).to.equal(true);
    const [first, , last] = nodes;
    const sub = await connect({ servers: `nats://${last.address}` });
    const pub = await connect({ servers: `nats://${first.address}`, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    try {
      const received: string[] = [];
      sub.subscribe('launcher.test', { callback: (_err, msg) => { received.push(msg.string()); } });
      await sub.flush();
      // Routes form after the nodes serve: publish until the subscription reached the first node.
      expect(await waitFor(async () => { pub.publish('launcher.test', 'before'); await pub.flush(); return received.includes('before'); }, 10_000, 100)).to.equal(true);
      const pid = first.pid!;
      process.kill(pid, 'SIGKILL');
      expect(await waitFor(() => first.pid !== pid && first.current.some((l) => l.includes(`Listening for client connections on ${first.address}`)), 10_000), first.tail.join('\n')).to.equal(true);
      expect(await waitFor(async () => { pub.publish('launcher.test', 'after'); await pub.flush(); return received.includes('after'); }, 10_000, 100)).to.equal(true);
    } finally {
      await Promise.all([sub.close(), pub.close()]);
    }
  });
});
