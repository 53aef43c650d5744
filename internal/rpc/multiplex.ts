// Many unary calls over one long-lived stream per peer (proto svc/rpc/v1/multiplex.proto).
// A unary call in grpc-js opens an HTTP/2 stream, sends and parses headers, runs
// the interceptors, arms a deadline and ends with trailers, on both sides: most of
// what a small call costs. Over the multiplex a call is one frame each way on a
// stream that stays open. Servers answer it beside their services; a client tries
// it once per peer and falls back to plain calls when the peer does not serve it.
// Frames ready in the same turn of the event loop travel as one message (the
// answers of a group commit, the requests of a burst): grpc-js's work per message
// (framing, stream bookkeeping, write callbacks) is paid once for all of them.
import * as grpc from '@grpc/grpc-js';
import { ROOT_CONTEXT, extractContext, injectContext, runIn, type Context } from '../tracing/index.js';
import { api } from './api.js';
import { decodeFrames, encodeFrames, type Frame, type ReceivedFrame } from './framecodec.js';

const batches = api.svc.rpc.v1.Multiplex.service.Batches;
/** The Multiplex service with its messages (arrays of frames) (de)serialized by the frame codec. */
export const multiplexDefinition: grpc.ServiceDefinition = {
  Batches: {
    ...batches, requestSerialize: encodeFrames, requestDeserialize: decodeFrames, responseSerialize: encodeFrames, responseDeserialize: decodeFrames,
  },
};

/** Frames to send, written as one message at the end of this turn of the event loop. */
class Outbox {
  private frames: Frame[] = [];

  constructor(private readonly write: (frames: Frame[]) => void) {}

  get ids(): number[] {
    return this.frames.map((f) => f.id);
  }

  add(frame: Frame): void {
    if (this.frames.push(frame) === 1) setImmediate(() => this.flush());
  }

  /** Writes what is waiting now (a stream about to end sends its last answers first). */
  flush(): void {
    if (this.frames.length === 0) return;
    const frames = this.frames;
    this.frames = [];
    this.write(frames);
  }

  /** Drops what is waiting; answers the frames dropped. */
  clear(): Frame[] {
    const frames = this.frames;
    this.frames = [];
    return frames;
  }
}

/** A unary method as the multiplex serves it: bytes in, a decoded request run under its trace context, bytes out. */
export interface ServedMethod {
  deserialize(bytes: Buffer): unknown;
  serialize(response: unknown): Buffer;
  run(request: unknown, parent: Context): Promise<unknown>;
}

/** A failure as a frame carries it. */
export interface FailureFields {
  code: grpc.status;
  details: string;
  trailers: Record<string, string>;
}

/** Set on a failure whose call the server never ran (it was stopping): a client may send it elsewhere, even a write. */
export const UNPROCESSED_TRAILER = 'rpc-unprocessed';

interface ServedStream {
  call: grpc.ServerDuplexStream<ReceivedFrame[], Frame[]>;
  inFlight: number;
  ended: boolean;
  outbox: Outbox;
}

/** The server side: answers each request frame with the method it names, concurrently. */
export class MultiplexServer {
  private readonly methods = new Map<string, ServedMethod>();
  private readonly streams = new Set<ServedStream>();
  private draining = false;
  private drained?: () => void;

  constructor(private readonly failure: (err: unknown) => FailureFields) {}

  add(path: string, method: ServedMethod): void {
    this.methods.set(path, method);
  }

  /** The grpc-js handler of `Batches`. */
  readonly handler = (call: grpc.ServerDuplexStream<ReceivedFrame[], Frame[]>): void => {
    const stream: ServedStream = {
      call, inFlight: 0, ended: false,
      outbox: new Outbox((frames) => { if (!stream.ended && !call.cancelled) call.write(frames); }),
    };
    this.streams.add(stream);
    call.on('data', (frames: ReceivedFrame[]) => { for (const frame of frames) this.serve(stream, frame); });
    // The client half-closed (it closes its channel): answer what is in flight, then end.
    call.on('end', () => this.endWhenIdle(stream));
    call.on('error', () => this.forget(stream));
    call.on('close', () => this.forget(stream));
    if (this.draining) this.endWhenIdle(stream);
  };

  /** Ends every stream once the calls in flight on it are answered; frames arriving meanwhile are refused as
   * UNAVAILABLE (the caller tries again, reaching the next process). */
  drain(): Promise<void> {
    this.draining = true;
    const done = new Promise<void>((resolve) => { this.drained = resolve; });
    for (const stream of this.streams) this.endWhenIdle(stream);
    this.checkDrained();
    return done;
  }

  private serve(stream: ServedStream, frame: ReceivedFrame): void {
    const reply = (fields: Omit<Frame, 'id'>): void => {
      if (!stream.ended && !stream.call.cancelled) stream.outbox.add({ id: frame.id, ...fields });
    };
    // An ended stream runs nothing more: its clean end tells the client that what it did not answer never ran.
    if (stream.ended) return;
    const method = this.methods.get(frame.method);
    if (this.draining) return reply({ code: grpc.status.UNAVAILABLE, details: 'the server is shutting down', trailers: { [UNPROCESSED_TRAILER]: 'true' } });
    if (!method) return reply({ code: grpc.status.UNIMPLEMENTED, details: `unknown method ${frame.method}` });
    stream.inFlight++;
    const parent = hasEntries(frame.context) ? extractContext((k) => frame.context[k]) : ROOT_CONTEXT;
    // A response that does not serialize fails the call as INTERNAL, as grpc-js fails a plain one.
    method.run(method.deserialize(frame.payload), parent).then((response) => ({ payload: method.serialize(response) })).then(
      reply,
      (err) => reply(this.failure(err)),
    ).finally(() => {
      stream.inFlight--;
      if (this.draining) this.endWhenIdle(stream);
    });
  }

