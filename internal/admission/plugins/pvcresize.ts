// PersistentVolumeClaimResize: a claim's storage request may grow only when the
// claim is bound and its StorageClass (the same before and after) allows volume
// expansion. Shrinking or keeping the request is left to validation.
import { BETA_STORAGE_CLASS_ANNOTATION, group, wellKnownValue } from '../../names/index.js';
import type { ApiObject } from '../../apimachinery/meta.js';
import { parseQuantity } from '../../registry/quantity.js';
import type { StorageClient } from '../../storage/client.js';
import { forbiddenRequest } from '../errors.js';
import type { AdmissionPlugin, AdmissionRequest, Operation } from '../types.js';
import { KindCache } from '../kindcache.js';

export const PERSISTENT_VOLUME_CLAIM_RESIZE = 'PersistentVolumeClaimResize';

type Claim = { metadata?: ApiObject['metadata']; spec?: { storageClassName?: string; resources?: { requests?: Record<string, unknown> } }; status?: { phase?: string } };

const requested = (claim: Claim): number => parseQuantity(claim.spec?.resources?.requests?.storage) ?? 0;
/** The claim's class: the beta annotation first, then the field. */
const classOf = (claim: Claim): string => wellKnownValue(claim.metadata?.annotations, BETA_STORAGE_CLASS_ANNOTATION) ?? claim.spec?.storageClassName ?? '';

export class PersistentVolumeClaimResize implements AdmissionPlugin {
  readonly name = PERSISTENT_VOLUME_CLAIM_RESIZE;
  readonly phase = 'validating' as const;
  /** Whether each StorageClass allows expansion. */
  private readonly expandable: KindCache<boolean>;

  constructor(storage: StorageClient) {
    this.expandable = new KindCache(storage, group('storage'), 'storageclasses', (sc) => sc.allowVolumeExpansion === true);
  }

  handles(operation: Operation): boolean {
    return operation === 'UPDATE';
  }

  async admit(request: AdmissionRequest): Promise<void> {
    const { group: g, resource } = request.resource;
    if (g !== '' || resource !== 'persistentvolumeclaims' || request.subresource || !request.object || !request.oldObject) return;
    const claim = request.object as Claim;
    const old = request.oldObject as Claim;
    if (requested(claim) <= requested(old)) return;
    if (old.status?.phase !== 'Bound') throw forbiddenRequest(request, 'Only bound persistent volume claims can be expanded');
    if (!(await this.allowsResize(request, classOf(claim), classOf(old)))) {
      throw forbiddenRequest(request,
        'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize');
    }
  }

  private async allowsResize(request: AdmissionRequest, now: string, before: string): Promise<boolean> {
    if (!now || now !== before) return false;
    return (await this.expandable.ready(request)).get('', now) === true;
  }

  stop(): void {
    this.expandable.stop();
  }
}

