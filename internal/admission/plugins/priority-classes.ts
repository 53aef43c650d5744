// The system PriorityClasses, which exist from the server's start: the server
// creates any that is missing (upstream's scheduling/bootstrap-system-priority-classes).
import { newUid, nowTimestamp, type ApiObject } from '../../apimachinery/meta.js';
import { GROUP_SCHEDULING } from '../../names/index.js';
import type { StorageClient } from '../../storage/client.js';
import { objectKey } from '../../storage/keys.js';
import { createStoredOnce } from '../../storage/objects.js';

/** The highest priority of system classes; user classes stop at a billion. */
const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

const systemClass = (name: string, value: number, description: string) => ({
  apiVersion: `${GROUP_SCHEDULING}/v1`, kind: 'PriorityClass', metadata: { name },
  value, description, preemptionPolicy: 'PreemptLowerPriority',
});

export const SYSTEM_PRIORITY_CLASSES = [
  systemClass('system-node-critical', SYSTEM_CRITICAL_PRIORITY + 1000, 'Used for system critical pods that must not be moved from their current node.'),
  systemClass('system-cluster-critical', SYSTEM_CRITICAL_PRIORITY, 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.'),
];

/** Creates the system classes that are missing; existing ones are left as they are. */
export async function ensureSystemPriorityClasses(storage: StorageClient): Promise<void> {
  for (const pc of SYSTEM_PRIORITY_CLASSES) {
    const obj: ApiObject = { ...pc, metadata: { ...pc.metadata, uid: newUid(), creationTimestamp: nowTimestamp() } };
    await createStoredOnce(storage, objectKey(GROUP_SCHEDULING, 'priorityclasses', '', pc.metadata.name), obj);
  }
}

/** Whether a name and its value and default flag are those of a system class; else why not (upstream's words). */
export function systemClassProblem(name: string, value: unknown, globalDefault: unknown): string | undefined {
  const known = SYSTEM_PRIORITY_CLASSES.find((c) => c.metadata.name === name);
  if (!known) return `name ${name} is not a known system priority class`;
  if (value !== known.value) return `value of ${name} PriorityClass must be ${known.value}`;
  if ((globalDefault === true) !== false) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}
