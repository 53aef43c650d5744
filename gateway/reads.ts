// The read verbs on one kind: get and list, and the selectors they (and watch) apply.
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { StatusError, badRequest, notFound } from '../internal/apimachinery/status.js';
import { parseFieldSelector, parseLabelSelector, fieldsMatch } from '../internal/apimachinery/selectors.js';
import type { KindDef } from '../internal/registry/index.js';
import { UPSTREAM_LABEL_ALIASES } from '../internal/names/index.js';
import type { Backends } from './backends.js';
import { storageError } from './backends.js';
import type { ResourceRequest } from './context.js';
import { writeCachedList, writeCachedObject, writeList, writeObject, formatOf } from './respond.js';
import { checkContinueWithin, encodeContinue, expiredContinue, getPlan, listPlan, type ListPlan, type ReadMode, type ReadPlan } from './versions.js';
import { decodeCached, type Collection } from './objectcache.js';
import { waitForRevision } from './freshness.js';

export async function getObject(r: ResourceRequest, backends: Backends): Promise<void> {
  const plan = getPlan(r.query);
  const cached = await cacheFor(r, backends, plan);
  if (cached) {
    const json = cached.get(r.objects.key(r.info.namespace, r.info.name));
    if (json === undefined) throw notFound(r.objects.gr, r.info.name);
    if (r.def.convert) return writeObject(r.ctx, r.def, 200, (await r.objects.inVersion([decodeCached(r.def, json)]))[0]);
    return writeCachedObject(r.ctx, r.def, json);
  }
  const { obj } = await r.objects.get(r.info.namespace, r.info.name, plan.revision, servedFromCache(plan.mode));
  writeObject(r.ctx, r.def, 200, obj);
}

/** Reads storage may answer with its newest state (allowCached): that state moves with every commit, so it
 * answers MostRecent as well as any state at least as new as asked; only Exact reads of an older revision go
 * to the version index. */
const servedFromCache = (mode: ReadMode) => mode !== 'Exact';

/** The gateway's cache of the kind's collection when it may answer a read of this plan (a NotOlderThan read
 * once storage has reached its revision); undefined when storage must answer. */
export async function cacheFor(r: ResourceRequest, backends: Backends, plan: ReadPlan): Promise<Collection | undefined> {
  if (plan.mode === 'NotOlderThan') await waitForRevision(backends, plan.revision);
  return backends.cache?.serving(r.objects.prefix(''), plan);
}

/** Matches an object against the request's label and field selectors. */
export function selectorOf(def: KindDef, query: URLSearchParams): ((obj: ApiObject) => boolean) | undefined {
  const labels = parseLabelSelector(query.get('labelSelector'));
  const fields = parseFieldSelector(query.get('fieldSelector'));
  const known = new Set(['metadata.name', 'metadata.namespace', ...Object.keys(def.selectableFields ?? {})]);
  for (const f of fields) {
    if (!known.has(f.field)) throw badRequest(`field label not supported: ${f.field}`);
  }
  if (!labels && fields.length === 0) return undefined;
  return (obj) => (!labels || labels(withUpstreamLabels(obj.metadata?.labels))) && fieldsMatch(fields, fieldValues(def, obj));
}

/** An object's labels as selectors see them: the keys clients select on in their upstream spelling are there in both. */
function withUpstreamLabels(labels: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!labels) return labels;
  const aliased = UPSTREAM_LABEL_ALIASES.filter((key) => key.own in labels);
  return aliased.length === 0 ? labels : { ...Object.fromEntries(aliased.map((key) => [key.upstream, labels[key.own]])), ...labels };
}

export function fieldValues(def: KindDef, obj: ApiObject): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { 'metadata.name': obj.metadata?.name, 'metadata.namespace': obj.metadata?.namespace ?? '' };
  for (const [field, get] of Object.entries(def.selectableFields ?? {})) out[field] = get(obj);
  return out;
}

export interface ListResult {
  items: ApiObject[];
  revision: number;
  continueAfter: string;
  remaining?: number;
}

/** A page of a collection: the objects' keys and cached JSON, or (read from storage) the objects. */
interface Page {
  revision: number;
  continueAfter: string;
  remaining?: number;
  cached?: Array<[key: string, json: string]>;
  items?: ApiObject[];
}

