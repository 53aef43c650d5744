// POST serviceaccounts/{name}/token: a TokenRequest answered with a signed token.
// The gateway reads the service account and the object the token is bound to
// (a Pod, Secret or Node, whose uid must match); the authentication service,
// which alone holds the signing key, signs it.
import type { ApiObject } from '../internal/apimachinery/meta.js';
import { isObject, nowTimestamp } from '../internal/apimachinery/meta.js';
import { StatusError, badRequest, conflict, invalid, type StatusCause } from '../internal/apimachinery/status.js';
import { UPSTREAM_GROUP_META, group, ownGroup } from '../internal/names/index.js';
import type { ObjectRef } from '../internal/rpc/gen/svc/authn/v1/ObjectRef.js';
import { DEFAULT_EXPIRATION_SECONDS, MAX_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS } from '../internal/serviceaccount/issuer.js';
import { admit } from './store/admission.js';
import type { Backends } from './backends.js';
import { isDryRun, readObject } from './body.js';
import type { ResourceRequest } from './context.js';
import { BOUND_RESOURCES, type BoundKind } from '../internal/serviceaccount/issuer.js';
import { Objects } from './objects.js';
import { formatOf, writeBody } from './respond.js';
import { addWarning } from './headers.js';

const AUTHENTICATION_GROUP = group('authentication');

interface Spec {
  audiences: string[];
  expirationSeconds: number;
  boundObjectRef?: { kind?: string; apiVersion?: string; name?: string; uid?: string };
}

/** As upstream, validation names no object (the message reads `TokenRequest... "" is invalid`). */
function invalidRequest(name: string, causes: StatusCause[]): StatusError {
  return invalid('TokenRequest', { group: AUTHENTICATION_GROUP, resource: 'tokenrequests' }, name, causes);
}

/** The TokenRequest's spec with its defaults, or a 400/422 naming what is wrong. */
function specOf(obj: ApiObject, name: string): Spec {
  const [objGroup, version] = String(obj.apiVersion ?? '').split('/');
  if (obj.kind !== undefined && (obj.kind !== 'TokenRequest' || ownGroup(objGroup) !== AUTHENTICATION_GROUP || version !== 'v1')) {
    throw badRequest(`the body must be a TokenRequest of ${AUTHENTICATION_GROUP}/v1, not ${obj.kind} of ${obj.apiVersion}`);
  }
  const spec = (isObject(obj.spec) ? obj.spec : {}) as Record<string, unknown>;
  const causes: StatusCause[] = [];
  const audiences = spec.audiences ?? [];
  if (!Array.isArray(audiences) || audiences.some((a) => typeof a !== 'string')) causes.push({ reason: 'FieldValueInvalid', field: 'spec.audiences', message: 'must be a list of strings' });
  const expiration = spec.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  if (!Number.isInteger(expiration)) causes.push({ reason: 'FieldValueInvalid', field: 'spec.expirationSeconds', message: `Invalid value: ${JSON.stringify(expiration)}: must be an integer` });
  else if ((expiration as number) < MIN_EXPIRATION_SECONDS) causes.push({ reason: 'FieldValueInvalid', field: 'spec.expirationSeconds', message: `Invalid value: ${expiration}: may not specify a duration less than 10 minutes` });
  else if ((expiration as number) > MAX_EXPIRATION_SECONDS) causes.push({ reason: 'FieldValueInvalid', field: 'spec.expirationSeconds', message: `Invalid value: ${expiration}: may not specify a duration larger than 2^32 seconds` });
  const ref = spec.boundObjectRef;
  if (ref !== undefined && ref !== null && !isObject(ref)) causes.push({ reason: 'FieldValueInvalid', field: 'spec.boundObjectRef', message: 'must be an object' });
  if (causes.length) throw invalidRequest(name, causes);
  return { audiences: audiences as string[], expirationSeconds: expiration as number, boundObjectRef: (ref ?? undefined) as Spec['boundObjectRef'] };
}

