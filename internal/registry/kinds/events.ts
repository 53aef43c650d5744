// The events group (v1): Event.
import type { ApiObject } from '../../apimachinery/meta.js';
import { invalid, oneOf, required, tooLong, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { asObj, str } from '../values.js';
import { eventColumns } from './core.js';

const MAX_NOTE = 1024;
const DEPRECATED = ['deprecatedSource', 'deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount'];

/** New-style events: who reported them, what happened, to which object, in its namespace. */
function validateEvent(obj: ApiObject, old?: ApiObject): Causes {
  const causes: Causes = [];
  if (!old) {
    for (const f of ['reportingController', 'reportingInstance', 'action', 'reason']) if (!obj[f]) causes.push(required(f));
    for (const f of DEPRECATED) if (obj[f] !== undefined) causes.push(invalid(f, obj[f], 'must be empty on new objects'));
  }
  causes.push(...oneOf('type', obj.type, ['Normal', 'Warning'], true));
  if (typeof obj.note === 'string' && obj.note.length > MAX_NOTE) causes.push(tooLong('note', MAX_NOTE));
  const namespace = obj.metadata?.namespace ?? '';
  const regarding = str(asObj(obj.regarding)?.namespace) ?? '';
  if (regarding && regarding !== namespace) causes.push(invalid('regarding.namespace', regarding, 'does not match event.namespace'));
  return causes;
}

const events: KindSpec = {
  shortNames: ['ev'], tracksGeneration: false,
  selectableFields: {
    'regarding.kind': (o) => str(asObj(o.regarding)?.kind) ?? '', 'regarding.name': (o) => str(asObj(o.regarding)?.name) ?? '',
    'regarding.namespace': (o) => str(asObj(o.regarding)?.namespace) ?? '', reason: (o) => str(o.reason) ?? '', type: (o) => str(o.type) ?? '',
  },
  validate: validateEvent,
  tableColumns: eventColumns,
};

export const eventsKinds: Record<string, KindSpec> = { events };
