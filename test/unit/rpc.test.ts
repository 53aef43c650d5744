// The gRPC plumbing without the services: unary calls over the multiplex (and plain
// calls where a server does not serve it), failures and deadlines across it, a
// stopping server answering what is in flight, and servers on Unix sockets.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, grpc, RpcError, serve, trailers, unary, type RunningServer } from '../../internal/rpc/index.js';
import { MultiplexServer, multiplexDefinition } from '../../internal/rpc/multiplex.js';
import { decodeFrames, encodeFrames, type Frame, type ReceivedFrame } from '../../internal/rpc/framecodec.js';
import { protoRoot } from '../../internal/rpc/descriptor.js';
import type { AuthorizationClient } from '../../internal/rpc/gen/svc/authz/v1/Authorization.js';
import type { PolicyStatusResponse__Output } from '../../internal/rpc/gen/svc/authz/v1/PolicyStatusResponse.js';
import type { StorageClient as RawStorage } from '../../internal/rpc/gen/svc/storage/v1/Storage.js';

const insecure = () => grpc.credentials.createInsecure();
const authzClient = (address: string) => new api.svc.authz.v1.Authorization(address, insecure()) as AuthorizationClient;
const status = (client: AuthorizationClient, timeoutMs?: number) => unary<PolicyStatusResponse__Output>(client, client.PolicyStatus, {}, timeoutMs);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server that answers PolicyStatus only over the multiplex: a call it answers went over it. */
async function multiplexOnly(answer: () => Promise<unknown>): Promise<{ server: grpc.Server; address: string }> {
  const multiplex = new MultiplexServer((err) => ({ code: grpc.status.INTERNAL, details: String(err), trailers: {} }));
  const method = api.svc.authz.v1.Authorization.service.PolicyStatus;
  multiplex.add(method.path, { deserialize: method.requestDeserialize, serialize: method.responseSerialize, run: () => answer() });
  const server = new grpc.Server();
  server.addService(multiplexDefinition, { Batches: multiplex.handler });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { server, address: `127.0.0.1:${port}` };
}

