// The OpenAPI paths of one CRD version, as the platform's CRD OpenAPI builder lays them
// out: the collection (and, for namespaced kinds, the all-namespaces list), the object,
// and `/status` and `/scale` when the version has them, each operation with its
// query parameters, its group-version-kind and action, and the patch types a custom
// kind takes (never strategic merge patch, which kubectl reads to choose its patch).
import type { Schema } from '../apimachinery/schema.js';
import { DOMAIN, extension } from '../names/index.js';
import { definitionName, type CustomKindNames } from './openapi.js';

const DEFINITIONS = `${DOMAIN.split('.').reverse().join('.')}.`;
const META = `${DEFINITIONS}apimachinery.pkg.apis.meta.v1.`;
const STATUS = `${META}Status`;
const PATCH = `${META}Patch`;
const DELETE_OPTIONS = `${META}DeleteOptions`;
const SCALE = `${DEFINITIONS}api.autoscaling.v1.Scale`;

const PRODUCES = ['application/json', 'application/yaml'];
const CONSUMES = ['application/json', 'application/yaml'];
const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

type Param = { name: string; in: 'query' | 'path'; type: string; description: string; required?: boolean };
const query = (name: string, type: string, description: string): Param => ({ name, in: 'query', type, description });

const PRETTY = query('pretty', 'string', "If 'true', then the output is pretty printed.");
const DRY_RUN = query('dryRun', 'string', 'When present, modifications are not persisted. Valid value: All.');
const FIELD_MANAGER = query('fieldManager', 'string', 'A name associated with the actor or entity that is making these changes.');
const FIELD_VALIDATION = query('fieldValidation', 'string', 'How the server handles unknown or duplicate fields: Ignore, Warn or Strict.');
const FORCE = query('force', 'boolean', "Force is going to \"force\" Apply requests: it re-acquires conflicting fields owned by other people. Only for apply requests.");
const LIST_PARAMS: Param[] = [
  query('allowWatchBookmarks', 'boolean', 'Requests watch events with type "BOOKMARK".'),
  query('continue', 'string', 'The continue option should be set when retrieving more results from the server.'),
  query('fieldSelector', 'string', 'A selector to restrict the list of returned objects by their fields.'),
  query('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels.'),
  query('limit', 'integer', 'The maximum number of responses to return for a list call.'),
  query('resourceVersion', 'string', 'Sets a constraint on what resource versions a request may be served from.'),
  query('resourceVersionMatch', 'string', 'Determines how resourceVersion is applied to list calls.'),
  query('sendInitialEvents', 'boolean', 'Requests a watch stream to begin with synthetic events of the current state.'),
  query('timeoutSeconds', 'integer', 'Timeout for the list/watch call.'),
  query('watch', 'boolean', 'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.'),
];
const DELETE_PARAMS: Param[] = [
  DRY_RUN,
  query('gracePeriodSeconds', 'integer', 'The duration in seconds before the object should be deleted.'),
  query('ignoreStoreReadErrorWithClusterBreakingPotential', 'boolean', 'If set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error.'),
  query('orphanDependents', 'boolean', 'Deprecated: please use the PropagationPolicy.'),
  query('propagationPolicy', 'string', "Whether and how garbage collection will be performed: 'Orphan', 'Background' or 'Foreground'."),
];

type Action = 'get' | 'list' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection';
const VERB_OF: Record<Action, string> = { get: 'read', list: 'list', post: 'create', put: 'replace', patch: 'patch', delete: 'delete', deletecollection: 'deletecollection' };

interface Operation {
  action: Action;
  /** The definition the operation answers (and, for post and put, reads). */
  returns: string;
  params: Param[];
  /** The operation id's suffix: `ForAllNamespaces`, `Status`, `Scale`. */
  suffix?: string;
}

/** The operations of each path of a CRD version. */
function operations(names: CustomKindNames, namespaced: boolean, subresources: { status: boolean; scale: boolean }): Record<string, Operation[]> {
  const kindDef = definitionName(names.group, names.version, names.kind);
  const listDef = definitionName(names.group, names.version, names.listKind);
  const root = `/apis/${names.group}/${names.version}`;
  const collection = `${root}${namespaced ? '/namespaces/{namespace}' : ''}/${names.plural}`;
  const writes = [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];
  const objectOps = (returns: string, suffix?: string): Operation[] => [
    { action: 'get', returns, params: [], suffix },
    { action: 'put', returns, params: writes, suffix },
    { action: 'patch', returns, params: [...writes, FORCE], suffix },
  ];
  const paths: Record<string, Operation[]> = {
    [collection]: [
      { action: 'list', returns: listDef, params: LIST_PARAMS },
      { action: 'post', returns: kindDef, params: writes },
      { action: 'deletecollection', returns: STATUS, params: [...LIST_PARAMS, ...DELETE_PARAMS] },
    ],
    [`${collection}/{name}`]: [...objectOps(kindDef), { action: 'delete', returns: STATUS, params: DELETE_PARAMS }],
  };
  if (namespaced) paths[`${root}/${names.plural}`] = [{ action: 'list', returns: listDef, params: LIST_PARAMS, suffix: 'ForAllNamespaces' }];
  if (subresources.status) paths[`${collection}/{name}/status`] = objectOps(kindDef, 'Status');
  if (subresources.scale) paths[`${collection}/{name}/scale`] = objectOps(SCALE, 'Scale');
  return paths;
}

/** Definitions the paths refer to besides the kind's own: Status, Patch, DeleteOptions and Scale when served. */
export const pathDefinitions = (scale: boolean): string[] => [STATUS, PATCH, DELETE_OPTIONS, ...(scale ? [SCALE] : [])];

