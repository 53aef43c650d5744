// The deadline of every request that is not long-running, as upstream's timeout
// filter: `--request-timeout`, or the shorter `?timeout=` the client asked for.
// When it passes the client gets 504 Timeout; the work behind it is left to finish
// (it still holds its in-flight slot) and its late outcome is only logged.
import type Koa from 'koa';
import { StatusError, badRequest, requestTimeout } from '../internal/apimachinery/status.js';
import { requestInfo } from './requestinfo.js';
import { isLongRunning } from './inflight.js';
import { parseDuration } from '../internal/apimachinery/protobuf/time.js';

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
  const asked = ctx.query.timeout;
  if (asked === undefined) return serverMs;
  const text = Array.isArray(asked) ? asked[0] : asked;
  const ms = parseGoDuration(text);
  if (ms === undefined) throw badRequest(`invalid timeout specified in the request URL - time: invalid duration "${text}"`);
  return ms > 0 && ms < serverMs ? ms : serverMs;
}

/** Resolves the request info once for the whole chain; a path that does not parse is refused later, after authentication. */
function longRunning(ctx: Koa.Context): boolean {
  try {
    ctx.state.info = requestInfo(ctx.method, ctx.path, new URLSearchParams(ctx.querystring));
    return isLongRunning(ctx.state.info);
  } catch {
    return false; // refused quickly
  }
}

/** Ends non-long-running requests at their deadline with 504; `serverMs` 0 turns it off. */
export function requestDeadline(serverMs: number) {
  return async (ctx: Koa.Context, next: Koa.Next): Promise<void> => {
    if (serverMs <= 0 || longRunning(ctx)) return next();
    const ms = deadlineOf(ctx, serverMs);
    const work = next();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => { timer = setTimeout(() => resolve('expired'), ms); });
    try {
      if ((await Promise.race([work, expired])) !== 'expired') return;
    } finally {
      clearTimeout(timer);
    }
    work.catch((err) => {
      if (!(err instanceof StatusError)) console.error(`gateway: ${ctx.method} ${ctx.path} failed after its timeout:`, err);
    });
    ctx.state.terminated = true;
    ctx.set('Connection', 'close'); // a body still arriving is not read any further
    throw requestTimeout();
  };
}
