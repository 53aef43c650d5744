// A CustomResourceDefinition as the kinds the registry serves: one KindDef per
// served version, its writes checked by the version's compiled schema, its objects
// stored in the storage version and converted to the version a request names.
import type { ApiObject } from '../apimachinery/meta.js';
import { apiVersionOf } from '../apimachinery/meta.js';
import type { KindDef, SubresourceDef } from '../registry/types.js';
import type { Schema } from '../registry/openapi.js';
import { keepAllButStatus, keepStoredStatus } from '../registry/statusapart.js';
import { asList, asObj, deepEqual, objects, str, type Obj, specOf } from '../registry/values.js';
import { compileVersionSchema } from './schema.js';
import { namesPath } from './fieldpath.js';
import { isConditionTrue } from './conditions.js';
import { groupOf, storageVersionOf } from './crd.js';
import { printerColumns } from './columns.js';
import { publishedSchema } from './openapi.js';
import { webhookConverter, type ServiceResolver } from './conversion.js';
import type { Converter, VersionSchema } from './types.js';

/** The verbs of every custom resource, in the order the platform lists them. */
const VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];
const SUBRESOURCE_VERBS = ['get', 'patch', 'update'];
/** What a Terminating CRD with no served version still answers in its storage version. */
const DRAIN_VERBS = ['delete', 'deletecollection', 'get', 'list', 'watch'];

/** The names the CRD is served under: the accepted ones once the server accepted them, else the spec's. */
function namesOf(crd: ApiObject): Obj {
  const accepted = asObj(asObj(crd.status)?.acceptedNames);
  return accepted && str(accepted.plural) ? accepted : asObj(specOf(crd).names) ?? {};
}

const storedVersionsOf = (crd: ApiObject): unknown[] => asList(asObj(crd.status)?.storedVersions);

/** Whether the CRD converts through its webhook (else `None`: the apiVersion rewritten). */
const convertsByWebhook = (crd: ApiObject): boolean => asObj(specOf(crd).conversion)?.strategy === 'Webhook';

/** A selectable field's value as a field selector compares it: scalars as text. */
function fieldText(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
}

function selectableFields(version: Obj): KindDef['selectableFields'] {
  const paths = objects(version.selectableFields).map((f) => str(f.jsonPath)).filter((p): p is string => Boolean(p));
  if (paths.length === 0) return undefined;
  return Object.fromEntries(paths.map((p) => {
    const read = namesPath(p);
    return [p.replace(/^\./, ''), (obj: ApiObject) => fieldText(read(obj))];
  }));
}

/** Everything of an object that counts for its generation: all but metadata (and status when it has its own endpoint). */
const contentOf = (obj: ApiObject, statusApart: boolean): Obj =>
  Object.fromEntries(Object.entries(obj).filter(([k]) => k !== 'metadata' && (!statusApart || k !== 'status')));

interface VersionContext {
  group: string;
  names: Obj;
  namespaced: boolean;
  storageVersion: string;
  terminating: boolean;
  /** `status.storedVersions` names the storage version alone: every stored object is of it. */
  onlyStorageStored: boolean;
  /** The webhook's converter; none for `None`, which converts in place. */
  webhook?: Converter;
}

/** Whether a schema declares a default anywhere: reads from storage must then apply them. */
function declaresDefaults(node: unknown): boolean {
  const s = asObj(node);
  if (!s) return false;
  if ('default' in s) return true;
  const children = [...Object.values(asObj(s.properties) ?? {}), s.items, s.additionalProperties, ...asList(s.allOf), ...asList(s.anyOf), ...asList(s.oneOf)];
  return children.some(declaresDefaults);
}

/** How objects move between a version and storage: in place for `None` (defaults applied on every read), through
 * the webhook otherwise (then this version's defaults once converted to it). The storage version, when nothing is
 * stored in another and its schema has no default, reads as stored: the cache's text is its answer as it is. */
function conversionOf(ctx: VersionContext, apiVersion: string, schema: Schema, compiled: VersionSchema): Pick<KindDef, 'toStorage' | 'fromStorage' | 'convert'> {
  const storageApiVersion = apiVersionOf(ctx.group, ctx.storageVersion);
  const webhook = ctx.webhook;
  if (webhook) {
    return {
      async convert(objs, desired) {
        const out = await webhook.convert(objs, desired);
        if (desired === apiVersion) for (const o of out) compiled.applyDefaults(o);
        return out;
      },
    };
  }
  if (apiVersion === storageApiVersion && ctx.onlyStorageStored && !declaresDefaults(schema)) return {};
  return {
    ...(apiVersion === storageApiVersion ? {} : { toStorage: (obj: ApiObject) => (obj.apiVersion === storageApiVersion ? obj : { ...obj, apiVersion: storageApiVersion }) }),
    fromStorage(obj) {
      if (obj.apiVersion !== apiVersion) obj.apiVersion = apiVersion;
      compiled.applyDefaults(obj);
      return obj;
    },
  };
}

/** The write strategy of a custom kind: the schema's pruning and defaults, status apart from spec when it has its
 * own endpoint, generation counted on changes of everything but metadata (and that status). */