/** The paths of one CRD version in Swagger 2.0 (`v3` false) or OpenAPI v3 form; refs are written with `refPrefix`. */
export function customPaths(names: CustomKindNames, namespaced: boolean, subresources: { status: boolean; scale: boolean },
  v3: boolean, refPrefix: string): Record<string, unknown> {
  const ref = (name: string): Schema => ({ $ref: refPrefix + name });
  const gvk = { group: names.group, version: names.version, kind: names.kind };
  const out: Record<string, unknown> = {};
  for (const [path, ops] of Object.entries(operations(names, namespaced, subresources))) {
    const pathParams: Param[] = [
      ...(path.includes('{name}') ? [{ name: 'name', in: 'path' as const, type: 'string', description: `name of the ${names.kind}`, required: true }] : []),
      ...(path.includes('{namespace}') ? [{ name: 'namespace', in: 'path' as const, type: 'string', description: 'object name and auth scope, such as for teams and projects', required: true }] : []),
      PRETTY,
    ];
    const item: Record<string, unknown> = { parameters: pathParams.map((p) => param(p, v3)) };
    for (const op of ops) item[httpMethod(op.action)] = operation(op, names, namespaced, v3, ref, gvk);
    out[path] = item;
  }
  return out;
}

/** The operation tag of a group version as the platform names it: `stableExampleCom_v1`. */
const tagOf = (names: CustomKindNames): string =>
  `${names.group.split(/[.-]/).map((p, i) => (i ? p.charAt(0).toUpperCase() + p.slice(1) : p)).join('')}_${names.version}`;

function httpMethod(action: Action): string {
  if (action === 'list') return 'get';
  if (action === 'deletecollection') return 'delete';
  return action;
}

const param = (p: Param, v3: boolean): unknown => {
  const { type, ...rest } = p;
  return v3 ? { ...rest, schema: { type }, ...(p.in === 'query' ? { uniqueItems: true } : {}) } : { ...p, ...(p.in === 'query' ? { uniqueItems: true } : {}) };
};

/** What an operation does, in the platform's words: `list objects of kind Widget`, `create a Widget`, `replace status of the specified Widget`. */
function descriptionOf(op: Operation, kind: string): string {
  const sub = op.suffix === 'Status' || op.suffix === 'Scale' ? ` ${op.suffix.toLowerCase()} of` : '';
  if (op.action === 'deletecollection') return `delete collection of ${kind}`;
  if (op.action === 'list') return `list objects of kind ${kind}`;
  if (op.action === 'post' || op.action === 'delete') return `${VERB_OF[op.action]}${sub} ${/^[AEIOU]/.test(kind) ? 'an' : 'a'} ${kind}`;
  return `${op.action === 'patch' ? 'partially update' : VERB_OF[op.action]}${sub} the specified ${kind}`;
}

/** The request body: the object for post and put, a Patch, DeleteOptions for deletes; none for reads. */
function bodyOf(op: Operation, ref: (n: string) => Schema): Schema | undefined {
  if (op.action === 'patch') return ref(PATCH);
  if (op.action === 'post' || op.action === 'put') return ref(op.returns);
  return op.action === 'delete' || op.action === 'deletecollection' ? ref(DELETE_OPTIONS) : undefined;
}

function responsesOf(op: Operation, v3: boolean, ref: (n: string) => Schema, produces: string[]): Record<string, unknown> {
  const codes: Record<string, string> = {
    200: 'OK',
    ...(op.action === 'post' ? { 201: 'Created', 202: 'Accepted' } : {}),
    ...(op.action === 'put' || (op.action === 'patch' && !op.suffix) ? { 201: 'Created' } : {}),
    ...(op.action === 'delete' ? { 202: 'Accepted' } : {}),
  };
  const response = (description: string) => (v3
    ? { description, content: Object.fromEntries(produces.map((t) => [t, { schema: ref(op.returns) }])) }
    : { description, schema: ref(op.returns) });
  return { ...Object.fromEntries(Object.entries(codes).map(([code, d]) => [code, response(d)])), 401: { description: 'Unauthorized' } };
}

function operation(op: Operation, names: CustomKindNames, namespaced: boolean, v3: boolean, ref: (n: string) => Schema,
  gvk: Record<string, string>): unknown {
  const body = bodyOf(op, ref);
  const consumes = op.action === 'patch' ? PATCH_TYPES : CONSUMES;
  const produces = op.action === 'list' ? [...PRODUCES, 'application/json;stream=watch'] : PRODUCES;
  const bodyRequired = op.action !== 'delete' && op.action !== 'deletecollection';
  return {
    description: descriptionOf(op, names.kind),
    operationId: `${VERB_OF[op.action]}${namespaced && op.suffix !== 'ForAllNamespaces' ? 'Namespaced' : ''}${names.kind}${op.suffix ?? ''}`,
    tags: [tagOf(names)],
    parameters: [
      ...op.params.map((p) => param(p, v3)),
      ...(!v3 && body ? [{ name: 'body', in: 'body', required: bodyRequired, schema: body }] : []),
    ],
    ...(v3 && body ? { requestBody: { content: Object.fromEntries(consumes.map((t) => [t, { schema: body }])), required: bodyRequired } } : {}),
    ...(v3 ? {} : { consumes, produces, schemes: ['https'] }),
    responses: responsesOf(op, v3, ref, produces),
    [extension('action')]: op.action,
    [extension('group-version-kind')]: gvk,
  };
}
