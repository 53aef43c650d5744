// Table columns most kinds share.
import type { ApiObject } from '../apimachinery/meta.js';
import type { TableColumn } from './types.js';

/** A duration as kubectl shows ages: 45s, 12m, 5h, 3d, 2y. */
export function humanAge(from: string | undefined, now = Date.now()): string {
  if (!from) return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(from)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return `${h}h${m % 60 ? `${m % 60}m` : ''}`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return `${d}d${h % 24 ? `${h % 24}h` : ''}`;
  return d < 365 * 2 ? `${d}d` : `${Math.floor(d / 365)}y`;
}

export const nameColumn: TableColumn = {
  name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.',
  cell: (o: ApiObject) => o.metadata?.name ?? '',
};

export const ageColumn: TableColumn = {
  name: 'Age', type: 'string', description: 'The time since the object was created.',
  cell: (o: ApiObject) => humanAge(o.metadata?.creationTimestamp),
};

export const createdAtColumn: TableColumn = {
  name: 'Created At', type: 'date', description: 'The time the object was created.',
  cell: (o: ApiObject) => o.metadata?.creationTimestamp ?? '',
};

/** A column from its header, type, description and cell; priority 1 shows only with `-o wide`. */
export function column(name: string, type: TableColumn['type'], description: string, cell: (o: ApiObject) => unknown, priority = 0): TableColumn {
  return { name, type, description, cell, ...(priority ? { priority } : {}) };
}

const record = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : {});
const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.map(record) : []);

/** The member at a dotted path, e.g. `spec.template.spec`. */
export const pathOf = (o: unknown, path: string): unknown => path.split('.').reduce<unknown>((cur, k) => record(cur)[k], o);

/** A label selector as kubectl prints it: `app=web,tier in (a,b)`, `<none>` when empty. */
export function selectorText(selector: unknown): string {
  const sel = record(selector);
  const parts = Object.entries(record(sel.matchLabels)).map(([k, v]) => `${k}=${v}`);
  for (const e of list(sel.matchExpressions)) {
    const values = Array.isArray(e.values) ? e.values.join(',') : '';
    if (e.operator === 'Exists') parts.push(String(e.key));
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${String(e.operator).toLowerCase()} (${values})`);
  }
  return parts.length ? parts.join(',') : '<none>';
}

/** A map selector (Services, ReplicationControllers) as `k=v,...`. */
export const mapSelectorText = (selector: unknown): string =>
  Object.entries(record(selector)).map(([k, v]) => `${k}=${v}`).join(',') || '<none>';

/** Wide columns of workloads: the template's containers and images, and the selector. */
export function templateColumns(selectorPath = 'spec.selector', text = selectorText, podSpecPath = 'spec.template.spec'): TableColumn[] {
  const containers = (o: ApiObject) => list(pathOf(o, `${podSpecPath}.containers`));
  return [
    column('Containers', 'string', 'Names of each container in the template.', (o) => containers(o).map((c) => c.name).join(','), 1),
    column('Images', 'string', 'Images referenced by each container in the template.', (o) => containers(o).map((c) => c.image).join(','), 1),
    column('Selector', 'string', 'Label selector for pods.', (o) => text(pathOf(o, selectorPath)), 1),
  ];
}

/** A number or zero. */
export const count = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** `a,b,c` of at most three members then `+ N more...`, as kubectl shortens lists. */
export function shortList(items: string[], max = 3): string {
  if (items.length === 0) return '<none>';
  const shown = items.slice(0, max).join(',');
  return items.length > max ? `${shown} + ${items.length - max} more...` : shown;
}

/** The status of the condition of a type, or undefined. */
export const conditionStatus = (o: unknown, type: string): string | undefined =>
  list(pathOf(o, 'status.conditions')).find((c) => c.type === type)?.status as string | undefined;
