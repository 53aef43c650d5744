// The events group (v1): Event, a second view of the core Events. Objects live
// in core's key space in the core shape, and are converted at the edge, so an
// Event written through either API is read, listed and watched through both.
import type { ApiObject } from '../../apimachinery/meta.js';
import { apiVersionOf } from '../../apimachinery/meta.js';
import { group } from '../../names/index.js';
import { invalid, required, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { asObj, deepEqual, str, type Obj } from '../values.js';
import { eventColumns, eventRules, type EventFields } from './core-events.js';

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

const V1_FIELDS: EventFields = { regarding: 'regarding', note: 'note', reportingController: 'reportingController' };

/** A series counts at least two occurrences and says when it saw the last. */
function seriesRules(obj: ApiObject): Causes {
  const series = asObj(obj.series);
  if (!series) return [];
  const causes: Causes = [];
  if (typeof series.count !== 'number' || series.count < 2) causes.push(invalid('series.count', series.count ?? 0, 'should be at least 2'));
  if (!series.lastObservedTime) causes.push(required('series.lastObservedTime'));
  return causes;
}

/** Writes through events/v1 meet upstream's strict rules on top of every Event's: a new event
 * says when it happened and has a known type and no deprecated fields; an update changes
 * nothing the event says but its series. */
function validateEvent(obj: ApiObject, old?: ApiObject): Causes {
  const causes = eventRules(obj, V1_FIELDS);
  if (old) {
    if (!deepEqual(obj.series, old.series)) causes.push(...seriesRules(obj));
    for (const f of IMMUTABLE) if (!deepEqual(obj[f], old[f])) causes.push(invalid(f, obj[f], 'field is immutable'));
    return causes;
  }
  causes.push(...seriesRules(obj));
  if (!obj.eventTime) causes.push(required('eventTime'));
  if (obj.type !== 'Normal' && obj.type !== 'Warning') causes.push(invalid('type', obj.type ?? '', `has invalid value: ${obj.type ?? ''}`));
  for (const f of DEPRECATED) if (obj[f] !== undefined) causes.push(invalid(f, '', 'needs to be unset'));
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
