// A tiny OTLP/HTTP trace collector for tests: accepts the JSON encoding that
// @opentelemetry/exporter-trace-otlp-http sends to POST /v1/traces and keeps
// every span with the service.name of its resource.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** OTLP/JSON carries ids as hex; the protobuf-to-JSON mapping would give base64. */
function hexId(id: unknown): string {
  if (typeof id !== 'string' || id === '') return '';
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
}

function serviceName(resource: any): string {
  const attr = (resource?.attributes ?? []).find((a: any) => a.key === 'service.name');
  return String(attr?.value?.stringValue ?? '');
}

/** The spans of one ExportTraceServiceRequest. */
export function parseExport(body: any): CollectedSpan[] {
  return (body?.resourceSpans ?? []).flatMap((rs: any) => {
    const service = serviceName(rs.resource);
    return (rs.scopeSpans ?? []).flatMap((ss: any) => (ss.spans ?? []).map((s: any): CollectedSpan => ({
      service, traceId: hexId(s.traceId), spanId: hexId(s.spanId), parentSpanId: hexId(s.parentSpanId), name: String(s.name), kind: Number(s.kind ?? 0),
    })));
  });
}

export class OtlpCollector {
  readonly spans: CollectedSpan[] = [];
  /** Every export as received (JSON text), so a test can look for what must never be exported. */
  readonly exports: string[] = [];
  /** Requests that could not be read, so a test can say why spans are missing. */
  readonly rejected: string[] = [];
  private readonly server = http.createServer((req, res) => this.handle(req, res));

  /** Listens on a free loopback port. */
  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    return this;
  }

  /** The value for OTEL_EXPORTER_OTLP_ENDPOINT; the exporter appends /v1/traces. */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  trace(traceId: string): CollectedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => {
      try {
        const body = this.decode(req, Buffer.concat(chunks));
        this.exports.push(JSON.stringify(body));
        this.spans.push(...parseExport(body));
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
      } catch (err) {
        this.rejected.push((err as Error).message);
        res.writeHead(400).end();
      }
    });
  }

  private decode(req: http.IncomingMessage, raw: Buffer): unknown {
    const type = req.headers['content-type'] ?? '';
    if (!type.startsWith('application/json')) throw new Error(`unsupported Content-Type ${type}`);
    const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
    return JSON.parse(body.toString('utf8'));
  }
}
