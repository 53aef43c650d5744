// OpenTelemetry for every process: one tracer provider per process, W3C trace
// context carried in gRPC metadata, NATS headers and HTTP headers.
import { context, propagation, trace, SpanKind, SpanStatusCode, type Context, type Span, type Attributes } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

export { SpanKind, SpanStatusCode, context, trace };
export type { Span, Context };

let provider: NodeTracerProvider | undefined;

/** Starts tracing for this process; spans are exported over OTLP/HTTP when
 * OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) is set. */
export function initTracing(serviceName: string): void {
  if (provider) return;
  const spanProcessors: SpanProcessor[] = [];
  if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
    spanProcessors.push(new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: 200 }));
  }
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors,
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
}

/** Flushes and stops the exporter; call before the process exits. */
export async function shutdownTracing(): Promise<void> {
  await provider?.shutdown().catch(() => undefined);
}

export const tracer = () => trace.getTracer('svc-apiserver');

/** Runs fn inside a new span, ending it (with the error recorded) when fn settles. */
export async function withSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>,
  options: { kind?: SpanKind; parent?: Context } = {}): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}

/** Writes the active (or given) context into a string carrier (traceparent, tracestate). */
export function injectContext(carrier: Record<string, string>, ctx: Context = context.active()): Record<string, string> {
  propagation.inject(ctx, carrier);
  return carrier;
}

/** Reads a context from a carrier of headers or metadata. */
export function extractContext(get: (key: string) => string | undefined): Context {
  return propagation.extract(context.active(), {}, {
    get: (_c, key) => get(key),
    keys: () => ['traceparent', 'tracestate'],
  });
}
