// Aligned text tables for the benchmark figures.

type Row = Record<string, unknown>;

/** A table of string cells; columns whose cells all look numeric are right-aligned. */
export function grid(title: string, header: string[], rows: string[][]): string {
  const cells = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...cells.map((line) => (line[c] ?? '').length)));
  const numeric = header.map((_, c) => rows.every((r) => /^(-|[\d,.]+x?|)$/.test(r[c] ?? '')));
  const render = (line: string[]) => line.map((v = '', c) => (numeric[c] && line !== header ? v.padStart(widths[c]) : v.padEnd(widths[c]))).join('  ').trimEnd();
  return [title, render(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(render)].join('\n');
}

/** 1,234 · 12.3 · 0.12: the precision a reader needs at each magnitude. */
export function num(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '-';
  const abs = Math.abs(n);
  if (abs >= 100) return Math.round(n).toLocaleString('en-US');
  return n.toFixed(abs >= 10 ? 1 : abs >= 0.1 || abs === 0 ? 2 : 3);
}

/** A ratio as 0.19x. */
export const ratio = (a: number | undefined, b: number | undefined): string =>
  a === undefined || b === undefined || !Number.isFinite(a / b) ? '-' : `${num(a / b)}x`;

const HEADERS: Record<string, string> = { name: 'benchmark', opsPerSec: 'ops/s', p50Ms: 'p50 ms', p99Ms: 'p99 ms' };

/** A table of benchmark rows; columns are the keys of the rows in order of first appearance. */
export function rowsTable(title: string, rows: Row[]): string {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (key: string, value: unknown): string => {
    if (typeof value !== 'number') return value === undefined ? '' : String(value);
    if (!Number.isFinite(value)) return '-';
    return key.endsWith('Ms') ? value.toFixed(2) : Math.round(value).toLocaleString('en-US');
  };
  return grid(title, keys.map((k) => HEADERS[k] ?? k), rows.map((r) => keys.map((k) => cell(k, r[k]))));
}
