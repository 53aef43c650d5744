// OpenTelemetry for every process: W3C trace context carried in gRPC metadata, NATS
// headers and HTTP headers, and spans recorded only when an exporter is configured and
// the sampler may sample them. Otherwise no span is built: the work runs under the
// incoming context, which it forwards unchanged, as a no-op tracer provider does.
// The SDK and the exporter are loaded only when an exporter is configured.
import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Attributes, type Tracer, type TextMapGetter } from '@opentelemetry/api';
// The propagator's own module: the package's index loads the whole of it (timers, platform code, exporters' helpers),
// which doubled what tracing costs every process at start.
import { W3CTraceContextPropagator } from '@opentelemetry/core/build/src/trace/W3CTraceContextPropagator.js';
import { maySample, samplingFromEnv, sdkSampler, type Sampling } from './sampling.js';

export { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace };
export type { Span, Context };

const TRACEPARENT = 'traceparent';
const TRACESTATE = 'tracestate';

/** The trace context of the work under way; kept here rather than in the global context API, which
 * looks its manager up on every call. Spans are always started with an explicit parent. */
const current = new AsyncLocalStorage<Context>();
const propagator = new W3CTraceContextPropagator();

let initialized = false;
let provider: { shutdown(): Promise<void> } | undefined;
/** Set only when spans can be exported. */
let recorder: { tracer: Tracer; sampling: Sampling } | undefined;

const exporterConfigured = (env: NodeJS.ProcessEnv): boolean =>
  Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';

/** Starts tracing for this process: spans are recorded, under the OTEL_TRACES_SAMPLER sampler, and
 * exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set. The context propagates regardless. */
export async function initTracing(serviceName: string): Promise<void> {
  if (initialized) return;
  initialized = true;
  if (!exporterConfigured(process.env)) return;
  const sampling = samplingFromEnv();
  const [sdk, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace'), import('@opentelemetry/exporter-trace-otlp-http'), import('@opentelemetry/resources'),
  ]);
  const tracerProvider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    sampler: sdkSampler(sampling, sdk),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter: new OTLPTraceExporter(), scheduledDelayMillis: 200 })],
  });
  provider = tracerProvider;
  recorder = { tracer: tracerProvider.getTracer('svc-apiserver'), sampling };
}

/** Flushes and stops the exporter; call before the process exits. */
export async function shutdownTracing(): Promise<void> {
  await provider?.shutdown().catch(() => undefined);
}

/** The trace context of the work under way. */
export const activeContext = (): Context => current.getStore() ?? ROOT_CONTEXT;

/** A span begun under a parent: `span` only when it records; `context` is what the work runs in (and propagates). */
export interface Begun {
  span?: Span;
  context: Context;
}

/** Begins a span when it may be sampled; name and attributes are only built for a span that records. */
export function beginSpan(name: string | (() => string), kind: SpanKind, parent: Context, attributes?: () => Attributes): Begun {
  if (!recorder || !maySample(recorder.sampling, trace.getSpanContext(parent))) return { context: parent };
  const span = recorder.tracer.startSpan(typeof name === 'string' ? name : name(), { kind }, parent);
  const ctx = trace.setSpan(parent, span);
  if (!span.isRecording()) return { context: ctx };
  if (attributes) span.setAttributes(attributes());
  return { span, context: ctx };
}

/** Runs fn(...args) with ctx active; without any context switch when it is active already. */
export function runIn<A extends unknown[], T>(ctx: Context, fn: (...args: A) => T, ...args: A): T {
  return ctx === activeContext() ? fn(...args) : current.run(ctx, fn, ...args);
}

/** Marks a span failed with err. */
export function recordFailure(span: Span | undefined, err: unknown, exception = false): void {
  if (!span) return;
  if (exception) span.recordException(err as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: String((err as Error)?.message ?? err) });
}

interface SpanOptions {
  kind?: SpanKind;
  parent?: Context;
}

/** Runs fn inside a span, ending it (with the error recorded) when fn settles. fn gets the span when it records. */
export async function withSpan<T>(name: string, attributes: () => Attributes, fn: (span?: Span) => Promise<T>,
  options: SpanOptions = {}): Promise<T> {
  const { span, context } = beginSpan(name, options.kind ?? SpanKind.INTERNAL, options.parent ?? activeContext(), attributes);
  if (!span) return runIn(context, () => fn(undefined));
  try {
    return await current.run(context, () => fn(span));
  } catch (err) {
    recordFailure(span, err, true);
    throw err;
  } finally {
    span.end();
  }
}

/** withSpan for synchronous work. */
export function withSpanSync<T>(name: string, attributes: () => Attributes, fn: (span?: Span) => T, options: SpanOptions = {}): T {
  const { span, context } = beginSpan(name, options.kind ?? SpanKind.INTERNAL, options.parent ?? activeContext(), attributes);
  if (!span) return runIn(context, () => fn(undefined));
  try {
    return current.run(context, () => fn(span));
  } catch (err) {
    recordFailure(span, err, true);
    throw err;
  } finally {
    span.end();
  }
}

/** Writes the active (or given) trace context (traceparent, tracestate) through set; nothing when there is none. */
export function injectContext(set: (key: string, value: string) => void, ctx: Context = activeContext()): void {
  if (trace.getSpanContext(ctx)) propagator.inject(ctx, undefined, { set: (_c, key, value) => set(key, value) });
}

/** The context a carrier of headers or metadata continues: the active one when it carries no traceparent. */
export function extractContext(get: (key: string) => string | undefined): Context {
  const active = activeContext();
  const traceparent = get(TRACEPARENT);
  if (!traceparent) return active;
  const getter: TextMapGetter<undefined> = {
    get: (_c, key) => (key === TRACEPARENT ? traceparent : get(key)),
    keys: () => [TRACEPARENT, TRACESTATE],
  };
  return propagator.extract(active, undefined, getter);
}