describe('rpc: unary calls over the multiplex', () => {
  it('carries small calls on the peer\'s multiplex, and lists on streams of their own', async () => {
    const { server, address } = await multiplexOnly(async () => ({ bootstrapped: true }));
    const client = authzClient(address);
    const storage = new api.svc.storage.v1.Storage(address, insecure()) as RawStorage;
    try {
      const answers = await Promise.all(Array.from({ length: 20 }, () => status(client)));
      expect(answers.every((a) => a.bootstrapped === true)).to.equal(true);
      // The server serves no plain methods: a List (never multiplexed) finds none.
      const listed = await unary(storage, storage.List, { prefix: '/' }).then(() => undefined, (err: grpc.ServiceError) => err);
      expect(listed?.code).to.equal(grpc.status.UNIMPLEMENTED);
    } finally {
      client.close();
      storage.close();
      server.forceShutdown();
    }
  });

  it('answers failures with their code, details and trailers, as plain calls do', async () => {
    const running = await serve('127.0.0.1:0', [{
      name: 'svc.authz.v1.Authorization', definition: api.svc.authz.v1.Authorization.service,
      handlers: { PolicyStatus: async () => { throw new RpcError(grpc.status.FAILED_PRECONDITION, 'not yet', { 'storage-error': 'future' }); } },
    }]);
    const client = authzClient(`127.0.0.1:${running.port}`);
    try {
      const err = await status(client).catch((e) => e);
      expect(err.code).to.equal(grpc.status.FAILED_PRECONDITION);
      expect(err.details).to.equal('not yet');
      expect(trailers(err)).to.deep.equal({ 'storage-error': 'future' });
    } finally {
      client.close();
      await running.stop();
    }
  });

  it('answers INTERNAL for a response that cannot be serialized, and serves the next calls', async () => {
    let calls = 0;
    const unserializable = { get bootstrapped(): boolean { throw new Error('not a boolean'); } };
    const running = await serve('127.0.0.1:0', [{
      name: 'svc.authz.v1.Authorization', definition: api.svc.authz.v1.Authorization.service,
      handlers: { PolicyStatus: async () => (++calls === 1 ? unserializable : { bootstrapped: true }) },
    }]);
    const client = authzClient(`127.0.0.1:${running.port}`);
    try {
      const err = await status(client, 2000).then(() => undefined, (e: grpc.ServiceError) => e);
      expect(err?.code).to.equal(grpc.status.INTERNAL);
      expect((await status(client, 2000)).bootstrapped).to.equal(true);
      expect(calls).to.equal(2);
    } finally {
      client.close();
      await running.stop();
    }
  });

  it('ends a call past its deadline with DEADLINE_EXCEEDED; the stream serves the next calls', async () => {
    let slow = true;
    const { server, address } = await multiplexOnly(async () => { if (slow) await sleep(1000); return { bootstrapped: true }; });
    const client = authzClient(address);
    try {
      const err = await status(client, 100).catch((e) => e);
      expect(err.code).to.equal(grpc.status.DEADLINE_EXCEEDED);
      slow = false;
      expect((await status(client)).bootstrapped).to.equal(true);
    } finally {
      client.close();
      server.forceShutdown();
    }
  });

  it('makes plain calls to a server that does not serve the multiplex', async () => {
    const server = new grpc.Server();
    server.addService(api.svc.authz.v1.Authorization.service, { PolicyStatus: (_call: unknown, done: grpc.sendUnaryData<unknown>) => done(null, { bootstrapped: true }) });
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
    const client = authzClient(`127.0.0.1:${port}`);
    try {
      const answers = await Promise.all(Array.from({ length: 5 }, () => status(client)));
      expect(answers.map((a) => a.bootstrapped)).to.deep.equal([true, true, true, true, true]);
      expect((await status(client)).bootstrapped).to.equal(true);
    } finally {
      client.close();
      server.forceShutdown();
    }
  });

  it('a stopping server answers the calls in flight before its streams end', async () => {
    const running = await serve('127.0.0.1:0', [{
      name: 'svc.authz.v1.Authorization', definition: api.svc.authz.v1.Authorization.service,
      handlers: { PolicyStatus: async () => { await sleep(300); return { bootstrapped: true }; } },
    }]);
    const client = authzClient(`127.0.0.1:${running.port}`);
    try {
      const inFlight = status(client);
      await sleep(50);
      const stopped = running.stop();
      expect((await inFlight).bootstrapped).to.equal(true);
      await stopped;
    } finally {
      client.close();
    }
  });

  it('refuses a request that does not decode with INVALID_ARGUMENT', async () => {
    const running = await serve('127.0.0.1:0', [{
      name: 'svc.storage.v1.Storage', definition: api.svc.storage.v1.Storage.service, handlers: { Get: async () => ({}) },
    }]);
    const storage = new api.svc.storage.v1.Storage(`127.0.0.1:${running.port}`, insecure()) as RawStorage;
    const garbage = Object.assign(() => undefined, {
      path: api.svc.storage.v1.Storage.service.Get.path, requestSerialize: () => Buffer.from([0x0a, 0xff, 0xff]), responseDeserialize: (b: Buffer) => b,
    });
    try {
      const err = await unary(storage, garbage, {}).then(() => undefined, (e: grpc.ServiceError) => e);
      expect(err?.code).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(err?.details).to.match(/^the request could not be decoded/);
    } finally {
      storage.close();
      await running.stop();
    }
  });
});

