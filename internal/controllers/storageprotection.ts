// The pvc-protection and pv-protection controllers: a PersistentVolumeClaim
// being deleted keeps its protection finalizer while a scheduled pod that has
// not finished uses it (by name, or as the claim of its ephemeral volume); a
// PersistentVolume being deleted keeps its own while it is Bound. Then the
// finalizer is dropped by an update (the object's resourceVersion as
// precondition: a change meanwhile is seen again through the informer).
import type { ApiObject } from '../apimachinery/meta.js';
import type { ApiClient } from '../client/index.js';
import { Informer } from '../client/informer.js';
import { PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER, isWellKnown, type WellKnown } from '../names/index.js';

const RETRY_MS = 1000;

const held = (obj: ApiObject, finalizer: WellKnown): boolean =>
  Boolean(obj.metadata?.deletionTimestamp) && (obj.metadata?.finalizers ?? []).some((f) => isWellKnown(f, finalizer));

/** Drops `finalizer` (either spelling) from the object at `path`, by an update at its resourceVersion; false when
 * it changed meanwhile (the informer brings the new state). */
async function dropFinalizer(client: ApiClient, path: string, obj: ApiObject, finalizer: WellKnown): Promise<boolean> {
  const finalizers = (obj.metadata?.finalizers ?? []).filter((f) => !isWellKnown(f, finalizer));
  const res = await client.request('PUT', path, { ...obj, metadata: { ...obj.metadata, finalizers } });
  if (res.status === 404 || res.status === 409) return res.status === 404;
  if (res.status !== 200) throw new Error(`dropping ${finalizer.own}: ${res.status} ${res.body?.message ?? ''}`);
  return true;
}

/** What pvc-protection keeps of a pod: where it runs, whether it finished, the claims it names. */
function podClaims(pod: ApiObject): ApiObject {
  const spec = (pod.spec ?? {}) as { nodeName?: string; volumes?: Array<{ name?: string; persistentVolumeClaim?: { claimName?: string }; ephemeral?: unknown }> };
  const claims = (spec.volumes ?? []).map((v) => v.persistentVolumeClaim?.claimName ?? (v.ephemeral ? `${pod.metadata?.name}-${v.name}` : undefined))
    .filter((c): c is string => Boolean(c));
  const phase = (pod.status as { phase?: string } | undefined)?.phase;
  return { metadata: { name: pod.metadata?.name, namespace: pod.metadata?.namespace, resourceVersion: pod.metadata?.resourceVersion }, spec: { nodeName: spec.nodeName, claims }, status: { phase } };
}

const usesClaim = (pod: ApiObject, claim: string): boolean => {
  const spec = pod.spec as { nodeName?: string; claims: string[] };
  const phase = (pod.status as { phase?: string }).phase;
  return Boolean(spec.nodeName) && phase !== 'Succeeded' && phase !== 'Failed' && spec.claims.includes(claim);
};

export class PvcProtectionController {
  private readonly claims: Informer;
  private readonly pods: Informer;

  constructor(private readonly client: ApiClient) {
    this.claims = new Informer(client, '/api/v1/persistentvolumeclaims', { upsert: (pvc) => this.consider(pvc), deleted: () => {} });
    // A pod that finishes or goes may free the claims of its namespace.
    const recheck = (pod: ApiObject) => this.considerNamespace(pod.metadata?.namespace ?? '');
    this.pods = new Informer(client, '/api/v1/pods', { upsert: recheck, deleted: recheck }, { transform: podClaims });
  }

  async start(): Promise<void> {
    await this.pods.start();
    await this.claims.start();
    for (const pvc of this.claims.store.values()) this.consider(pvc);
  }

  stop(): void {
    this.claims.stop();
    this.pods.stop();
  }

  private considerNamespace(namespace: string): void {
    for (const pvc of this.claims.store.values()) if (pvc.metadata?.namespace === namespace) this.consider(pvc);
  }

  private consider(pvc: ApiObject): void {
    if (!this.pods.synced || !held(pvc, PVC_PROTECTION_FINALIZER)) return;
    const { name, namespace } = pvc.metadata!;
    for (const pod of this.pods.store.values()) if (pod.metadata?.namespace === namespace && usesClaim(pod, name!)) return;
    const path = `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${encodeURIComponent(name!)}`;
    dropFinalizer(this.client, path, pvc, PVC_PROTECTION_FINALIZER).catch((err) => {
      console.error(`pvc-protection: ${namespace}/${name}: ${(err as Error).message}`);
      setTimeout(() => this.consider(this.claims.store.get(`${namespace}/${name}`) ?? pvc), RETRY_MS);
    });
  }
}

export class PvProtectionController {
  private readonly volumes: Informer;

  constructor(private readonly client: ApiClient) {
    this.volumes = new Informer(client, '/api/v1/persistentvolumes', { upsert: (pv) => this.consider(pv), deleted: () => {} });
  }

  start(): Promise<void> {
    return this.volumes.start();
  }

  stop(): void {
    this.volumes.stop();
  }

  private consider(pv: ApiObject): void {
    if (!held(pv, PV_PROTECTION_FINALIZER) || (pv.status as { phase?: string } | undefined)?.phase === 'Bound') return;
    const name = pv.metadata!.name!;
    dropFinalizer(this.client, `/api/v1/persistentvolumes/${encodeURIComponent(name)}`, pv, PV_PROTECTION_FINALIZER).catch((err) => {
      console.error(`pv-protection: ${name}: ${(err as Error).message}`);
      setTimeout(() => this.consider(this.volumes.store.get(`/${name}`) ?? pv), RETRY_MS);
    });
  }
}
