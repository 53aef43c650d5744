// The launcher's pieces without the services: how an announced address is read,
// and a supervised child that binds its own port, is checked there and comes
// back on it after a crash.
import { expect } from 'chai';
import net from 'node:net';
import { announcedAddress } from '../../internal/launcher/announce.js';
import { Child } from '../../internal/launcher/child.js';
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
