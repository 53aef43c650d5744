// etcd as the peer the API is compared with (one member, from test/lib/etcd.ts),
// reached over its native gRPC API, one HTTP/2 connection as the platform's API
// server uses, so what is counted on the etcd side is etcd serving gRPC, not a
// JSON translation.
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';

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

export { startEtcd, type RunningEtcd } from '../lib/etcd.js';
