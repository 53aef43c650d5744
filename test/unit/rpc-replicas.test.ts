// Clients of a service at several addresses, against real gRPC servers in this
// process: calls go to the first replica whose health says SERVING, move when it
// stops or says NOT_SERVING and come back when it serves again; a read in flight
// when its replica goes is repeated on another, a write never is; with no replica
// serving a call fails UNAVAILABLE at once, and the client recovers by itself.
// The gateway's watch hub trusts its stream while one storage replica serves.
import { expect } from 'chai';
import { api, grpc, replicaSetOf, replicated, serve, unary, type RunningServer } from '../../internal/rpc/index.js';
import type { AuthorizationClient } from '../../internal/rpc/gen/svc/authz/v1/Authorization.js';
import type { AdmissionClient } from '../../internal/rpc/gen/svc/admission/v1/Admission.js';
import type { PolicyStatusResponse__Output } from '../../internal/rpc/gen/svc/authz/v1/PolicyStatusResponse.js';
import { connect } from '@nats-io/transport-node';
import { StorageClient } from '../../internal/storage/client.js';
import { WatchHub } from '../../gateway/hub.js';
import { startNats } from '../lib/nats.js';

const AUTHZ = 'svc.authz.v1.Authorization';

/** A replica answering PolicyStatus with its own mark (bootstrapped true for 'a', false for 'b') and counting Admit
 * calls; `hold` makes both wait until released (a call in flight when the replica goes). */
class Replica {
  running?: RunningServer;
  admits = 0;
  held: Array<() => void> = [];
  hold = false;