/** The bound object as read now: kind, reference and, for a pod, its node. */
async function boundObject(r: ResourceRequest, saName: string, ref: NonNullable<Spec['boundObjectRef']>) {
  const kind = ref.kind ?? '';
  const [refGroup] = String(ref.apiVersion ?? 'v1').split('/').reverse().slice(1);
  const resource = Object.hasOwn(BOUND_RESOURCES, kind) ? BOUND_RESOURCES[kind as BoundKind] : undefined;
  if (!resource || refGroup) throw badRequest(`cannot bind token to object of type ${ref.apiVersion ?? ''}, Kind=${kind}`);
  if (!ref.name) throw invalidRequest(saName, [{ reason: 'FieldValueRequired', field: 'spec.boundObjectRef.name', message: 'Required value' }]);
  const def = r.registry.lookup('', 'v1', resource)!;
  const { obj } = await new Objects(r.objects.storage, def).get(r.info.namespace, ref.name);
  const uid = obj.metadata?.uid ?? '';
  if (ref.uid && ref.uid !== uid) {
    throw conflict({ group: '', resource: kind }, ref.name, `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
  }
  let node: ObjectRef | undefined;
  if (kind === 'Pod') {
    const podSpec = (obj.spec ?? {}) as { serviceAccountName?: string; nodeName?: string };
    if ((podSpec.serviceAccountName || 'default') !== saName) {
      throw badRequest(`cannot bind token for serviceaccount "${saName}" to pod running with different serviceaccount name.`);
    }
    if (podSpec.nodeName) node = await nodeOf(r, podSpec.nodeName);
  }
  return { kind, ref: { name: ref.name, uid }, node };
}

/** A pod's node: its uid when the node is known, the name alone otherwise. */
async function nodeOf(r: ResourceRequest, name: string): Promise<ObjectRef> {
  try {
    const { obj } = await new Objects(r.objects.storage, r.registry.lookup('', 'v1', 'nodes')!).get('', name);
    return { name, uid: obj.metadata?.uid ?? '' };
  } catch {
    return { name, uid: '' };
  }
}

/** The body's name and namespace, when given, are the service account's. */
function checkMetadata(obj: ApiObject, namespace: string, name: string): void {
  const field = (path: string, value: string, what: string): StatusCause =>
    ({ reason: 'FieldValueInvalid', field: path, message: `Invalid value: ${JSON.stringify(value)}: must match the service account ${what} if specified` });
  const { name: bodyName, namespace: bodyNamespace } = obj.metadata ?? {};
  if (bodyName && bodyName !== name) throw invalidRequest(name, [field('metadata.name', bodyName, 'name')]);
  if (bodyNamespace && bodyNamespace !== namespace) throw invalidRequest(name, [field('metadata.namespace', bodyNamespace, 'namespace')]);
}

export async function serveTokenRequest(r: ResourceRequest, backends: Backends): Promise<void> {
  const { obj } = await readObject(r.ctx);
  const { namespace, name } = r.info;
  checkMetadata(obj, namespace, name);
  const { obj: sa } = await r.objects.get(namespace, name);
  const spec = specOf(obj, '');
  const bound = spec.boundObjectRef ? await boundObject(r, name, spec.boundObjectRef) : undefined;
  const apiVersion = typeof obj.apiVersion === 'string' && obj.apiVersion ? obj.apiVersion : `${AUTHENTICATION_GROUP}/v1`;
  const answer: ApiObject = {
    kind: 'TokenRequest', apiVersion,
    metadata: { name, namespace, creationTimestamp: nowTimestamp() },
    spec: { ...spec },
    status: { token: '', expirationTimestamp: null },
  };
  // Admission sees the request as the token sub-resource of the account (NodeRestriction keeps a node to its own pods' tokens).
  await admit((req) => backends.admit(req), {
    def: r.def, operation: 'CREATE', user: r.user, obj: answer, dryRun: isDryRun(r.query),
    options: { kind: 'CreateOptions', apiVersion: `${UPSTREAM_GROUP_META}/v1` }, subresource: 'token',
  });
  if (!isDryRun(r.query)) {
    const issued = await backends.issueServiceAccountToken({
      namespace, serviceAccount: { name, uid: sa.metadata?.uid ?? '' }, audiences: spec.audiences,
      expirationSeconds: spec.expirationSeconds, boundObjectKind: bound?.kind ?? '', boundObject: bound?.ref, node: bound?.node,
    });
    if (issued.expirationSeconds < spec.expirationSeconds) {
      addWarning(r.ctx, `requested expiration of ${spec.expirationSeconds} seconds shortened to ${issued.expirationSeconds} seconds`);
    }
    answer.spec = { ...(answer.spec as object), audiences: issued.audiences, expirationSeconds: issued.expirationSeconds };
    answer.status = { token: issued.token, expirationTimestamp: new Date(issued.expirationTimestamp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  }
  writeBody(r.ctx, 201, answer, formatOf(r.ctx).mediaType);
}
