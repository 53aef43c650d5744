// PersistentVolumeClaim usage: the count and the storage requested, in total and
// per StorageClass (`<class>.storageclass.storage.svc.io/requests.storage` and
// `.../persistentvolumeclaims`).
import { BETA_STORAGE_CLASS_ANNOTATION, STORAGE_CLASS_QUOTA_INFIX, wellKnownValue } from '../names/index.js';
import { count, parseQuantity, type Quantity, type ResourceList } from './quantity.js';
import { objectCountName } from './objectcount.js';
import type { Evaluator, Obj } from './types.js';

const CLAIMS = 'persistentvolumeclaims';
const STORAGE = 'requests.storage';
const NAMES = [objectCountName('', CLAIMS), CLAIMS, STORAGE];

function perClass(name: string): boolean {
  const at = name.indexOf(STORAGE_CLASS_QUOTA_INFIX);
  return at > 0 && [CLAIMS, STORAGE].includes(name.slice(at + STORAGE_CLASS_QUOTA_INFIX.length));
}

function storageClass(pvc: Obj): string {
  const annotated = wellKnownValue(pvc.metadata?.annotations, BETA_STORAGE_CLASS_ANNOTATION);
  return annotated ?? (typeof pvc.spec?.storageClassName === 'string' ? pvc.spec.storageClassName : '');
}

/** The larger of the storage asked for and the storage allocated (a shrink in progress still holds the old size). */
function storage(pvc: Obj): Quantity | undefined {
  const requested = parseQuantity(pvc.spec?.resources?.requests?.storage);
  const allocated = parseQuantity(pvc.status?.allocatedResources?.storage);
  if (!allocated) return requested;
  return !requested || allocated.nanos > requested.nanos ? allocated : requested;
}

export const pvcEvaluator: Evaluator = {
  group: '',
  resource: CLAIMS,
  handles: (operation, subresource) => subresource === '' && (operation === 'CREATE' || operation === 'UPDATE'),
  matchingResources: (input) => input.filter((n) => NAMES.includes(n) || perClass(n)),
  matchesScope: () => false,
  constraints: () => undefined,
  usage(pvc): ResourceList {
    const out: ResourceList = { [NAMES[0]]: count(1), [CLAIMS]: count(1) };
    const cls = storageClass(pvc);
    const size = storage(pvc);
    if (cls) out[`${cls}${STORAGE_CLASS_QUOTA_INFIX}${CLAIMS}`] = count(1);
    if (size) {
      out[STORAGE] = size;
      if (cls) out[`${cls}${STORAGE_CLASS_QUOTA_INFIX}${STORAGE}`] = size;
    }
    return out;
  },
};
