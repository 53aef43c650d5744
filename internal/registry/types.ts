// What the registry declares about each kind; every part of the server reads it.
import type { ApiObject } from '../apimachinery/meta.js';
import type { StatusCause } from '../apimachinery/status.js';
import type { Schema } from './openapi.js';
import type { SchemaReport } from './schemacheck.js';

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  priority?: number;
  cell(obj: ApiObject): unknown;
}

/** A sub-resource as the resource table lists it: `status`, `scale`, `log`, ... */
export interface SubresourceDef {
  name: string;
  /** The kind its requests and answers carry (`Scale` for `scale`, the kind itself for `status`). */
  kind: string;
  /** Group and version of that kind when it is not the parent's (`autoscaling/v1` Scale, `policy/v1` Eviction). */
  group?: string;
  version?: string;
  verbs: string[];
}

/** Who makes a write, for kinds that record it (a CertificateSigningRequest's requestor). */
export interface Requester {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, { values: string[] }>;
}

/** Rules for `metadata.name`; the default is a DNS-1123 subdomain. */
export type NameRule = 'dns1123label' | 'dns1123subdomain' | 'dns1035label' | 'pathSegment';

export interface KindDef {
  group: string;
  version: string;
  /** The plural name in URLs, e.g. `configmaps`. */
  resource: string;
  singular: string;
  kind: string;
  /** The kind of its lists when not `<kind>List` (a CustomResourceDefinition's `spec.names.listKind`). */
  listKind?: string;
  namespaced: boolean;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  /** The sub-resources served, e.g. `status`. */
  subresources?: string[];
  /** The same sub-resources with the kind and verbs of each. */
  subresourceDefs?: SubresourceDef[];
  /** `<resource>/status` is served: spec writes keep the stored status, status writes keep everything else. */
  statusSubresource?: boolean;
  /** `metadata.generation` starts at 1 and counts changes of everything but metadata and status. */
  tracksGeneration?: boolean;
  /** Create answers a computed object and nothing is stored (reviews, bindings, token requests). */
  ephemeral?: boolean;
  /** The version objects are stored in when other versions of the same resource are served too. */
  storageVersion?: string;
  /** The group whose key space holds the objects, when the kind is a view of another group's resource
   * (events/v1 Events are core Events); the kind's own group otherwise. */
  storageGroup?: string;
  /** Converts an object of this version to the storage version. */
  toStorage?(obj: ApiObject): ApiObject;
  /** Converts a stored object to this version. */
  fromStorage?(obj: ApiObject): ApiObject;
  /** Conversion that takes a call (a CustomResourceDefinition's conversion webhook): `objects` as `apiVersion`, in order.
   * A kind with it has neither toStorage nor fromStorage: its reads and writes convert through it. */
  convert?(objects: ApiObject[], apiVersion: string): Promise<ApiObject[]>;
  /** The OpenAPI schema of the kind (`$ref`s unresolved); undefined when the shared data has none. */
  schema(): Schema | undefined;
  /** Rewrites in place the group names the object's contents carry (RBAC rules and references) with `spell`:
   * stored in the product's spelling, answered in the spelling of the group name a request used. */
  spellGroups?(obj: ApiObject, spell: (group: string) => string): void;
  /** Fields a field selector may name besides metadata.name and metadata.namespace. */
  selectableFields?: Record<string, (obj: ApiObject) => string | undefined>;
  /** Drops unknown fields, resets status, applies defaults and sets server-owned fields of a new object;
   * answers what its walk of the schema found (undefined for a kind without a schema). */
  prepareForCreate?(obj: ApiObject, requester?: Requester): SchemaReport | undefined;
  /** Spec write: drops unknown fields, keeps the stored status, applies defaults, counts the generation; answers as prepareForCreate. */
  prepareForUpdate?(obj: ApiObject, old: ApiObject): SchemaReport | undefined;
  /** `/status` write: keeps everything of `old` but `status`; answers as prepareForCreate. */
  prepareForStatusUpdate?(obj: ApiObject, old: ApiObject): SchemaReport | undefined;
  /** Recomputes server-set fields of a new object that mutating admission changed. */
  afterAdmission?(obj: ApiObject): void;
  /** Sets what a delete held by finalizers changes besides deletionTimestamp (a namespace turns Terminating). */
  prepareForDelete?(obj: ApiObject): void;
  /** A finalizer the first delete adds, holding the object until its controller is done (a CRD's cleanup). */
  deletionFinalizer?: string;
  /** Schema and kind rules of a create (old undefined) or spec write; metadata is validated by the caller.
   * `schemaChecked`: the walk of prepare found no cause and only the server's own steps changed the object
   * since, so the schema is not walked again. */
  validate?(obj: ApiObject, old?: ApiObject, schemaChecked?: boolean): StatusCause[];
  /** Schema and kind rules of a `/status` write; `schemaChecked` as for validate. */
  validateStatusUpdate?(obj: ApiObject, old: ApiObject, schemaChecked?: boolean): StatusCause[];
  /** Name rule of the kind; default DNS-1123 subdomain. */
  nameRule?: NameRule;
  /** A delete answers the deleted object instead of a Status, as the platform's store does for a few kinds (`ReturnDeletedObject`). */
  returnDeletedObject?: boolean;
  tableColumns?: TableColumn[];
  /** Defined at run time by a CustomResourceDefinition: no Protobuf form, no strategic merge patch. */
  custom?: boolean;
  /** The CustomResourceDefinition is being deleted: its objects are served until they are gone, but none is created. */
  terminating?: boolean;
  /** Where `/scale` of a custom kind reads and writes (JSON paths such as `.spec.replicas`); built-in kinds use spec.replicas. */
  scalePaths?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
}
