// The 409 an apply answers when it would change fields other managers own.
import { StatusError } from '../../apimachinery/status.js';
import { pathString, type Path } from './fieldpath.js';
import { printManager, type ManagerEntry } from './managed.js';

export interface Conflict {
  manager: ManagerEntry;
  path: Path;
}

/** Conflicts grouped by manager (managers in identity order), each manager's paths in field order. */
export class ApplyConflictError extends StatusError {
  constructor(readonly conflicts: Conflict[]) {
    super(409, 'Conflict', conflictMessage(conflicts), {
      causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) })),
    });
  }
}

function conflictMessage(conflicts: Conflict[]): string {
  if (conflicts.length === 1) {
    return `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0].manager)}: ${pathString(conflicts[0].path)}`;
  }
  const lines: string[] = [];
  let last: ManagerEntry | undefined;
  for (const c of conflicts) {
    if (c.manager !== last) lines.push(`conflicts with ${printManager(c.manager)}:`);
    last = c.manager;
    lines.push(`- ${pathString(c.path)}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}