  constructor(readonly name: 'a' | 'b', public port = 0) {}

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    const wait = () => (this.hold ? new Promise<void>((resolve) => this.held.push(resolve)) : undefined);
    this.running = await serve(this.address, [
      { name: AUTHZ, definition: api.svc.authz.v1.Authorization.service, handlers: { PolicyStatus: async () => { await wait(); return { bootstrapped: this.name === 'a' }; } } },
      { name: 'svc.admission.v1.Admission', definition: api.svc.admission.v1.Admission.service, handlers: { Admit: async () => { this.admits++; await wait(); return { allowed: true }; } } },
    ]);
    this.port = this.running.port;
    return this;
  }

  /** Gone at once, as a killed process: its connections drop. */
  kill(): void {
    this.running?.server.forceShutdown();
    this.running = undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until check holds; fails after timeoutMs. */
async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not reached within ${timeoutMs} ms`);
    await sleep(10);
  }
}

describe('rpc: clients of several replicas', function () {
  this.timeout(20_000);
  let a: Replica;
  let b: Replica;
  let authz: AuthorizationClient;
  let admission: AdmissionClient;
  /** Which replica answered a PolicyStatus. */
  const who = async (): Promise<string> =>
    ((await unary<PolicyStatusResponse__Output>(authz, authz.PolicyStatus, {}, 2000)).bootstrapped ? 'a' : 'b');
  const serving = () => replicaSetOf(authz)!.members.map((m) => m.health);

  beforeEach(async () => {
    a = await new Replica('a').start();
    b = await new Replica('b').start();
    authz = replicated(api.svc.authz.v1.Authorization, `${a.address}, ${b.address}`);
    admission = replicated(api.svc.admission.v1.Admission, `${a.address},${b.address}`);
  });

  afterEach(() => {
    authz.close();
    admission.close();
    a.kill();
    b.kill();
  });

  it('is the plain generated client for one address', () => {
    const one = replicated(api.svc.authz.v1.Authorization, a.address);
    try {
      expect(replicaSetOf(one)).to.equal(undefined);
      expect(one).to.be.instanceOf(api.svc.authz.v1.Authorization);
      expect(replicaSetOf(authz)?.members.map((m) => m.address)).to.deep.equal([a.address, b.address]);
    } finally {
      one.close();
    }
  });

  it('sends calls to the first replica that serves, the next when it is killed, and the first again once it is back', async () => {
    // The first calls wait for the replicas' health to be known.
    expect(await who()).to.equal('a');
    for (let i = 0; i < 10; i++) expect(await who()).to.equal('a');
    a.kill();
    await until(() => serving()[0] === 'down');
    expect(await Promise.all(Array.from({ length: 10 }, who))).to.deep.equal(Array(10).fill('b'));
    await a.start();
    await until(() => serving()[0] === 'serving');
    expect(await who()).to.equal('a');
  });

  it('leaves a replica whose health says NOT_SERVING and returns when it serves again', async () => {
    expect(await who()).to.equal('a');
    a.running!.health.setStatus(AUTHZ, 'NOT_SERVING');
    await until(() => serving()[0] === 'down');
    expect(await who()).to.equal('b');
    a.running!.health.setStatus(AUTHZ, 'SERVING');
    await until(() => serving()[0] === 'serving');
    expect(await who()).to.equal('a');
  });

  it('fails UNAVAILABLE at once when no replica serves, and recovers when one comes back', async () => {
    expect(await who()).to.equal('a');
    a.kill();
    b.kill();
    await until(() => serving().every((h) => h === 'down'));
    const started = Date.now();
    const err = await who().then(() => undefined, (e: grpc.ServiceError) => e);
    expect(err?.code).to.equal(grpc.status.UNAVAILABLE);
    expect(err?.details).to.match(/^no replica of svc\.authz\.v1\.Authorization is serving/);
    expect(Date.now() - started).to.be.below(100);
    await b.start();
    await until(() => serving()[1] === 'serving');
    expect(await who()).to.equal('b');
  });

  it('repeats a read in flight on the next replica when its replica is killed', async () => {
    expect(await who()).to.equal('a');
    a.hold = true;
    const read = who();
    await until(() => a.held.length === 1);
    a.kill();
    expect(await read).to.equal('b');
  });

  it('never repeats a write in flight when its replica is killed: it fails as the peer went away', async () => {
    expect(await who()).to.equal('a');
    a.hold = true;
    const write = unary(admission, admission.Admit, {}, 2000).then(() => undefined, (e: grpc.ServiceError) => e);
    await until(() => a.admits === 1);
    a.kill();
    // UNAVAILABLE when a process dies; CANCELLED here, where the server resets its streams.
    expect([grpc.status.UNAVAILABLE, grpc.status.CANCELLED]).to.include((await write)?.code);
    expect(b.admits).to.equal(0);
    // The next write goes to the replica that serves.
    await until(() => replicaSetOf(admission)!.members[0].health === 'down');
    await unary(admission, admission.Admit, {}, 2000);
    expect(b.admits).to.equal(1);
  });

  it('sends writes elsewhere while a replica stops (it says NOT_SERVING, then refuses what it did not run)', async () => {
    await unary(admission, admission.Admit, {}, 2000);
    expect(a.admits).to.equal(1);
    a.hold = true;
    // A call in flight keeps the stopping server's multiplex open: it drains.
    const inFlight = who();
    await until(() => a.held.length === 1);
    const stopped = a.running!.stop();
    for (let i = 0; i < 5; i++) await unary(admission, admission.Admit, {}, 2000);
    expect([a.admits, b.admits]).to.deep.equal([1, 5]);
    for (const release of a.held) release();
    expect(await inFlight).to.equal('a');
    await stopped;
  });
});

describe('rpc: the watch hub on storage replicas', function () {
  this.timeout(20_000);

  it('keeps its watches while one storage replica serves, ends them when none does, and is ready again when one is back', async () => {
    const nats = await startNats();
    const nc = await connect({ servers: nats.url });
    const storage = (port = 0) => serve(`127.0.0.1:${port}`, [{
      name: 'svc.storage.v1.Storage', definition: api.svc.storage.v1.Storage.service, handlers: { CurrentRevision: async () => ({ revision: 7 }) },
    }]);
    let [a, b] = await Promise.all([storage(), storage()]);
    const client = new StorageClient(`127.0.0.1:${a.port},127.0.0.1:${b.port}`);
    const hub = new WatchHub(nc, client);
    const failures: string[] = [];
    try {
      await hub.start();
      await until(() => hub.ready);
      expect(hub.currentRevision).to.equal(7);
      hub.register('/registry/configmaps/', { onEvent: () => undefined, onFail: (reason) => failures.push(reason) });
      a.server.forceShutdown();
      await until(() => replicaSetOf(client.raw)!.members[0].health === 'down');
      expect([hub.ready, failures]).to.deep.equal([true, []]);
      b.server.forceShutdown();
      await until(() => !hub.ready);
      expect(failures).to.deep.equal(['the storage service is unavailable']);
      b = await storage(b.port);
      await until(() => hub.ready);
    } finally {
      hub.close();
      client.close();
      await nc.close();
      await Promise.all([a.stop(), b.stop(), nats.stop()]);
    }
  });
});
