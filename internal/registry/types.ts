// What the registry declares about each kind; every part of the server reads it.
import type { ApiObject } from '../apimachinery/meta.js';
import type { StatusCause } from '../apimachinery/status.js';

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  priority?: number;
  cell(obj: ApiObject): unknown;
}

export interface KindDef {
  group: string;
  version: string;
  /** The plural name in URLs, e.g. `configmaps`. */
  resource: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  /** The sub-resources served, e.g. `status`. */
  subresources?: string[];
  /** Fields a field selector may name besides metadata.name and metadata.namespace. */
  selectableFields?: Record<string, (obj: ApiObject) => string | undefined>;
  /** Sets server-owned fields and defaults of a new object. */
  prepareForCreate?(obj: ApiObject): void;
  /** Carries over what an update may not change (status on spec writes, ...). */
  prepareForUpdate?(obj: ApiObject, old: ApiObject): void;
  /** Sets what a delete held by finalizers changes besides deletionTimestamp (a namespace turns Terminating). */
  prepareForDelete?(obj: ApiObject): void;
  /** Kind-specific validation; metadata is validated for every kind. */
  validate?(obj: ApiObject, old?: ApiObject): StatusCause[];
  /** Name rule of the kind; default DNS-1123 subdomain. */
  nameRule?: 'dns1123label' | 'dns1123subdomain';
  /** A delete answers the deleted object instead of a Status. */
  returnDeletedObject?: boolean;
  tableColumns?: TableColumn[];
}