describe('rpc: the frame codec', () => {
  // The generic (proto-loader) codec of the same messages: the hand-written one must agree with it byte for byte.
  const generic = api.svc.rpc.v1.Multiplex.service.Batches;
  const frames: Frame[] = [
    { id: 1, method: '/svc.storage.v1.Storage/Create', payload: Buffer.from('payload ü'), context: { traceparent: '00-abc-def-01', tracestate: '' } },
    { id: 2 ** 40 + 3, payload: Buffer.alloc(300, 7) },
    { id: 300, code: grpc.status.ABORTED, details: 'the revision moved: ü', trailers: { 'svc-reason': 'Conflict', empty: '' } },
    { id: 4 },
  ];

  it('writes what the generic codec reads, and reads what it writes', () => {
    const decoded = generic.requestDeserialize(encodeFrames(frames)) as { frames: ReceivedFrame[] };
    const received = decodeFrames(generic.requestSerialize({ frames }));
    for (const got of [decoded.frames, received]) {
      expect(got.map((f) => f.id)).to.deep.equal(frames.map((f) => f.id));
      expect(got.map((f) => f.method)).to.deep.equal(frames.map((f) => f.method ?? ''));
      expect(got.map((f) => Buffer.from(f.payload).toString('latin1'))).to.deep.equal(frames.map((f) => Buffer.from(f.payload ?? []).toString('latin1')));
      expect(got.map((f) => [f.code, f.details])).to.deep.equal(frames.map((f) => [f.code ?? 0, f.details ?? '']));
      expect(got.map((f) => [f.trailers, f.context])).to.deep.equal(frames.map((f) => [f.trailers ?? {}, f.context ?? {}]));
    }
    expect(encodeFrames(frames).equals(generic.requestSerialize({ frames }))).to.equal(true);
  });

  it('skips fields it does not know and refuses bytes that are not frames', () => {
    // Frames with a field 9 (varint) and a frame with a field 15 (bytes) before its id.
    const unknown = Buffer.concat([Buffer.from([0x48, 0x05, 0x0a, 0x05, 0x7a, 0x01, 0x41, 0x08, 0x07])]);
    expect(decodeFrames(unknown).map((f) => f.id)).to.deep.equal([7]);
    expect(() => decodeFrames(Buffer.from([0x0a, 0x09, 0x08]))).to.throw(/truncated|index out of range/);
    expect(() => decodeFrames(Buffer.from([0x0e]))).to.throw(/wire type/);
  });
});

describe('rpc: messages written into buffers sized in advance', () => {
  const create = api.svc.storage.v1.Storage.service.Create;
  const type = protoRoot.lookupType('svc.storage.v1.CreateRequest');
  const request = (size: number) => ({ key: `core/configmaps/ns/c-${size}`, value: Buffer.alloc(size, size % 251), uid: `uid-${size}` });

  it('are the bytes protobufjs writes, whatever the size of the message before, and stay as written', () => {
    const sizes = [10, 100_000, 3, 2_500_000, 40, 1_500, 1_500, 70_000];
    const written = sizes.map((size) => create.requestSerialize(request(size)));
    written.forEach((bytes, i) => {
      expect(bytes.equals(type.encode(type.fromObject(request(sizes[i]))).finish()), `message ${i} of ${sizes[i]} bytes`).to.equal(true);
      expect(create.requestDeserialize(bytes)).to.deep.include({ key: request(sizes[i]).key, uid: request(sizes[i]).uid });
    });
  });

  it('writes a batch of frames larger than its estimate as the generic codec does', () => {
    const generic = api.svc.rpc.v1.Multiplex.service.Batches;
    const long = 'x'.repeat(5000);
    const batch: Frame[] = Array.from({ length: 40 }, (_, i) => ({
      id: i + 1, method: '/svc.storage.v1.Storage/Create', payload: Buffer.alloc(i * 100, i), context: i % 2 ? { traceparent: long } : undefined,
    }));
    expect(encodeFrames(batch).equals(generic.requestSerialize({ frames: batch }))).to.equal(true);
    expect(decodeFrames(encodeFrames(batch)).map((f) => [f.id, f.payload.length, f.context.traceparent?.length ?? 0]))
      .to.deep.equal(batch.map((f) => [f.id, f.payload!.length, f.context ? 5000 : 0]));
  });
});

describe('rpc: servers on Unix sockets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-rpc-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('binds a socket left behind by a crashed process, and not one a live server answers on', async () => {
    const path = join(dir, 'authz.sock');
    // A process that binds the socket and is killed without closing it: the file stays.
    const crashed = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`]);
    await new Promise((resolve) => crashed.once('exit', resolve));
    expect(existsSync(path)).to.equal(true);
    let running: RunningServer | undefined;
    try {
      running = await serve(`unix://${path}`, [{
        name: 'svc.authz.v1.Authorization', definition: api.svc.authz.v1.Authorization.service, handlers: { PolicyStatus: async () => ({ bootstrapped: true }) },
      }]);
      const client = authzClient(`unix://${path}`);
      expect((await status(client)).bootstrapped).to.equal(true);
      client.close();
      const second = await serve(`unix://${path}`, []).then(() => 'bound', (err: Error) => err.message);
      expect(second).to.not.equal('bound');
    } finally {
      await running?.stop();
    }
    expect(existsSync(path)).to.equal(false);
  });
});
