// The steps every request takes before it is routed, in one chain of plain calls
// (one Koa middleware) rather than a middleware each: the request's scope for
// stray errors, metrics, Status errors, the deadline and compression around a
// trace span, authentication, the request info, an in-flight slot and authorization.
import type Koa from 'koa';
import { promisify } from 'node:util';
import { createGzip, gzip } from 'node:zlib';
import { Readable, pipeline } from 'node:stream';
import { SpanKind, SpanStatusCode, beginSpan, extractContext, runIn, type Span } from '../internal/tracing/index.js';
import { StatusError, internalError } from '../internal/apimachinery/status.js';
import type { Backends, UserInfo } from './backends.js';
import { requestInfo, withoutUpstreamNames, type RequestInfo } from './requestinfo.js';
import { authorizeRequest } from './authorization.js';
import { authenticateRequest } from './authentication.js';
import { COMPRESSION_THRESHOLD, plainFormatOf, presentedStatus, writeBody } from './respond.js';
import type { GatewayMetrics } from './metrics.js';
import type { InflightLimiter } from './inflight.js';
import { deadlineFor, withDeadline } from './timeout.js';
import { requestScope } from './stray.js';
import { headerValue } from './headers.js';
import { requestQuery } from './context.js';

export type State = { info: RequestInfo; user: UserInfo; cbor: boolean; terminated?: boolean };
type Context = Koa.ParameterizedContext<State>;

export interface PipelineOptions {
  backends: Backends;
  metrics: GatewayMetrics;
  inflight: InflightLimiter;
  /** `--request-timeout` in milliseconds (0: none). */
  requestTimeoutMs: number;
  /** gzip for large bodies when the client accepts it (gate APIResponseCompression). */
  compression: boolean;
  /** Whether CBOR is served (gate CBORServingAndStorage). */
  cbor: () => boolean;
  /** `--serve-upstream-group-names`: renamed groups are served under their upstream spelling too. */
  upstreamGroupNames: boolean;
  /** Whether a group is served under that very name: a CRD's group in the upstream spelling is not an alias of ours. */
  servesGroup: (group: string) => boolean;
  /** Serves an authenticated, authorized request. */
  serve: (ctx: Context) => Promise<void>;
}

const gzipAsync = promisify(gzip);

/** The app's middleware: every step before routing, as functions made once rather than a middleware (and its
 * promise and dispatch closure) per step and request. */
export function requestPipeline(o: PipelineOptions): Koa.Middleware<State> {
  const authorized = async (ctx: Context): Promise<void> => {
    const user = await authenticateRequest(ctx, o.backends);
    ctx.state.user = user;
    // The deadline may have resolved the info already; it is served in the group spellings served.
    const info = ctx.state.info ?? requestInfo(ctx.method, ctx.path, requestQuery(ctx));
    const literal = info.groupAlias !== undefined && o.servesGroup(info.groupAlias);
    ctx.state.info = o.upstreamGroupNames && !literal ? info : withoutUpstreamNames(info);
    const kind = o.inflight.enter(ctx.state.info, user, ctx.state);
    try {
      const q = requestQuery(ctx);
      await authorizeRequest(o.backends, user, ctx.state.info, { fieldSelector: q.getAll('fieldSelector').join(','), labelSelector: q.getAll('labelSelector').join(',') });
      await o.serve(ctx);
    } finally {
      if (kind) o.inflight.leave(kind);
    }
  };
  const traced = (ctx: Context): Promise<void> => {
    ctx.state.cbor = o.cbor();
    const { span, context } = beginSpan(() => `${ctx.method} ${ctx.path}`, SpanKind.SERVER,
      extractContext((k) => ctx.get(k) || undefined), () => ({ 'http.request.method': ctx.method, 'url.path': ctx.path }));
    return span ? inSpan(ctx, span, runIn(context, authorized, ctx)) : runIn(context, authorized, ctx);
  };
  const frame = async (ctx: Context): Promise<void> => {
    const started = performance.now();
    try {
      const ms = deadlineFor(ctx, o.requestTimeoutMs);
      await (ms === undefined ? traced(ctx) : withDeadline(ctx, ms, traced(ctx)));
    } catch (err) {
      writeFailure(ctx, err);
    } finally {
      o.metrics.record(ctx, started);
    }
    if (o.compression) await compress(ctx);
  };
  return (ctx) => requestScope(ctx, frame);
}

/** Ends a server span (continuing an incoming traceparent) once its request is served. */
async function inSpan(ctx: Context, span: Span, work: Promise<void>): Promise<void> {
  try {
    await work;
  } finally {
    span.setAttribute('http.response.status_code', ctx.status);
    if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }
}

/** Writes any failure as a Status object with its code. */
function writeFailure(ctx: Koa.Context, err: unknown): void {
  const status = err instanceof StatusError ? err : internalError((err as Error).message);
  if (!(err instanceof StatusError)) console.error(`gateway: ${ctx.method} ${ctx.path}:`, err);
  if (ctx.res.headersSent) { ctx.res.destroy(); return; }
  ctx.respond = true;
  for (const [k, v] of Object.entries(status.headers)) ctx.set(k, headerValue(v));
  writeBody(ctx, status.code, presentedStatus(ctx, status.toStatus()), plainFormatOf(ctx));
}

/** gzip for a large body when the client accepts it. */
async function compress(ctx: Koa.Context): Promise<void> {
  const body = ctx.body;
  // A streamed body (a large list) is compressed as it is written.
  const streamed = body instanceof Readable;
  if (ctx.respond === false || !(typeof body === 'string' || Buffer.isBuffer(body) || streamed)) return;
  if ((!streamed && Buffer.byteLength(body) < COMPRESSION_THRESHOLD) || !/\bgzip\b/.test(ctx.get('Accept-Encoding'))) return;
  const type = ctx.response.get('Content-Type');
  // pipeline: a stream that fails (or is destroyed) ends the gzip stream, and the response, with it.
  ctx.body = streamed ? pipeline(body, createGzip(), () => {}) : await gzipAsync(body);
  ctx.set('Content-Type', type);
  ctx.set('Content-Encoding', 'gzip');
  ctx.vary('Accept-Encoding');
}
