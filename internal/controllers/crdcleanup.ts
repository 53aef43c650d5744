// The cleanup of a deleted CustomResourceDefinition: its Terminating condition
// says what is happening, every custom object is deleted through the API (a
// delete of the collection per namespace, so admission and the objects' own
// finalizers are honoured), and once none is left the cleanup finalizer is
// dropped, which lets the CRD go.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiObject } from '../apimachinery/meta.js';
import { type Condition, findCondition, isConditionTrue, sameCondition, setCondition, TERMINATING } from '../apiextensions/conditions.js';
import { groupOf, storageVersionOf } from '../apiextensions/crd.js';
import { type ApiClient, collectionPath } from '../client/index.js';
import { CRD_CLEANUP_FINALIZER, group } from '../names/index.js';
import { objects, str, specOf } from '../registry/values.js';
import { acceptedNames } from './crdnames.js';

export const CRDS = `/apis/${group('apiextensions')}/v1/customresourcedefinitions`;
const MERGE_PATCH = 'application/merge-patch+json';
/** How long the objects' own finalizers are waited for before the pass is reported as failed and tried again. */
const DRAIN_TIMEOUT_MS = 60_000;
const POLL_MIN_MS = 100;
const POLL_MAX_MS = 2000;

const terminating = (status: 'True' | 'False', reason: string, message: string): Condition => ({ type: 'Terminating', status, reason, message });

class CleanupError extends Error {
  constructor(readonly condition: Condition) {
    super(condition.message);
  }
}

/** The version the objects are listed and deleted in: the storage version when served (no conversion), else a served
 * one; with none served, the storage version, which the gateway keeps answering for a Terminating CRD. */
function servedVersion(crd: ApiObject): string | undefined {
  const served = objects(specOf(crd).versions).filter((v) => v.served === true);
  const storage = storageVersionOf(crd);
  return served.length === 0 || served.some((v) => v.name === storage) ? storage : str(served[0].name);
}

export class CrdCleanup {
  constructor(private readonly client: ApiClient) {}

  /** One pass over a deleted CRD; true once the finalizer is dropped (or the CRD is gone). */
  async finalize(crd: ApiObject): Promise<boolean> {
    const marked = await this.setTerminating(crd, TERMINATING);
    if (!marked) return false;
    let outcome: Condition;
    if (!isConditionTrue(marked, 'Established')) outcome = terminating('False', 'NeverEstablished', 'resource was never established');
    else {
      try {
        outcome = await this.deleteInstances(marked);
      } catch (err) {
        if (!(err instanceof CleanupError)) throw err;
        await this.setTerminating(marked, err.condition);
        throw err;
      }
    }
    const done = await this.setTerminating(marked, outcome);
    return done ? this.dropFinalizer(done) : false;
  }

  /** Writes the Terminating condition; the CRD as written, or undefined when it changed or went meanwhile. */
  private async setTerminating(crd: ApiObject, condition: Condition): Promise<ApiObject | undefined> {
    if (sameCondition(condition, findCondition(crd, 'Terminating'))) return crd;
    const next = structuredClone(crd);
    setCondition(next, condition);
    const res = await this.client.request('PUT', `${CRDS}/${encodeURIComponent(crd.metadata!.name!)}/status`, next);
    if (res.status === 404 || res.status === 409) return undefined;
    if (res.status !== 200) throw new Error(`status update: ${res.status} ${res.body?.message ?? ''}`);
    return res.body as ApiObject;
  }

  /** Deletes the collection in every namespace holding objects, then waits until none is left. */
  private async deleteInstances(crd: ApiObject): Promise<Condition> {
    const version = servedVersion(crd);
    const plural = acceptedNames(crd).plural;
    const resource = { group: groupOf(crd), version: version ?? '', resource: plural };
    const all = collectionPath(resource);
    const listed = await this.listOrFail(all, 'could not list instances');
    const namespaced = specOf(crd).scope === 'Namespaced';
    const namespaces = new Set(listed.map((o) => o.metadata?.namespace ?? ''));
    const failures: string[] = [];
    for (const ns of namespaced ? namespaces : listed.length ? [''] : []) {
      const res = await this.client.request('DELETE', collectionPath(resource, ns || undefined));
      if (res.status !== 200) failures.push(`${ns ? `${ns}: ` : ''}${res.body?.message ?? res.status}`);
    }
    if (failures.length) throw new CleanupError(terminating('True', 'InstanceDeletionFailed', `could not issue all deletes: ${failures.length === 1 ? failures[0] : `[${failures.join(', ')}]`}`));
    await this.drained(all);
    return terminating('False', 'InstanceDeletionCompleted', 'removed all instances');
  }

  private async listOrFail(path: string, what: string): Promise<ApiObject[]> {
    try {
      return (await this.client.list(path, 'metadata')).items;
    } catch (err) {
      throw new CleanupError(terminating('True', 'InstanceDeletionFailed', `${what}: ${(err as Error).message}`));
    }
  }

  /** Waits for the objects held by their own finalizers to go. */
  private async drained(path: string): Promise<void> {
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    for (let delay = POLL_MIN_MS; ; delay = Math.min(delay * 2, POLL_MAX_MS)) {
      const left = await this.listOrFail(path, 'could not confirm zero CustomResources remaining');
      if (left.length === 0) return;
      if (Date.now() + delay > deadline) {
        throw new CleanupError(terminating('True', 'InstanceDeletionCheck', `could not confirm zero CustomResources remaining: ${left.length} remaining`));
      }
      await sleep(delay);
    }
  }

  /** Drops the cleanup finalizer, the CRD's resourceVersion as precondition; the CRD goes when no finalizer is left. */
  private async dropFinalizer(crd: ApiObject): Promise<boolean> {
    const finalizers = (crd.metadata?.finalizers ?? []).filter((f) => f !== CRD_CLEANUP_FINALIZER);
    const patch = { metadata: { finalizers, resourceVersion: crd.metadata?.resourceVersion } };
    const res = await this.client.request('PATCH', `${CRDS}/${encodeURIComponent(crd.metadata!.name!)}`, patch, MERGE_PATCH);
    if (res.status === 404) return true;
    if (res.status === 409) return false;
    if (res.status !== 200) throw new Error(`dropping the finalizer: ${res.status} ${res.body?.message ?? ''}`);
    return true;
  }
}
