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
