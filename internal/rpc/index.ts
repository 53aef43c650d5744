// gRPC plumbing shared by every service: loading the APIs of proto/, servers
// with health checking, the multiplex (many unary calls on one stream) and a
// server span per call, clients that carry the trace context in their metadata
// and send small unary calls over the multiplex.
import * as grpc from '@grpc/grpc-js';
import { SpanKind, beginSpan, extractContext, recordFailure, runIn, shutdownTracing, type Context } from '../tracing/index.js';
import { HealthService } from './health.js';
import { prepareSocket, unixPath } from './sockets.js';
import { MultiplexServer, multiplexDefinition, serviceError, type FailureFields } from './multiplex.js';
import { unaryOne, type UnaryMethod } from './client.js';
import { replicaSetOf } from './replicas.js';

export { grpc };
export { api } from './api.js';
export { addressesOf, checkHealth, clientOptions, healthClient } from './client.js';
export { replicaSetOf, replicated, type ReplicaSet } from './replicas.js';

/** Calls a unary method and resolves with its answer; rejects with the ServiceError. A client of several replicas
 * (`replicated`) sends it to one that serves; small calls go over the peer's multiplex while it serves one. */
export function unary<Res>(client: grpc.Client, method: UnaryMethod, req: object, timeoutMs = 30_000): Promise<Res> {
  const replicas = replicaSetOf(client);
  return replicas ? replicas.unary<Res>(method, req, timeoutMs) : unaryOne<Res>(client, method, req, timeoutMs);
}
/** An error a handler throws to answer with a gRPC status and trailing metadata. */
export class RpcError extends Error {
  constructor(readonly code: grpc.status, message: string, readonly trailers: Record<string, string> = {}) {
    super(message);
  }
}

/** The trailing metadata of a failed call as a plain record. */
export function trailers(err: grpc.ServiceError): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(err.metadata?.getMap() ?? {})) out[k] = String(v);
  return out;
}

export const isServiceError = (err: unknown): err is grpc.ServiceError =>
  typeof err === 'object' && err !== null && 'code' in err && 'details' in err;

const UNREACHABLE = new Set([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED, grpc.status.CANCELLED]);
/** A call that failed because the service could not be reached in time (down, restarting, overloaded), not because of what was asked. */
export const isUnreachable = (err: unknown): boolean => isServiceError(err) && UNREACHABLE.has(err.code);

type UnaryHandler = (request: any) => Promise<any>;
type StreamHandler = (call: grpc.ServerWritableStream<any, any>) => void | Promise<void>;
export type Handlers = Record<string, UnaryHandler | StreamHandler>;

/** Error messages travel in a trailer (percent-encoded, up to three bytes a character): one that quotes a huge
 * request would pass the client's metadata limit, and the call would never end. Longer ones are cut short. */
const MAX_DETAILS_CHARS = 1024;

const boundedDetails = (message: string): string =>
  message.length <= MAX_DETAILS_CHARS ? message : `${message.slice(0, MAX_DETAILS_CHARS)}... (${message.length - MAX_DETAILS_CHARS} more characters)`;

/** The status and trailers a handler's failure is answered with. */
function failureOf(err: unknown): FailureFields {
  if (err instanceof RpcError) return { code: err.code, details: boundedDetails(err.message), trailers: err.trailers };
  // A service this one calls could not be reached: so this one is unavailable too, and its callers retry.
  if (isUnreachable(err)) return { code: grpc.status.UNAVAILABLE, details: boundedDetails((err as grpc.ServiceError).details), trailers: {} };
  return { code: grpc.status.INTERNAL, details: boundedDetails((err as Error)?.message ?? String(err)), trailers: {} };
}

function toServiceError(err: unknown): grpc.ServiceError {
  const { code, details, trailers } = failureOf(err);
  return serviceError(code, details, trailers);
}

function parentOf(call: { metadata: grpc.Metadata }) {
  return extractContext((k) => {
    const v = call.metadata.get(k)[0];
    return v === undefined ? undefined : String(v);
  });
}

/** Marks a request that did not decode: the handler answers INVALID_ARGUMENT, not grpc-js's INTERNAL. */
const UNDECODABLE = Symbol('undecodable request');

/** The definition with decoders that never throw: a request that does not decode becomes a marker instead. */
function tolerantDefinition(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
  return Object.fromEntries(Object.entries(service).map(([method, def]) => [method, {
    ...def,
    requestDeserialize: (bytes: Buffer) => {
      try {
        return def.requestDeserialize(bytes);
      } catch (err) {
        return { [UNDECODABLE]: (err as Error)?.message ?? String(err) };
      }
    },
  }]));
}

/** The request, or INVALID_ARGUMENT when its bytes were not a message of its type. */
function decodedRequest<T>(request: T): T {
  const failure = (request as Record<symbol, unknown> | null)?.[UNDECODABLE];
  if (failure !== undefined) throw new RpcError(grpc.status.INVALID_ARGUMENT, `the request could not be decoded: ${String(failure)}`);
  return request;
}

