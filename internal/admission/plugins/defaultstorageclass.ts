// DefaultStorageClass: a PersistentVolumeClaim created without a storage class
// (no `spec.storageClassName`, not even "", and no beta class annotation) gets
// the default StorageClass, the one annotated `is-default-class: "true"`; with
// several, the newest. Without one the claim is left as it is.
import {
  BETA_DEFAULT_STORAGE_CLASS_ANNOTATION, BETA_STORAGE_CLASS_ANNOTATION, DEFAULT_STORAGE_CLASS_ANNOTATION, group, wellKnownValue,
} from '../../names/index.js';
import type { ApiObject } from '../../apimachinery/meta.js';
import type { StorageClient } from '../../storage/client.js';
import type { AdmissionPlugin, AdmissionRequest, JsonObject, Operation, PluginAnswer } from '../types.js';
import { KindCache } from '../kindcache.js';
import { createdAt, newestDefault } from './default-class.js';

export const DEFAULT_STORAGE_CLASS = 'DefaultStorageClass';

interface StorageClassFacts {
  name: string;
  created: number;
  isDefault: boolean;
}

/** A class is the default when either annotation, in either spelling, says "true". */
function storageClassFacts(obj: ApiObject): StorageClassFacts {
  const annotations = obj.metadata?.annotations;
  const isDefault = [DEFAULT_STORAGE_CLASS_ANNOTATION, BETA_DEFAULT_STORAGE_CLASS_ANNOTATION].some((a) => wellKnownValue(annotations, a) === 'true');
  return { name: obj.metadata?.name ?? '', created: createdAt(obj), isDefault };
}

/** Whether a claim asked for a class: the field set (even to ""), or the beta annotation present. */
function hasClass(claim: JsonObject): boolean {
  const annotations = (claim.metadata as ApiObject['metadata'])?.annotations;
  if (wellKnownValue(annotations, BETA_STORAGE_CLASS_ANNOTATION) !== undefined) return true;
  const spec = claim.spec as { storageClassName?: unknown } | undefined;
  return spec?.storageClassName !== undefined && spec.storageClassName !== null;
}

export class DefaultStorageClass implements AdmissionPlugin {
  readonly name = DEFAULT_STORAGE_CLASS;
  readonly phase = 'mutating' as const;

  private readonly classes: KindCache<StorageClassFacts>;

  constructor(storage: StorageClient) {
    this.classes = new KindCache(storage, group('storage'), 'storageclasses', storageClassFacts);
  }

  handles(operation: Operation): boolean {
    return operation === 'CREATE';
  }

  async admit(request: AdmissionRequest): Promise<PluginAnswer | void> {
    const { group: g, resource } = request.resource;
    if (g !== '' || resource !== 'persistentvolumeclaims' || request.subresource || !request.object || hasClass(request.object)) return;
    const chosen = newestDefault((await this.classes.ready(request)).list());
    if (!chosen) return;
    const object = structuredClone(request.object);
    object.spec = { ...(object.spec as JsonObject | undefined), storageClassName: chosen.name };
    return { object };
  }

  stop(): void {
    this.classes.stop();
  }
}
