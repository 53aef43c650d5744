// The client side of gRPC: options shared by every client, the trace context
// carried in each call's metadata, small unary calls sent over the peer's
// multiplex, and the standard health service.
import * as grpc from '@grpc/grpc-js';
import { injectContext } from '../tracing/index.js';
import { healthApi } from './api.js';
import { ClientMultiplexer } from './multiplex.js';

/** Puts the active trace context, when there is one, into every outgoing call's metadata. */
const traceInterceptor: grpc.Interceptor = (options, nextCall) => new grpc.InterceptingCall(nextCall(options), {
  start(metadata, listener, next) {
    injectContext((k, v) => metadata.set(k, v));
    next(metadata, listener);
  },
});

export const clientOptions: grpc.ClientOptions = {
  interceptors: [traceInterceptor],
  // A peer that stops answering is given up after keepalive time + timeout, the platform's etcd client's 30 s + 10 s:
  // each ping wakes both ends, so an idle cluster pings rarely. A peer that exits is seen at once (its socket closes).
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1_000,
};

/** A generated unary method: overloaded, so typed loosely; callers name the answer type. */
export type UnaryMethod = (...args: any[]) => unknown;

/** Methods whose answers may be megabytes: each on a stream of its own, so none holds up the small calls behind it. */
const BULK_METHOD = /\/List$/;
const multiplexers = new WeakMap<grpc.Client, ClientMultiplexer>();

/** The client's multiplexer, made on first use; closing the client ends its stream, which would keep it open. */
function multiplexerOf(client: grpc.Client): ClientMultiplexer {
  let multiplexer = multiplexers.get(client);
  if (!multiplexer) {
    const created = new ClientMultiplexer(client);
    const close = client.close.bind(client);
    client.close = () => { created.close(); close(); };
    multiplexers.set(client, multiplexer = created);
  }
  return multiplexer;
}

/** One plain unary call: a stream of its own. */
function plainUnary<Res>(client: grpc.Client, method: UnaryMethod, req: object, timeoutMs: number): Promise<Res> {
  return new Promise((resolve, reject) => {
    method.call(client, req, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err: grpc.ServiceError | null, res?: Res) =>
      (err ? reject(err) : resolve(res as Res)));
  });
}

/** How long a call waits for a peer that is not connected (a service restarting) before it is tried anyway. */
const RECONNECT_WAIT_MS = 1_000;

/** Resolves once the client's channel is connected, or the wait is over; at once when it is connected. A call made
 * while the channel backs off between attempts would fail at once, though the peer may be back a moment later. */
function connected(client: grpc.Client): Promise<void> | undefined {
  if (client.getChannel().getConnectivityState(true) === grpc.connectivityState.READY) return undefined;
  return new Promise((resolve) => client.waitForReady(Date.now() + RECONNECT_WAIT_MS, () => resolve()));
}

/** Calls a unary method of one peer and resolves with its answer; rejects with the ServiceError. Small calls go over
 * the peer's multiplex while it serves one. */
export function unaryOne<Res>(client: grpc.Client, method: UnaryMethod, req: object, timeoutMs = 30_000): Promise<Res> {
  const waiting = connected(client);
  return waiting ? waiting.then(() => dispatch<Res>(client, method, req, timeoutMs)) : dispatch<Res>(client, method, req, timeoutMs);
}

/** Sends the call now, whatever the state of the client's channel. */
export function dispatch<Res>(client: grpc.Client, method: UnaryMethod, req: object, timeoutMs: number): Promise<Res> {
  const def = method as unknown as { path?: string; requestSerialize(r: object): Buffer; responseDeserialize(b: Buffer): unknown };
  if (!def.path || BULK_METHOD.test(def.path)) return plainUnary(client, method, req, timeoutMs);
  const multiplexer = multiplexerOf(client);
  if (multiplexer.unsupported) return plainUnary(client, method, req, timeoutMs);
  return multiplexer.call(def as { path: string } & typeof def, req, timeoutMs, () => plainUnary<Res>(client, method, req, timeoutMs));
}

/** A client of the standard health service of the server at address; on `channel` when given (the channel another
 * client of that server calls on, so the health it reports is that of the calls' own connection). */
export function healthClient(address: string, channel?: grpc.ClientOptions['channelOverride']): grpc.Client & Record<string, any> {
  return new healthApi.grpc.health.v1.Health(address, grpc.credentials.createInsecure(), channel ? { ...clientOptions, channelOverride: channel } : clientOptions);
}

/** The addresses of a comma list (a service's replicas, a NATS cluster's nodes). */
export const addressesOf = (list: string): string[] => list.split(',').map((a) => a.trim()).filter(Boolean);

/** Asks the health service of the server at address, or of each at a comma list of addresses, once; resolves true
 * when one is SERVING. */
export async function checkHealth(addresses: string, service = '', timeoutMs = 1000): Promise<boolean> {
  const answers = await Promise.all(addressesOf(addresses).map((address) => checkOne(address, service, timeoutMs)));
  return answers.includes(true);
}

function checkOne(address: string, service: string, timeoutMs: number): Promise<boolean> {
  const client = healthClient(address);
  return new Promise((resolve) => {
    client.check({ service }, { deadline: Date.now() + timeoutMs }, (err: unknown, res: { status?: string }) => {
      client.close();
      resolve(!err && res?.status === 'SERVING');
    });
  });
}