/** Runs a unary handler on a decoded request under a server span (when one is sampled). */
function runUnary(spanName: string, handler: UnaryHandler, request: unknown, parent: Context): Promise<unknown> {
  const { span, context } = beginSpan(spanName, SpanKind.SERVER, parent);
  return runIn(context, async () => handler(decodedRequest(request))).then((res) => {
    span?.end();
    return res;
  }, (err) => {
    recordFailure(span, err);
    span?.end();
    throw err;
  });
}

/** Wraps handlers written as async functions into grpc-js handlers with a server span each (when one is sampled);
 * the unary ones are served on the multiplex too. */
function wrap(serviceName: string, service: grpc.ServiceDefinition, handlers: Handlers, multiplex: MultiplexServer): grpc.UntypedServiceImplementation {
  const impl: grpc.UntypedServiceImplementation = {};
  for (const [method, def] of Object.entries(service)) {
    const handler = handlers[method] ?? handlers[def.originalName ?? method];
    if (!handler) continue;
    const spanName = `${serviceName}/${method}`;
    if (def.responseStream) {
      impl[method] = (call: grpc.ServerWritableStream<any, any>) => {
        const { span, context } = beginSpan(spanName, SpanKind.SERVER, parentOf(call));
        if (span) call.on('close', () => span.end());
        runIn(context, () => Promise.resolve().then(() => { decodedRequest(call.request); return (handler as StreamHandler)(call); }).catch((err) => {
          recordFailure(span, err);
          // grpc-js turns an 'error' on a server stream into the call's status; destroy() would drop it.
          call.emit('error', toServiceError(err));
        }));
      };
    } else {
      impl[method] = (call: grpc.ServerUnaryCall<any, any>, callback: grpc.sendUnaryData<any>) => {
        runUnary(spanName, handler as UnaryHandler, call.request, parentOf(call)).then((res) => callback(null, res), (err) => callback(toServiceError(err)));
      };
      multiplex.add(def.path, {
        deserialize: def.requestDeserialize, serialize: def.responseSerialize,
        run: (request, parent) => runUnary(spanName, handler as UnaryHandler, request, parent),
      });
    }
  }
  return impl;
}

export interface RunningServer {
  server: grpc.Server;
  port: number;
  health: HealthService;
  stop(): Promise<void>;
}

const serverOptions: grpc.ServerOptions = {
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
};

/** Binds a gRPC server with the given services and the standard health service, on `host:port` or `unix:///path`. */
export async function serve(address: string,
  services: Array<{ name: string; definition: grpc.ServiceDefinition; handlers: Handlers }>): Promise<RunningServer> {
  const server = new grpc.Server(serverOptions);
  const health = new HealthService({ '': 'SERVING' });
  const multiplex = new MultiplexServer(failureOf);
  for (const s of services) {
    const definition = tolerantDefinition(s.definition);
    server.addService(definition, wrap(s.name, definition, s.handlers, multiplex));
    health.setStatus(s.name, 'SERVING');
  }
  server.addService(multiplexDefinition, { Batches: multiplex.handler });
  health.addToServer(server);
  await prepareSocket(address);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  return {
    server, port, health,
    stop: () => new Promise<void>((resolve) => {
      // Clients following its health (replicated ones) move to another replica before the server goes.
      for (const name of ['', ...services.map((s) => s.name)]) health.setStatus(name, 'NOT_SERVING');
      const timer = setTimeout(() => { server.forceShutdown(); resolve(); }, 2000);
      // The multiplexed streams stay open for good: they end once their calls are answered, then the server can stop.
      void multiplex.drain().then(() => server.tryShutdown(() => { clearTimeout(timer); resolve(); }));
    }),
  };
}

/**
 * Runs a program's gRPC server: binds (exit 1 with a clear message when it cannot),
 * announces `<program> listening on host:port` (or `unix:///path`), and on SIGINT/SIGTERM runs
 * `beforeStop`, stops the server, runs `afterStop`, flushes traces and exits 0.
 */
export async function runServer(program: string, listen: string,
  services: Array<{ name: string; definition: grpc.ServiceDefinition; handlers: Handlers }>,
  hooks: { beforeStop?: () => Promise<void> | void; afterStop?: () => Promise<void> | void } = {}): Promise<RunningServer> {
  const server = await serve(listen, services).catch((err: Error) => {
    process.stderr.write(`${program}: cannot listen on ${listen}: ${err.message}\n`);
    process.exit(1);
  });
  const where = unixPath(listen) ? listen : `${listen.slice(0, listen.lastIndexOf(':'))}:${server.port}`;
  process.stdout.write(`${program} listening on ${where}\n`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${program}: ${signal}, shutting down\n`);
    const before = Promise.resolve(hooks.beforeStop?.());
    await server.stop();
    await before;
    await hooks.afterStop?.();
    await shutdownTracing();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  return server;
}
