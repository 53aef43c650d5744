// Reading request bodies and the options they or the query carry.
import type Koa from 'koa';
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { isObject } from '../internal/apimachinery/meta.js';
import { badRequest, requestEntityTooLarge, unsupportedMediaType } from '../internal/apimachinery/status.js';
import { MEDIA_CBOR, decodeBody, isProtobuf } from './negotiation.js';
import { checkDeleteOptionTypes } from './deleteoptions.js';
import { cborEnabled } from './respond.js';
import type { DeleteOptions } from './store/strategy.js';

/** The largest request body accepted, as the upstream server's 3 MiB. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** The body, refused with 413 once it passes the limit: up front when its Content-Length says so, else while it arrives
 * (then the request is destroyed, as nothing more of it will be read). Read by events: an async iterator per request costs more. */
export function readRaw(ctx: Koa.Context): Promise<Buffer> {
  if (Number(ctx.get('Content-Length')) > MAX_BODY_BYTES) return Promise.reject(requestEntityTooLarge(MAX_BODY_BYTES));
  const req = ctx.req;
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err?: Error) => {
      req.off('data', onData).off('end', onEnd).off('error', done).off('close', onClose);
      if (err) reject(err);
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size <= MAX_BODY_BYTES) return;
      done(requestEntityTooLarge(MAX_BODY_BYTES));
      req.destroy();
    };
    const onEnd = () => done();
    const onClose = () => done(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    req.on('data', onData).on('end', onEnd).on('error', done).on('close', onClose);
  });
}

/** The request body as an object with the fields it repeats; 400 when it is missing or not an object. */
export async function readObject(ctx: Koa.Context): Promise<{ obj: ApiObject; duplicates: string[] }> {
  const raw = await readRaw(ctx);
  if (raw.length === 0) throw badRequest('the request body is empty');
  const duplicates: string[] = [];
  const body = decodeBody(raw, ctx.get('Content-Type') || undefined, cborEnabled(ctx), duplicates);
  if (!isObject(body)) throw badRequest('the request body must be an object');
  return { obj: body as ApiObject, duplicates };
}

/** A custom kind has no Protobuf form: a body in it is refused (415) with the types the kind does read. */
export function refuseProtobufBody(ctx: Koa.Context): void {
  const type = (ctx.get('Content-Type') || '').split(';')[0].trim().toLowerCase();
  if (isProtobuf(type)) throw unsupportedMediaType(type, ['application/json', 'application/yaml', ...(cborEnabled(ctx) ? [MEDIA_CBOR] : [])]);
}

/** `dryRun=All` (or no value) asks for a dry run; any other value is a 400. */
export function isDryRun(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  for (const v of values) {
    if (v !== 'All' && v !== '') throw badRequest(`dryRun: Unsupported value: "${v}": supported values: "All"`);
  }
  return values.includes('All');
}

/** DeleteOptions from the body when there is one, else from the query. */
export async function readDeleteOptions(ctx: Koa.Context, query: URLSearchParams): Promise<DeleteOptions> {
  const raw = await readRaw(ctx);
  const parsed: unknown = raw.length ? decodeBody(raw, ctx.get('Content-Type') || undefined, cborEnabled(ctx)) : {};
  if (!isObject(parsed)) throw badRequest('the request body must be a DeleteOptions object');
  checkDeleteOptionTypes(parsed);
  const opts = parsed as DeleteOptions;
  const grace = query.get('gracePeriodSeconds');
  if (grace !== null) {
    if (!/^-?\d+$/.test(grace)) throw badRequest(`gracePeriodSeconds: Invalid value: "${grace}"`);
    opts.gracePeriodSeconds = Number(grace);
  }
  if (query.get('propagationPolicy')) opts.propagationPolicy = query.get('propagationPolicy')!;
  if (query.get('orphanDependents') !== null) opts.orphanDependents = query.get('orphanDependents') === 'true';
  const policies = ['Orphan', 'Background', 'Foreground'];
  if (opts.propagationPolicy && !policies.includes(opts.propagationPolicy)) {
    throw badRequest(`propagationPolicy: Unsupported value: "${opts.propagationPolicy}": supported values: "Foreground", "Background", "Orphan"`);
  }
  if (opts.dryRun?.some((d) => d !== 'All')) throw badRequest('dryRun: Unsupported value: supported values: "All"');
  return opts;
}