/** Reads a page of a collection, filtering by selectors until `limit` matches are found. */
export async function listObjects(r: ResourceRequest, backends: Backends): Promise<ListResult> {
  const { cached, items, ...page } = await readPage(r, backends);
  return { ...page, items: await pageItems(r, { cached, items }) };
}

/** A page's items as objects of the request's version, decoded from the cache's JSON where it answered. */
function pageItems(r: ResourceRequest, { cached, items }: Pick<Page, 'cached' | 'items'>): Promise<ApiObject[]> {
  return r.objects.inVersion(items ?? cached!.map(([, json]) => decodeCached(r.def, json)));
}

async function readPage(r: ResourceRequest, backends: Backends): Promise<Page> {
  const plan = listPlan(r.query);
  checkContinueWithin(plan.continueAfter, r.objects.prefix(r.info.namespace));
  const select = selectorOf(r.def, r.query);
  const cached = await cacheFor(r, backends, plan);
  if (cached) return cachedPage(r, cached, plan, select);
  return storagePage(r, backends, plan, select);
}

/** A page from the gateway's cache: one synchronous walk, so it is one state. */
function cachedPage(r: ResourceRequest, c: Collection, plan: ListPlan, select?: (obj: ApiObject) => boolean): Page {
  const prefix = r.objects.prefix(r.info.namespace);
  const revision = plan.mode === 'Exact' ? plan.revision : c.revision;
  if (!select) {
    const { entries, remaining } = c.page(prefix, plan.limit, plan.continueAfter);
    const continueAfter = remaining > 0 ? entries[entries.length - 1][0] : '';
    return { cached: entries, revision, continueAfter, ...(continueAfter ? { remaining } : {}) };
  }
  const cached: Array<[string, string]> = [];
  let continueAfter = '';
  c.walk(prefix, plan.continueAfter, (key, json) => {
    if (plan.limit && cached.length === plan.limit) {
      continueAfter = cached[cached.length - 1][0];
      return false;
    }
    if (select(decodeCached(r.def, json))) cached.push([key, json]);
    return true;
  });
  return { cached, revision, continueAfter };
}

async function storagePage(r: ResourceRequest, backends: Backends, plan: ListPlan, select?: (obj: ApiObject) => boolean): Promise<Page> {
  const revision0 = plan.mode === 'Exact' ? plan.revision : 0;
  const items: ApiObject[] = [];
  let after = plan.continueAfter;
  let revision = revision0;
  for (;;) {
    const want = plan.limit ? plan.limit - items.length : 0;
    // Only the first read of Any / NotOlderThan may be any state at least as new as asked; later pages stay at its revision.
    const newest = servedFromCache(plan.mode) && after === '' && revision === revision0;
    const page = await backends.storage.list(r.objects.prefix(r.info.namespace),
      { revision: newest && plan.mode === 'NotOlderThan' ? plan.revision : revision, limit: want, continueAfter: after, allowCached: newest })
      .catch((err) => { throw plan.continueAfter ? continueError(err) : storageError(err, r.objects.gr, ''); });
    revision = page.revision;
    for (const kv of page.items) {
      const obj = r.objects.decode(kv);
      if (!select || select(obj)) items.push(obj);
      after = kv.key;
    }
    if (!page.more) return { items, revision, continueAfter: '' };
    if (plan.limit && items.length >= plan.limit) return { items, revision, continueAfter: after, remaining: select ? undefined : page.remaining };
  }
}

function continueError(err: unknown): StatusError {
  const mapped = storageError(err, { group: '', resource: '' }, '');
  return mapped.code === 410 ? expiredContinue() : mapped;
}

export async function listCollection(r: ResourceRequest, backends: Backends): Promise<void> {
  formatOf(r.ctx, r.def);
  const page = await readPage(r, backends);
  const listMeta: Record<string, unknown> = { resourceVersion: String(page.revision) };
  if (page.continueAfter) listMeta.continue = encodeContinue(page.revision, page.continueAfter);
  if (page.remaining !== undefined) listMeta.remainingItemCount = page.remaining;
  if (page.cached && !r.def.convert) writeCachedList(r.ctx, r.def, r.objects.apiVersion, page.cached.map(([, json]) => json), listMeta);
  else writeList(r.ctx, r.def, r.objects.apiVersion, await pageItems(r, page), listMeta);
}
