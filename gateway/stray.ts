// Errors no request handler awaited (a rejected promise nobody waits for, an
// 'error' event nobody listens to) are logged with the request they came from
// and the gateway keeps serving: one bad request must not end every other one.
import { AsyncLocalStorage } from 'node:async_hooks';
import type Koa from 'koa';

const current = new AsyncLocalStorage<string>();
/** Paths are logged only this far: they may be a megabyte long. */
const LOGGED_PATH_CHARS = 200;

/** Runs `serve(ctx)` remembering, for everything it sets off, which request it was. */
export function requestScope<C extends Pick<Koa.Context, 'method' | 'path'>>(ctx: C, serve: (ctx: C) => Promise<void>): Promise<void> {
  return current.run(`${ctx.method} ${ctx.path.slice(0, LOGGED_PATH_CHARS)}`, serve, ctx);
}

/** Logs stray errors instead of exiting. Stray errors carry no shared state of the gateway's
 * that they could leave half-changed (requests share only caches that are rebuilt), so serving on is safe. */
export function logStrayErrors(service: string): void {
  const log = (what: string) => (err: unknown) => {
    const during = current.getStore();
    console.error(`${service}: ${what}${during ? ` during ${during}` : ''}:`, err);
  };
  process.on('unhandledRejection', log('unhandled rejection'));
  process.on('uncaughtException', log('uncaught exception'));
}
