// Core (`/api/v1`) Events, the store of both Event views (events.ts is the
// other): the rules every Event meets whichever view wrote it, and the columns
// of `kubectl get events`.
import type { ApiObject } from '../../apimachinery/meta.js';
import { NAMESPACE_DEFAULT, NAMESPACE_SYSTEM } from '../../names/index.js';
import { ageColumn, column } from '../columns.js';
import { invalid, qualifiedName, required, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { asObj, str } from '../values.js';

/** The members an Event's rules name, as a view spells them. */
export interface EventFields { regarding: string; note: string; reportingController: string }
const CORE_FIELDS: EventFields = { regarding: 'involvedObject', note: 'message', reportingController: 'reportingComponent' };

const LENGTH_LIMITS: Record<string, number> = { reportingInstance: 128, action: 128, reason: 128 };
const NOTE_LIMIT = 1024;

/**
 * What every Event meets (upstream's legacy rules): without an eventTime it lives in its
 * object's namespace (or `default` for cluster objects); with one, it names its reporter
 * and action, within length limits, and an event about a cluster object lives in
 * `default` or the system namespace.
 */
export function eventRules(obj: ApiObject, f: EventFields): Causes {
  const namespace = obj.metadata?.namespace ?? '';
  const objectNamespace = str(asObj(obj[f.regarding])?.namespace) ?? '';
  const mismatch = invalid(`${f.regarding}.namespace`, objectNamespace, 'does not match event.namespace');
  if (!obj.eventTime) {
    const matches = objectNamespace ? namespace === objectNamespace : namespace === '' || namespace === NAMESPACE_DEFAULT;
    return matches ? [] : [mismatch];
  }
  const causes: Causes = [];
  if (!objectNamespace && namespace !== NAMESPACE_DEFAULT && namespace !== NAMESPACE_SYSTEM) causes.push(mismatch);
  const controller = str(obj[f.reportingController]) ?? '';
  causes.push(...(controller ? qualifiedName(f.reportingController, controller) : [required(f.reportingController)]));
  for (const [field, max] of Object.entries(LENGTH_LIMITS)) {
    const value = str(obj[field]) ?? '';
    if (!value) causes.push(required(field));
    else if (value.length > max) causes.push(invalid(field, '', `can have at most ${max} characters`));
  }
  if ((str(obj[f.note]) ?? '').length > NOTE_LIMIT) causes.push(invalid(f.note, '', `can have at most ${NOTE_LIMIT} characters`));
  return causes;
}

const eventObject = (o: ApiObject) => {
  const involved = asObj(o.involvedObject) ?? asObj(o.regarding) ?? {};
  return `${String(involved.kind ?? '').toLowerCase()}/${involved.name ?? ''}`;
};

/** The columns of `kubectl get events`, for either view. */
export const eventColumns = [
  column('Last Seen', 'string', 'Time since the event was last seen', (o) => lastSeen(o)),
  column('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future.', (o) => o.type ?? ''),
  column('Reason', 'string', 'The reason for the transition into the object\'s current status.', (o) => o.reason ?? ''),
  column('Object', 'string', 'The object this Event is about.', eventObject),
  column('Message', 'string', 'A human-readable description of the status of this operation.', (o) => o.message ?? o.note ?? ''),
];

function lastSeen(o: ApiObject): string {
  const series = asObj(o.series);
  const when = str(series?.lastObservedTime) ?? str(o.lastTimestamp) ?? str(o.eventTime) ?? str(o.deprecatedLastTimestamp) ?? o.metadata?.creationTimestamp;
  return ageColumn.cell({ metadata: { creationTimestamp: when } }) as string;
}

export const events: KindSpec = {
  shortNames: ['ev'],
  selectableFields: Object.fromEntries([
    ...['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath']
      .map((f) => [`involvedObject.${f}`, (o: ApiObject) => str(asObj(o.involvedObject)?.[f]) ?? '']),
    ['reason', (o: ApiObject) => str(o.reason) ?? ''], ['reportingComponent', (o: ApiObject) => str(o.reportingComponent) ?? ''],
    ['source', (o: ApiObject) => str(asObj(o.source)?.component) ?? ''], ['type', (o: ApiObject) => str(o.type) ?? ''],
  ]),
  validate: (obj) => eventRules(obj, CORE_FIELDS),
  tableColumns: eventColumns,
};
