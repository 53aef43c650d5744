// AdmissionReview: the request a webhook is sent (v1 or v1beta1, the first of
// its admissionReviewVersions this server speaks) and the checks its answer
// must pass before it is applied.
import { GROUP_META, group, upstreamGroup } from '../../names/index.js';
import type { AdmissionRequest, JsonObject } from '../types.js';
import type { Invocation } from './match.js';

const ADMISSION = group('admission');
/** Review versions this server speaks, preferred first. */
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

const OPTIONS_KIND: Record<string, string> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' };

/** The review version to send: the first of the webhook's this server speaks. */
export function reviewVersion(versions: string[]): string | undefined {
  return versions.find((v) => REVIEW_VERSIONS.includes(v));
}

/** The operation's options as a typed object of the meta group, as webhooks decode them. */
function options(req: AdmissionRequest): JsonObject | undefined {
  const kind = OPTIONS_KIND[req.operation];
  if (!kind) return undefined;
  return { ...(req.options ?? {}), kind, apiVersion: `${GROUP_META}/v1` };
}

function userInfo(req: AdmissionRequest): JsonObject {
  const { username, uid, groups, extra } = req.user;
  const extras = Object.fromEntries(Object.entries(extra ?? {}).map(([k, v]) => [k, v.values]));
  return { username, ...(uid ? { uid } : {}), ...(groups.length ? { groups } : {}), ...(Object.keys(extras).length ? { extra: extras } : {}) };
}

/** The `request` of a review: the request as the webhook's matched version shows it. */
export function reviewRequest(req: AdmissionRequest, invocation: Invocation, object: JsonObject | undefined, oldObject: JsonObject | undefined): JsonObject {
  const requestSubResource = req.requestSubResource ?? req.subresource;
  return {
    uid: req.uid, kind: invocation.kind, resource: invocation.resource,
    ...(req.subresource ? { subResource: req.subresource } : {}),
    requestKind: req.requestKind ?? req.kind, requestResource: req.requestResource ?? req.resource,
    ...(requestSubResource ? { requestSubResource } : {}),
    ...(req.name ? { name: req.name } : {}), ...(req.namespace ? { namespace: req.namespace } : {}),
    operation: req.operation, userInfo: userInfo(req),
    object: object ?? null, oldObject: oldObject ?? null, dryRun: req.dryRun, options: options(req) ?? null,
  };
}

export function review(version: string, request: JsonObject): JsonObject {
  return { apiVersion: `${ADMISSION}/${version}`, kind: 'AdmissionReview', request };
}

/** The parts of a webhook's answer dispatch applies. */
export interface ReviewAnswer {
  allowed: boolean;
  status?: { code?: number; reason?: string; message?: string };
  patch?: unknown[];
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** An answer that breaks the review's rules: the webhook call failed (failurePolicy decides). */
export class InvalidAnswer extends Error {}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function strings(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new InvalidAnswer(`${field} must be a list of strings`);
  return value as string[];
}

function annotations(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value) || Object.values(value).some((v) => typeof v !== 'string')) throw new InvalidAnswer('response.auditAnnotations must map strings to strings');
  return value as Record<string, string>;
}

function patchOf(response: JsonObject, mutating: boolean): unknown[] | undefined {
  if (response.patch === undefined || response.patch === null || response.patch === '') return undefined;
  if (!mutating) throw new InvalidAnswer('validating webhooks may not return patches');
  if (response.patchType !== 'JSONPatch') throw new InvalidAnswer(`webhook returned invalid patchType: "${String(response.patchType ?? '')}"`);
  if (typeof response.patch !== 'string') throw new InvalidAnswer('response.patch must be a base64 string');
  let ops: unknown;
  try {
    ops = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
  } catch (err) {
    throw new InvalidAnswer(`response.patch is not a JSON patch: ${(err as Error).message}`);
  }
  if (!Array.isArray(ops)) throw new InvalidAnswer('response.patch is not a list of JSON patch operations');
  return ops;
}

const REVIEW_API_VERSIONS = (version: string) => [`${ADMISSION}/${version}`, `${upstreamGroup(ADMISSION)}/${version}`];

/** Checks the answer to a review sent as `version` with `uid`. */
export function readAnswer(body: unknown, version: string, uid: string, mutating: boolean): ReviewAnswer {
  if (!isObject(body)) throw new InvalidAnswer('the webhook answer is no AdmissionReview');
  if (version === 'v1') {
    if (!REVIEW_API_VERSIONS('v1').includes(body.apiVersion as string) || body.kind !== 'AdmissionReview') {
      throw new InvalidAnswer(`expected webhook response of ${ADMISSION}/v1, Kind=AdmissionReview, got ${String(body.apiVersion ?? '')}, Kind=${String(body.kind ?? '')}`);
    }
  }
  const response = body.response;
  if (!isObject(response)) throw new InvalidAnswer('webhook response was absent');
  if (version === 'v1' && response.uid !== uid) throw new InvalidAnswer(`expected response.uid="${uid}", got "${String(response.uid ?? '')}"`);
  if (typeof response.allowed !== 'boolean') throw new InvalidAnswer('response.allowed must be a boolean');
  const status = isObject(response.status) ? response.status as ReviewAnswer['status'] : undefined;
  return {
    allowed: response.allowed, status, patch: patchOf(response, mutating),
    warnings: strings(response.warnings, 'response.warnings'), auditAnnotations: annotations(response.auditAnnotations),
  };
}
