// /livez, /readyz and /healthz: named checks, `verbose` and `exclude` as document 1.
import type Koa from 'koa';

export type Check = { name: string; run: () => Promise<void> | void };

export async function serveHealth(ctx: Koa.Context, endpoint: string, checks: Check[]): Promise<void> {
  const only = ctx.path.split('/')[2];
  const selected = only ? checks.filter((c) => c.name === decodeURIComponent(ctx.path.split('/').slice(2).join('/'))) : checks;
  if (only && selected.length === 0) {
    ctx.status = 404;
    ctx.body = `${ctx.path} not found`;
    return;
  }
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
