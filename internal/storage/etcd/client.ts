// A small client of etcd's v3 gRPC API over the grpc-js already in use: the
// messages of etcd.proto encoded with protobufjs, revisions as numbers, a
// deadline on every call, and failures as the storage service's errors (etcd
// unreachable: UNAVAILABLE; a compacted or future revision: OUT_OF_RANGE with the
// `storage-error` trailer). One channel per server: calls go to one until it
// cannot be reached, then to the next (the failed call is not repeated, as it may
// have been applied).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { packageRoot } from '../../config/shared.js';
import { RpcError, grpc, isServiceError } from '../../rpc/index.js';
import { serviceError } from '../../rpc/multiplex.js';
import { STORAGE_ERROR_KEY } from '../client.js';
import { StallWatch, WRITE_STALL_MS } from './stall.js';

// From the repository's root, which a bundled process finds as well as a built module.
const protoFile = join(packageRoot(), 'internal/storage/etcd/etcd.proto');
const root = protobuf.parse(readFileSync(protoFile, 'utf8'), { keepCase: false }).root;
const type = (name: string): protobuf.Type => root.lookupType(`etcdserverpb.${name}`);
const toObjectOptions: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, oneofs: true };

/** Every call but a watch ends within this; etcd answers a healthy request in milliseconds. */
const CALL_DEADLINE_MS = 5000;
/** How long a call may take: in all (deadlineMs), and, a write, while etcd answers nothing or changes leader
 * (stallMs, see StallWatch: none by default). */
export interface CallLimits { deadlineMs?: number; stallMs?: number }
/** How long the read that asks whether etcd has a leader may take. */
const PROBE_DEADLINE_MS = 1000;

export interface EtcdKeyValue { key: Buffer; createRevision: number; modRevision: number; version: number; value: Buffer; lease: number }
export interface EtcdEvent { type: 'PUT' | 'DELETE'; kv: EtcdKeyValue; prevKv: EtcdKeyValue | null }
export interface Header { revision: number; raftTerm?: number }
export interface RangeRequest { key: Buffer; rangeEnd?: Buffer; limit?: number; revision?: number; keysOnly?: boolean; countOnly?: boolean }
export interface RangeResponse { header: Header; kvs: EtcdKeyValue[]; more: boolean; count: number }
export interface Compare {
  key: Buffer; target: 'VERSION' | 'CREATE' | 'MOD'; result?: 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';
  version?: number; createRevision?: number; modRevision?: number;
}
export type RequestOp =
  | { requestRange: RangeRequest } | { requestPut: { key: Buffer; value: Buffer; lease?: number } } | { requestDeleteRange: { key: Buffer } };
export interface TxnResponse {
  header: Header; succeeded: boolean;
  responses: Array<{ responseRange?: RangeResponse }>;
}
export interface WatchResponse {
  header: Header; watchId: number; created: boolean; canceled: boolean; compactRevision: number; cancelReason: string; events: EtcdEvent[];
}

interface Codec { encode(m: object): Buffer; decode(b: Buffer): any }
const codec = (name: string): Codec => {
  const t = type(name);
  return { encode: (m) => Buffer.from(t.encode(t.fromObject(m)).finish()), decode: (b) => t.toObject(t.decode(b), toObjectOptions) };
};
const codecs = Object.fromEntries(['RangeRequest', 'RangeResponse', 'PutRequest', 'PutResponse', 'TxnRequest', 'TxnResponse',
  'CompactionRequest', 'CompactionResponse', 'WatchRequest', 'WatchResponse', 'LeaseGrantRequest', 'LeaseGrantResponse',
  'LeaseRevokeRequest', 'LeaseRevokeResponse', 'LeaseKeepAliveRequest', 'LeaseKeepAliveResponse'].map((n) => [n, codec(n)]));

export interface EtcdOptions {
  /** `http://host:port` or `https://host:port`, comma-separated. */
  servers: string;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

/** The gRPC target (host:port) of a server URL. */
function target(server: string): string {
  const url = new URL(server.includes('://') ? server : `http://${server}`);
  return `${url.hostname}:${url.port || 2379}`;
}

function credentials(opts: EtcdOptions, tls: boolean): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  const read = (f?: string): Buffer | null => (f ? readFileSync(f) : null);
  return grpc.credentials.createSsl(read(opts.caFile), read(opts.keyFile), read(opts.certFile));
}

/** The storage error of a failed etcd call. */
export function etcdError(err: unknown): Error {
  if (err instanceof RpcError || !isServiceError(err)) return err as Error;
  const message = `etcd: ${err.details || err.message}`;
  // Proposed while no member knew of a leader: refused before anything was written.
  if (/proposal dropped/.test(err.details)) return new RpcError(grpc.status.UNAVAILABLE, `etcd has no leader: ${err.details}`);
  switch (err.code) {
    case grpc.status.OUT_OF_RANGE:
      return new RpcError(grpc.status.OUT_OF_RANGE, message, { [STORAGE_ERROR_KEY]: /future/.test(err.details) ? 'future' : 'compacted' });
    case grpc.status.UNAVAILABLE: case grpc.status.DEADLINE_EXCEEDED: case grpc.status.CANCELLED:
      return new RpcError(grpc.status.UNAVAILABLE, `etcd is unreachable: ${err.details || err.message}`);
    case grpc.status.INVALID_ARGUMENT: case grpc.status.RESOURCE_EXHAUSTED:
      return new RpcError(err.code, message);
    default:
      return new RpcError(grpc.status.INTERNAL, message);
  }
}

