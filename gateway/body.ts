// Reading request bodies and the options they or the query carry.
import type Koa from 'koa';
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { isObject } from '../internal/apimachinery/meta.js';
import { badRequest, requestEntityTooLarge } from '../internal/apimachinery/status.js';
import { decodeBody } from './negotiation.js';
import { checkDeleteOptionTypes } from './deleteoptions.js';
import { cborEnabled } from './respond.js';
import type { DeleteOptions } from './store/strategy.js';

/** The largest request body accepted, as the upstream server's 3 MiB. */
export const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** The body, refused with 413 once it passes the limit: up front when its Content-Length says so, else while it arrives. */
export async function readRaw(ctx: Koa.Context): Promise<Buffer> {
  if (Number(ctx.get('Content-Length')) > MAX_BODY_BYTES) throw requestEntityTooLarge(MAX_BODY_BYTES);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw requestEntityTooLarge(MAX_BODY_BYTES);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
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