  private endWhenIdle(stream: ServedStream): void {
    if (stream.ended || stream.inFlight > 0) return;
    stream.outbox.flush();
    stream.ended = true;
    if (!stream.call.cancelled) stream.call.end();
    this.forget(stream);
  }

  private forget(stream: ServedStream): void {
    this.streams.delete(stream);
    this.checkDrained();
  }

  private checkDrained(): void {
    if (this.draining && this.streams.size === 0) this.drained?.();
  }
}

function hasEntries(map: Record<string, string>): boolean {
  for (const _ in map) return true;
  return false;
}

/** A ServiceError as grpc-js makes them, for failures the multiplex reports. */
export function serviceError(code: grpc.status, details: string, trailers: Record<string, string> = {}): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(trailers)) metadata.set(k, v);
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata });
}

interface Pending {
  resolve(response: unknown): void;
  reject(err: Error): void;
  deserialize(bytes: Buffer): unknown;
  /** The same call as a plain unary call, for a peer that does not serve the multiplex. */
  fallback(): Promise<unknown>;
  timer: NodeJS.Timeout;
}

/** The client side for one peer: one stream, opened on the first call and again after it ends. */
export class ClientMultiplexer {
  private stream?: grpc.ClientDuplexStream<Frame[], ReceivedFrame[]>;
  private readonly pending = new Map<number, Pending>();
  private readonly outbox = new Outbox((frames) => this.send(frames));
  private nextId = 1;
  private closed = false;
  /** The peer answered UNIMPLEMENTED: every call is a plain one from now on. */
  unsupported = false;

  constructor(private readonly client: grpc.Client) {}

  call<Res>(method: { path: string; requestSerialize(req: object): Buffer; responseDeserialize(bytes: Buffer): unknown },
    request: object, timeoutMs: number, fallback: () => Promise<Res>): Promise<Res> {
    const id = this.nextId++;
    const frame: Frame = { id, method: method.path, payload: method.requestSerialize(request) };
    injectContext((k, v) => { (frame.context ??= {})[k] = v; });
    return new Promise<Res>((resolve, reject) => {
      const timer = setTimeout(() => this.settle(id, (p) => p.reject(serviceError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'))), timeoutMs);
      this.pending.set(id, { resolve: resolve as (r: unknown) => void, reject, deserialize: method.responseDeserialize, fallback, timer });
      this.outbox.add(frame);
    });
  }

  /** Ends the stream; calls still waiting fail as CANCELLED. */
  close(): void {
    this.closed = true;
    this.stream?.cancel();
    for (const frame of this.outbox.clear()) {
      this.settle(frame.id, (p) => p.reject(serviceError(grpc.status.CANCELLED, 'the client was closed')));
    }
  }

  /** Writes frames on the stream, opening it when there is none; a stream that cannot be opened fails their calls. */
  private send(frames: Frame[]): void {
    try {
      this.open().write(frames);
    } catch (err) {
      const failure = serviceError(grpc.status.UNAVAILABLE, (err as Error)?.message ?? String(err), { [UNPROCESSED_TRAILER]: 'true' });
      for (const frame of frames) this.settle(frame.id, (p) => p.reject(failure));
    }
  }

  private open(): grpc.ClientDuplexStream<Frame[], ReceivedFrame[]> {
    if (this.stream) return this.stream;
    // Outside any request's trace context: the stream outlives the call that opened it.
    const stream = runIn(ROOT_CONTEXT, () => this.client.makeBidiStreamRequest(batches.path, encodeFrames, decodeFrames));
    this.stream = stream;
    stream.on('data', (frames: ReceivedFrame[]) => { for (const frame of frames) this.answer(frame); });
    stream.on('error', (err: grpc.ServiceError) => this.ended(stream, err));
    // Ended cleanly (no error before it), the server answered every call it ran: those unanswered never ran.
    stream.on('end', () => this.ended(stream, serviceError(grpc.status.UNAVAILABLE, 'the multiplexed stream ended', { [UNPROCESSED_TRAILER]: 'true' })));
    return stream;
  }

  private answer(frame: ReceivedFrame): void {
    this.settle(frame.id, (p) => {
      if (frame.code === grpc.status.OK) p.resolve(p.deserialize(frame.payload));
      else p.reject(serviceError(frame.code, frame.details, frame.trailers));
    });
  }

  /** The stream ended: the calls sent on it fail with its error (or become plain calls, when the peer does not serve
   * the multiplex); calls not sent yet go on the next stream. */
  private ended(stream: grpc.ClientDuplexStream<Frame[], ReceivedFrame[]>, err: grpc.ServiceError): void {
    if (this.stream !== stream) return;
    this.stream = undefined;
    if (err.code === grpc.status.UNIMPLEMENTED) this.unsupported = true;
    const unsent = new Set(this.unsupported || this.closed ? [] : this.outbox.ids);
    if (this.unsupported) this.outbox.clear();
    for (const id of [...this.pending.keys()]) {
      if (unsent.has(id)) continue;
      this.settle(id, (p) => (this.unsupported ? p.fallback().then(p.resolve, p.reject) : p.reject(err)));
    }
  }

  private settle(id: number, how: (p: Pending) => void): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    how(p);
  }
}
