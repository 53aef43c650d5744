// The events group (v1): Event, a second view of the core Events. Objects live
// in core's key space in the core shape, and are converted at the edge, so an
// Event written through either API is read, listed and watched through both.
import type { ApiObject } from '../../apimachinery/meta.js';
import { apiVersionOf } from '../../apimachinery/meta.js';
import { group } from '../../names/index.js';
import { invalid, oneOf, required, tooLong, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { asObj, deepEqual, str, type Obj } from '../values.js';
import { eventColumns } from './core.js';

const MAX_NOTE = 1024;

/** events/v1 member ← core/v1 member, in the order upstream writes an events/v1 Event. */
const FROM_CORE: Array<[string, string]> = [
  ['metadata', 'metadata'], ['eventTime', 'eventTime'], ['series', 'series'],
  ['reportingController', 'reportingComponent'], ['reportingInstance', 'reportingInstance'], ['action', 'action'],
  ['reason', 'reason'], ['regarding', 'involvedObject'], ['related', 'related'], ['note', 'message'], ['type', 'type'],
  ['deprecatedSource', 'source'], ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'], ['deprecatedCount', 'count'],
];
const DEPRECATED = FROM_CORE.map(([v1]) => v1).filter((f) => f.startsWith('deprecated'));
/** What an events/v1 update may not change (upstream's rules for writes through this API). */
const IMMUTABLE = ['regarding', 'related', 'reason', 'note', 'type', 'eventTime', 'action', 'reportingController', 'reportingInstance', ...DEPRECATED];

function renamed(obj: ApiObject, pairs: Array<[string, string]>, apiVersion: string): ApiObject {
  const out: Obj = { apiVersion, kind: 'Event' };
  for (const [to, from] of pairs) if (obj[from] !== undefined) out[to] = obj[from];
  return out as ApiObject;
}

/** A stored (core/v1) Event as events/v1 shows it. */
export const eventFromCore = (obj: ApiObject): ApiObject => renamed(obj, FROM_CORE, apiVersionOf(group('events'), 'v1'));
/** An events/v1 Event in the core/v1 shape it is stored in. */
export const eventToCore = (obj: ApiObject): ApiObject => renamed(obj, FROM_CORE.map(([v1, core]) => [core, v1]), 'v1');

/** New-style events: who reported them, what happened and when, to which object, in its namespace. */
function validateEvent(obj: ApiObject, old?: ApiObject): Causes {
  const causes: Causes = [];
  if (!old) {
    for (const f of ['eventTime', 'reportingController', 'reportingInstance', 'action', 'reason']) if (!obj[f]) causes.push(required(f));
    for (const f of DEPRECATED) if (obj[f] !== undefined) causes.push(invalid(f, obj[f], 'must be empty on new objects'));
  } else {
    for (const f of IMMUTABLE) if (!deepEqual(obj[f], old[f])) causes.push(invalid(f, obj[f], 'field is immutable'));
  }
  causes.push(...oneOf('type', obj.type, ['Normal', 'Warning'], true));
  if (typeof obj.note === 'string' && obj.note.length > MAX_NOTE) causes.push(tooLong('note', MAX_NOTE));
  const namespace = obj.metadata?.namespace ?? '';
  const regarding = str(asObj(obj.regarding)?.namespace) ?? '';
  if (regarding && regarding !== namespace) causes.push(invalid('regarding.namespace', regarding, 'does not match event.namespace'));
  return causes;
}

/** Upstream's field selectors of events/v1: the regarding object, reason, reporting controller and type. */
const selectableFields = Object.fromEntries([
  ...['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath']
    .map((f) => [`regarding.${f}`, (o: ApiObject) => str(asObj(o.regarding)?.[f]) ?? '']),
  ['reason', (o: ApiObject) => str(o.reason) ?? ''], ['reportingController', (o: ApiObject) => str(o.reportingController) ?? ''],
  ['type', (o: ApiObject) => str(o.type) ?? ''],
]);

const events: KindSpec = {
  shortNames: ['ev'], tracksGeneration: false,
  storageGroup: '', toStorage: eventToCore, fromStorage: eventFromCore,
  selectableFields,
  validate: validateEvent,
  tableColumns: eventColumns,
};

export const eventsKinds: Record<string, KindSpec> = { events };
