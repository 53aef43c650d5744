// The deadline of every request that is not long-running, as upstream's timeout
// filter: `--request-timeout`, or the shorter `?timeout=` the client asked for.
// When it passes the client gets 504 Timeout; the work behind it is left to finish
// (it still holds its in-flight slot) and its late outcome is only logged.
import type Koa from 'koa';
import { StatusError, badRequest, requestTimeout } from '../internal/apimachinery/status.js';
import { requestInfo } from './requestinfo.js';
import { isLongRunning } from './inflight.js';

const GO_DURATION = /^[-+]?((\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/;
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration (`30s`, `1m30s`, `1.5h`, `0`) in milliseconds; undefined when it is not one. */
export function parseGoDuration(text: string): number | undefined {
  if (text === '0' || text === '+0' || text === '-0') return 0;
  if (!GO_DURATION.test(text)) return undefined;
  const sign = text.startsWith('-') ? -1 : 1;
  let ms = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) ms += Number(m[1]) * UNIT_MS[m[2]];
  return sign * ms;
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

function longRunning(ctx: Koa.Context): boolean {
  try {
    return isLongRunning(requestInfo(ctx.method, ctx.path, new URLSearchParams(ctx.querystring)));
  } catch {
    return false; // a path that does not parse is refused quickly
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
