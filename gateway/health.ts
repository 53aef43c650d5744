// /livez, /readyz and /healthz: named checks, `verbose` and `exclude` as document 1.
import type Koa from 'koa';
import { StatusError, badRequest } from '../internal/apimachinery/status.js';

export type Check = { name: string; run: () => Promise<void> | void };

export async function serveHealth(ctx: Koa.Context, endpoint: string, checks: Check[]): Promise<void> {
  const only = ctx.path.split('/').slice(2).join('/');
  const selected = only ? checks.filter((c) => c.name === checkName(only)) : checks;
  if (only && selected.length === 0) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
  const excluded = new Set(([] as string[]).concat((ctx.query.exclude as string | string[]) ?? []));
  const lines: string[] = [];
  let failed = false;
  for (const c of selected) {
    if (excluded.has(c.name)) { lines.push(`[+]${c.name} excluded: ok`); continue; }
    try {
      await c.run();
      lines.push(`[+]${c.name} ok`);
    } catch {
      failed = true;
      lines.push(`[-]${c.name} failed: reason withheld`);
    }
  }
  ctx.type = 'text/plain; charset=utf-8';
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.status = failed ? 500 : 200;
  const verbose = ctx.query.verbose !== undefined;
  if (failed || verbose) ctx.body = `${lines.join('\n')}\n${endpoint} check ${failed ? 'failed' : 'passed'}\n`;
  else ctx.body = 'ok';
}

/** The check a path names, %-decoded; a broken escape names none. */
function checkName(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw badRequest(`the path segment "${encoded}" is not valid percent-encoding`);
  }
}
