// A CRD version's additionalPrinterColumns as the Table columns of its kind.
import type { TableColumn } from '../registry/types.js';
import type { Obj } from '../registry/values.js';

/** The Table columns of one `spec.versions[*]` entry. */
export function printerColumns(_version: Obj): TableColumn[] {
  return [];
}