function strategyOf(compiled: VersionSchema, statusApart: boolean): Pick<KindDef,
  'prepareForCreate' | 'prepareForUpdate' | 'prepareForStatusUpdate' | 'validate' | 'validateStatusUpdate'> {
  return {
    prepareForCreate(obj) {
      const report = compiled.normalize(obj);
      if (statusApart) delete obj.status;
      obj.metadata = { ...obj.metadata, generation: 1 };
      return report;
    },

    prepareForUpdate(obj, old) {
      const report = compiled.normalize(obj);
      if (statusApart) keepStoredStatus(obj, old);
      const generation = old.metadata?.generation ?? 1;
      const changed = !deepEqual(contentOf(obj, statusApart), contentOf(old, statusApart));
      obj.metadata = { ...obj.metadata, generation: changed ? generation + 1 : generation };
      return report;
    },

    prepareForStatusUpdate(obj, old) {
      const report = compiled.normalize(obj);
      keepAllButStatus(obj, old);
      return report;
    },

    validate: (obj, old) => compiled.validate(obj, old),
    validateStatusUpdate: (obj, old) => compiled.validateStatus(obj, old),
  };
}

/** The sub-resources a version declares: `status` (of the kind itself) and `scale` (an autoscaling/v1 Scale). */
function subresourcesOf(version: Obj, kind: string): { statusApart: boolean; scale?: Obj; subresourceDefs: SubresourceDef[] } {
  const subresources = asObj(version.subresources) ?? {};
  const statusApart = asObj(subresources.status) !== undefined;
  const scale = asObj(subresources.scale);
  const subresourceDefs: SubresourceDef[] = [
    ...(statusApart ? [{ name: 'status', kind, verbs: SUBRESOURCE_VERBS }] : []),
    ...(scale ? [{ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: SUBRESOURCE_VERBS }] : []),
  ];
  return { statusApart, ...(scale ? { scale } : {}), subresourceDefs };
}

function kindFor(ctx: VersionContext, version: Obj): KindDef {
  const name = str(version.name)!;
  const openAPIV3Schema = (asObj(asObj(version.schema)?.openAPIV3Schema) ?? {}) as Schema;
  const compiled: VersionSchema = compileVersionSchema(openAPIV3Schema);
  const kind = str(ctx.names.kind)!;
  const apiVersion = apiVersionOf(ctx.group, name);
  const { statusApart, scale, subresourceDefs } = subresourcesOf(version, kind);
  const columns = printerColumns(version);
  const fields = selectableFields(version);
  const shortNames = asList(ctx.names.shortNames).filter((s): s is string => typeof s === 'string');
  const categories = asList(ctx.names.categories).filter((s): s is string => typeof s === 'string');
  const listKind = str(ctx.names.listKind) ?? `${kind}List`;
  // The schema as OpenAPI publishes it: apply and field validation see metadata as ObjectMeta, apiVersion and kind.
  const published = publishedSchema({ group: ctx.group, version: name, kind, listKind, plural: str(ctx.names.plural)! }, openAPIV3Schema);
  return {
    group: ctx.group, version: name, resource: str(ctx.names.plural)!, singular: str(ctx.names.singular) ?? kind.toLowerCase(), kind,
    namespaced: ctx.namespaced, verbs: VERBS,
    ...(shortNames.length ? { shortNames } : {}), ...(categories.length ? { categories } : {}),
    ...(subresourceDefs.length ? { subresources: subresourceDefs.map((s) => s.name), subresourceDefs } : {}),
    ...(scale ? { scalePaths: scale as KindDef['scalePaths'] } : {}),
    ...(columns.length ? { tableColumns: columns } : {}),
    ...(fields ? { selectableFields: fields } : {}),
    statusSubresource: statusApart, tracksGeneration: true, storageVersion: ctx.storageVersion, custom: true,
    ...(ctx.terminating ? { terminating: true } : {}),
    listKind, schema: () => published,
    ...conversionOf(ctx, apiVersion, openAPIV3Schema, compiled),
    ...strategyOf(compiled, statusApart),
  };
}

/** The kinds a CRD serves: one per served version, none until it is Established. `resolve` finds the service
 * reference of a conversion webhook. */
export function kindsFor(crd: ApiObject, resolve?: ServiceResolver): KindDef[] {
  const spec = specOf(crd);
  const group = groupOf(crd);
  const names = namesOf(crd);
  const storageVersion = storageVersionOf(crd);
  if (!isConditionTrue(crd, 'Established') || !group || !str(names.plural) || !str(names.kind) || !storageVersion) return [];
  const ctx: VersionContext = {
    group, names, namespaced: spec.scope !== 'Cluster', storageVersion, terminating: isConditionTrue(crd, 'Terminating'),
    onlyStorageStored: storedVersionsOf(crd).every((v) => v === storageVersion),
    ...(convertsByWebhook(crd) ? { webhook: webhookConverter(crd, resolve) } : {}),
  };
  const versions = objects(spec.versions).filter((v) => str(v.name));
  const served = versions.filter((v) => v.served === true);
  if (served.length || !ctx.terminating) return served.map((v) => kindFor(ctx, v));
  // Nothing served, and the CRD is going: its objects stay reachable in the storage version to be read and deleted,
  // so the cleanup can remove them through the API (the platform's cleanup reaches storage directly).
  const stored = versions.find((v) => v.name === storageVersion);
  return stored ? [{ ...kindFor(ctx, stored), verbs: DRAIN_VERBS }] : [];
}

/** What of a CRD its kinds are built from: a change of anything else (a condition's time) builds nothing again. */
export const servingState = (crd: ApiObject): string =>
  JSON.stringify([specOf(crd), namesOf(crd), storedVersionsOf(crd), isConditionTrue(crd, 'Established'), isConditionTrue(crd, 'Terminating')]);
