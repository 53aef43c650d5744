// The writes of a kind whose status has its own endpoint: the main endpoint keeps the
// stored status, the status endpoint keeps everything else as stored.
import type { ApiObject } from '../apimachinery/meta.js';
import { clone } from './values.js';

/** An update through the main endpoint: the status stays as stored. */
export function keepStoredStatus(obj: ApiObject, old: ApiObject): void {
  if (old.status === undefined) delete obj.status;
  else obj.status = clone(old.status);
}

/** An update through `/status`: all but the new status (and the writer's managed fields) stays as stored. */
export function keepAllButStatus(obj: ApiObject, old: ApiObject): void {
  const status = obj.status;
  // The writer's ownership of the status it sets stays.
  const managedFields = obj.metadata?.managedFields;
  for (const k of Object.keys(obj)) delete obj[k];
  Object.assign(obj, clone(old));
  if (status === undefined) delete obj.status;
  else obj.status = status;
  if (managedFields !== undefined) obj.metadata = { ...obj.metadata, managedFields };
}
