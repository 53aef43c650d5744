// StorageObjectInUseProtection: every PersistentVolumeClaim and
// PersistentVolume is created with its protection finalizer, so deleting a
// claim a pod uses, or a volume a claim is bound to, waits until it is no
// longer used (the pvc-protection and pv-protection controllers drop them).
import { PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER, isWellKnown, type WellKnown } from '../../names/index.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject, Operation, PluginAnswer } from '../types.js';

export const STORAGE_OBJECT_IN_USE_PROTECTION = 'StorageObjectInUseProtection';

const FINALIZERS: Record<string, WellKnown> = { persistentvolumeclaims: PVC_PROTECTION_FINALIZER, persistentvolumes: PV_PROTECTION_FINALIZER };

export class StorageObjectInUseProtection implements AdmissionPlugin {
  readonly name = STORAGE_OBJECT_IN_USE_PROTECTION;
  readonly phase = 'mutating' as const;

  handles(operation: Operation): boolean {
    return operation === 'CREATE';
  }

  async admit(request: AdmissionRequest): Promise<PluginAnswer | void> {
    const finalizer = request.resource.group === '' ? FINALIZERS[request.resource.resource] : undefined;
    if (!finalizer || request.subresource || !request.object) return;
    const metadata = (request.object.metadata ?? {}) as { finalizers?: unknown[] };
    const finalizers = Array.isArray(metadata.finalizers) ? metadata.finalizers : [];
    if (finalizers.some((f) => isWellKnown(f, finalizer))) return;
    const object = structuredClone(request.object);
    object.metadata = { ...metadata, finalizers: [...finalizers, finalizer.own] } as JsonObject;
    return { object };
  }
}