export class EtcdClient {
  private readonly channels: grpc.Client[];
  private current = 0;
  /** Tells when a write etcd may never answer is to be given up: it learns of every answer. */
  private readonly stalls = new StallWatch(() => this.call('KV', 'Range', 'RangeRequest', 'RangeResponse',
    { key: Buffer.from([0]), countOnly: true }, { deadlineMs: PROBE_DEADLINE_MS }));

  constructor(readonly options: EtcdOptions) {
    const servers = options.servers.split(',').map((s) => s.trim()).filter(Boolean);
    if (servers.length === 0) throw new Error('--etcd-servers names no server');
    this.channels = servers.map((server) => new grpc.Client(target(server), credentials(options, server.startsWith('https://')), {
      'grpc.max_receive_message_length': -1, 'grpc.keepalive_time_ms': 10_000, 'grpc.keepalive_timeout_ms': 5000,
      'grpc.initial_reconnect_backoff_ms': 200, 'grpc.max_reconnect_backoff_ms': 2000,
    }));
  }

  /** The channel calls go to now. */
  private get client(): grpc.Client {
    return this.channels[this.current];
  }

  /** After a call through `channel` failed to reach its server: the next calls go to the next server. */
  private failedOn(channel: grpc.Client, err: unknown): void {
    const unreachable = isServiceError(err) && (err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.DEADLINE_EXCEEDED);
    if (!unreachable || this.channels.length === 1 || this.channels[this.current] !== channel) return;
    this.current = (this.current + 1) % this.channels.length;
  }

  private call<T>(service: string, method: string, req: string, res: string, message: object, limits: CallLimits = {}): Promise<T> {
    const { encode } = codecs[req];
    const { decode } = codecs[res];
    const { deadlineMs = CALL_DEADLINE_MS, stallMs } = limits;
    const channel = this.client;
    return new Promise((resolve, reject) => {
      let givenUp: string | undefined;
      let stop = (): void => undefined;
      const call = channel.makeUnaryRequest(`/etcdserverpb.${service}/${method}`, encode, decode, message,
        { deadline: Date.now() + deadlineMs }, (err, out) => {
          stop();
          if (!err) {
            this.stalls.answered((out as { header?: Header }).header?.raftTerm ?? 0);
            return resolve(out as T);
          }
          const failure = givenUp ? serviceError(grpc.status.DEADLINE_EXCEEDED, givenUp) : err;
          this.failedOn(channel, failure);
          reject(etcdError(failure));
        });
      if (stallMs) stop = this.stalls.watch(stallMs, (why) => { givenUp = why; call.cancel(); });
    });
  }

  /** A stream call on the current channel, which moves on when the stream cannot reach its server. */
  private stream<Req, Res>(path: string, req: string, res: string): grpc.ClientDuplexStream<Req, Res> {
    const channel = this.client;
    const call = channel.makeBidiStreamRequest(path, codecs[req].encode, codecs[res].decode) as grpc.ClientDuplexStream<Req, Res>;
    call.on('error', (err) => this.failedOn(channel, err));
    return call;
  }

  range(req: RangeRequest): Promise<RangeResponse> {
    return this.call('KV', 'Range', 'RangeRequest', 'RangeResponse', req);
  }

  put(key: Buffer, value: Buffer, lease = 0): Promise<{ header: Header }> {
    return this.call('KV', 'Put', 'PutRequest', 'PutResponse', { key, value, lease }, { stallMs: WRITE_STALL_MS });
  }

  txn(compare: Compare[], success: RequestOp[], failure: RequestOp[] = [], limits: CallLimits = { stallMs: WRITE_STALL_MS }): Promise<TxnResponse> {
    return this.call('KV', 'Txn', 'TxnRequest', 'TxnResponse', { compare: compare.map((c) => ({ result: 'EQUAL', ...c })), success, failure }, limits);
  }

  compact(revision: number): Promise<{ header: Header }> {
    return this.call('KV', 'Compact', 'CompactionRequest', 'CompactionResponse', { revision }, { deadlineMs: 30_000 });
  }

  leaseGrant(id: number, ttlSeconds: number): Promise<{ ID: number; TTL: number; error: string }> {
    return this.call('Lease', 'LeaseGrant', 'LeaseGrantRequest', 'LeaseGrantResponse', { ID: id, TTL: ttlSeconds });
  }

  leaseRevoke(id: number): Promise<unknown> {
    return this.call('Lease', 'LeaseRevoke', 'LeaseRevokeRequest', 'LeaseRevokeResponse', { ID: id });
  }

  /** A keep-alive stream of leases: write `{ ID }`, read what TTL etcd left them. */
  leaseKeepAlive(): grpc.ClientDuplexStream<{ ID: number }, { ID: number; TTL: number }> {
    return this.stream('/etcdserverpb.Lease/LeaseKeepAlive', 'LeaseKeepAliveRequest', 'LeaseKeepAliveResponse');
  }

  /** A watch stream: write one create request, read its responses (the caller cancels it). */
  watch(): grpc.ClientDuplexStream<object, WatchResponse> {
    return this.stream('/etcdserverpb.Watch/Watch', 'WatchRequest', 'WatchResponse');
  }

  close(): void {
    for (const channel of this.channels) channel.close();
  }
}

/** The end of the range of keys that start with `prefix`. */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]); // every key
}
