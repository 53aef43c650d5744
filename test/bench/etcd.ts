// etcd as the peer the API is compared with: the Debian `etcd-server` package
// (installed when missing, as root), one member on free loopback ports with its
// data in a temp dir, stopped by PID. It is reached over its native gRPC API,
// one HTTP/2 connection as the platform's API server uses, so what is counted on
// the etcd side is etcd serving gRPC, not a JSON translation.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { unusedPort } from '../lib/ports.js';

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;
const INSTALL_TIMEOUT_MS = 300_000;

/** The fields of etcd's rpc.proto (package etcdserverpb) that puts and gets use. */
const rpc = protobuf.Root.fromJSON({
  nested: {
    etcdserverpb: {
      nested: {
        PutRequest: { fields: { key: { type: 'bytes', id: 1 }, value: { type: 'bytes', id: 2 } } },
        PutResponse: { fields: {} },
        RangeRequest: { fields: { key: { type: 'bytes', id: 1 }, rangeEnd: { type: 'bytes', id: 2 } } },
        RangeResponse: { fields: { count: { type: 'int64', id: 4 } } },
        WatchCreateRequest: { fields: { key: { type: 'bytes', id: 1 }, rangeEnd: { type: 'bytes', id: 2 } } },
        WatchRequest: { fields: { createRequest: { type: 'WatchCreateRequest', id: 1 } } },
      },
    },
  },
});
const type = (name: string) => rpc.lookupType(`etcdserverpb.${name}`);
const [PutRequest, PutResponse, RangeRequest, RangeResponse, WatchRequest] = ['PutRequest', 'PutResponse', 'RangeRequest', 'RangeResponse', 'WatchRequest'].map(type);

const which = (cmd: string): string | undefined => {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
};

/** The etcd binary; installs the Debian package first when there is none. */
function ensureEtcd(): string {
  const found = which('etcd');
  if (found) return found;
  if (process.getuid?.() !== 0) throw new Error('etcd is not installed and installing it needs root: apt-get install -y etcd-server');
  console.log('installing etcd-server (apt-get) ...');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', 'etcd-server']]) {
    const r = spawnSync('apt-get', args, { env, encoding: 'utf8', timeout: INSTALL_TIMEOUT_MS });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}):\n${(r.stderr ?? '').slice(-2000)}`);
  }
  const installed = which('etcd');
  if (!installed) throw new Error('etcd-server installed, but no etcd on PATH');
  return installed;
}

/** The end of the range of keys that start with `prefix`: its last byte plus one. */
function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  end[end.length - 1]++;
  return end;
}

/** Puts, linearizable gets and watches over one gRPC connection. */
export class EtcdKv {
  private readonly client: grpc.Client;

  constructor(endpoint: string) {
    // A range of 10k values is larger than grpc-js's default 4 MiB limit on a received message; a
    // local subchannel pool gives each EtcdKv its own connection.
    this.client = new grpc.Client(endpoint, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': -1, 'grpc.use_local_subchannel_pool': 1 });
  }

  private call(method: string, req: protobuf.Type, res: protobuf.Type, message: object): Promise<protobuf.Message> {
    return new Promise((resolve, reject) => {
      this.client.makeUnaryRequest(`/etcdserverpb.KV/${method}`, (m: object) => Buffer.from(req.encode(m).finish()), (b: Buffer) => res.decode(b), message,
        { deadline: Date.now() + 15_000 }, (err, out) => (err ? reject(err) : resolve(out!)));
    });
  }

  async put(key: string, value: Buffer): Promise<void> {
    await this.call('Put', PutRequest, PutResponse, { key: Buffer.from(key), value });
  }

  /** Reads the key (or, with `prefix`, every key under it) and says how many there were. */
  async count(key: string, prefix = false): Promise<number> {
    const range = prefix ? { rangeEnd: prefixEnd(Buffer.from(key)) } : {};
    const res = await this.call('Range', RangeRequest, RangeResponse, { key: Buffer.from(key), ...range }) as unknown as { count?: number | { toNumber(): number } };
    return typeof res.count === 'object' ? res.count.toNumber() : Number(res.count ?? 0);
  }

  /** Watches every key under `prefix`. Resolves once etcd created the watch; onMessage then gets each
   *  WatchResponse undecoded (so that reading a thousand watches costs this process little), onEnd its end. */
  watch(prefix: string, onMessage: (bytes: Buffer) => void, onEnd: () => void): Promise<{ cancel(): void }> {
    const call = this.client.makeBidiStreamRequest('/etcdserverpb.Watch/Watch', (m: object) => Buffer.from(WatchRequest.encode(m).finish()), (b: Buffer) => b);
    return new Promise((resolve, reject) => {
      let created = false;
      call.on('data', (bytes: Buffer) => {
        if (created) onMessage(bytes);
        else { created = true; resolve({ cancel: () => call.cancel() }); }
      });
      call.on('error', (err) => (created ? onEnd() : reject(err)));
      call.on('end', onEnd);
      call.write({ createRequest: { key: Buffer.from(prefix), rangeEnd: prefixEnd(Buffer.from(prefix)) } });
    });
  }

  close(): void {
    this.client.close();
  }
}

export interface RunningEtcd { endpoint: string; pid: number; version: string; stop(): Promise<void> }

export async function startEtcd(): Promise<RunningEtcd> {
  const bin = ensureEtcd();
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).match(/etcd Version: (\S+)/)?.[1] ?? '?';
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-etcd-'));
  const [client, peer] = [await unusedPort(), await unusedPort()];
  const endpoint = `127.0.0.1:${client}`;
  const child = spawn(bin, [
    '--name', 'bench', '--data-dir', dataDir, '--log-level', 'error', '--logger', 'zap',
    '--listen-client-urls', `http://${endpoint}`, '--advertise-client-urls', `http://${endpoint}`,
    '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
    '--initial-cluster', `bench=http://127.0.0.1:${peer}`,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => { log = (log + d).slice(-4000); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid!, 'SIGTERM');
      const timer = setTimeout(() => process.kill(child.pid!, 'SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const kv = new EtcdKv(endpoint);
  try {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`etcd exited with ${child.exitCode}:\n${log}`);
      if (await kv.count('health').then(() => true, () => false)) break;
      if (Date.now() > deadline) throw new Error(`etcd did not serve within ${START_TIMEOUT_MS} ms:\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  } finally {
    kv.close();
  }
  return { endpoint, pid: child.pid!, version, stop };
}
