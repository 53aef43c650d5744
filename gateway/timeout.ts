// The deadline of every request that is not long-running, as upstream's timeout
// filter: `--request-timeout`, or the shorter `?timeout=` the client asked for.
// When it passes the client gets 504 Timeout; the work behind it is left to finish
// (it still holds its in-flight slot) and its late outcome is only logged.
import type Koa from 'koa';
import { StatusError, badRequest, requestTimeout } from '../internal/apimachinery/status.js';
import { requestInfo } from './requestinfo.js';
import { isLongRunning } from './inflight.js';
import { parseDuration } from '../internal/apimachinery/protobuf/time.js';
import { requestQuery } from './context.js';

const NANOS_PER_MS = 1e6;

/** A Go duration (`30s`, `1m30s`, `1.5h`, `0`) in milliseconds; undefined when it is not one. */
export function parseGoDuration(text: string): number | undefined {
  try {
    return parseDuration(text) / NANOS_PER_MS;
  } catch {
    return undefined;
  }
}

/** The request's deadline: the client's `timeout` when it is positive and shorter than the server's. */
function deadlineOf(ctx: Koa.Context, serverMs: number): number {
  const text = requestQuery(ctx).get('timeout');
  if (text === null) return serverMs;
  const ms = parseGoDuration(text);
  if (ms === undefined) throw badRequest(`invalid timeout specified in the request URL - time: invalid duration "${text}"`);
  return ms > 0 && ms < serverMs ? ms : serverMs;
}

/** Resolves the request info once for the whole chain; a path that does not parse is refused later, after authentication. */
function longRunning(ctx: Koa.Context): boolean {
  try {
    ctx.state.info = requestInfo(ctx.method, ctx.path, requestQuery(ctx));
    return isLongRunning(ctx.state.info);
  } catch {
    return false; // refused quickly
  }
}

/** The deadline (ms) of a request that is not long-running, resolving its info on the way; undefined when it
 * has none (`serverMs` 0 turns deadlines off). A `timeout` that is not a duration is refused with 400. */
export function deadlineFor(ctx: Koa.Context, serverMs: number): number | undefined {
  return serverMs <= 0 || longRunning(ctx) ? undefined : deadlineOf(ctx, serverMs);
}

/** `work`'s outcome, or 504 when `ms` pass first: the work is left to finish (its late failure is only logged). */
export function withDeadline(ctx: Koa.Context, ms: number, work: Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(expire, ms, ctx, work, reject);
    work.then(() => { clearTimeout(timer); resolve(); }, (err: unknown) => { clearTimeout(timer); reject(err); });
  });
}

function expire(ctx: Koa.Context, work: Promise<void>, reject: (err: unknown) => void): void {
  work.catch((err) => {
    if (!(err instanceof StatusError)) console.error(`gateway: ${ctx.method} ${ctx.path} failed after its timeout:`, err);
  });
  ctx.state.terminated = true;
  ctx.set('Connection', 'close'); // a body still arriving is not read any further
  reject(requestTimeout());
}
