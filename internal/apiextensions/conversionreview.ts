// The ConversionReview exchange with a conversion webhook: the request a CRD's
// objects are sent in, and the checks its answer must pass, as the platform makes
// them: the review's uid and a Success result, one object back per object sent,
// each in the desired version with its kind, name, namespace and uid kept. Of the
// metadata only labels and annotations may change; the rest is put back.
import type { ApiObject } from '../apimachinery/meta.js';
import { annotations, labels } from '../apimachinery/validation.js';
import { group, upstreamGroup } from '../names/index.js';
import { asObj, isObject, str } from '../registry/values.js';

const EXTENSIONS = group('apiextensions');
/** The review versions this server speaks, by the name a CRD lists them under. */
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** What of a converted object is wrong: its type, its identity, or its metadata (the platform words each differently). */
export type Fault = 'type' | 'identity' | 'metadata';

export class ReviewError extends Error {
  constructor(message: string, readonly fault: Fault = 'identity') {
    super(message);
  }
}

/** The review version to send: the first of `conversionReviewVersions` this server speaks. */
export function reviewVersion(conversionReviewVersions: string[]): string {
  const version = conversionReviewVersions.find((v) => REVIEW_VERSIONS.includes(v));
  if (!version) throw new ReviewError('no supported conversion review versions');
  return version;
}

export const reviewRequest = (version: string, uid: string, desiredAPIVersion: string, sent: ApiObject[]) => ({
  kind: 'ConversionReview', apiVersion: `${EXTENSIONS}/${version}`, request: { uid, desiredAPIVersion, objects: sent },
});

/** `group/version, Kind=kind`, as the platform names a type in these errors. */
export const gvkString = (o: ApiObject): string => {
  const [g, v] = (o.apiVersion ?? '').includes('/') ? (o.apiVersion ?? '').split('/') : ['', o.apiVersion ?? ''];
  return `${g}/${v}, Kind=${o.kind ?? ''}`;
};

/** The converted objects of a v1 answer (kind, version and uid checked; v1beta1 answers are not, as the platform does). */
export function convertedObjects(version: string, uid: string, answer: unknown): unknown[] {
  const review = asObj(answer) ?? {};
  if (version === 'v1') {
    const apiVersions = [`${EXTENSIONS}/v1`, `${upstreamGroup(EXTENSIONS)}/v1`];
    if (review.kind !== 'ConversionReview' || !apiVersions.includes(str(review.apiVersion) ?? '')) {
      throw new ReviewError(`expected webhook response of ${EXTENSIONS}/v1, Kind=ConversionReview, got ${gvkString(review as ApiObject)}`);
    }
  }
  const response = asObj(review.response);
  if (!response) throw new ReviewError('no response provided');
  if (version === 'v1' && response.uid !== uid) throw new ReviewError(`expected response.uid="${uid}", got "${str(response.uid) ?? ''}"`);
  const result = asObj(response.result) ?? {};
  if (result.status !== 'Success') {
    throw new ReviewError(str(result.message) || `response.result.status was '${str(result.status) ?? ''}', not 'Success'`);
  }
  return Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
}

/** The converted object checked against the one sent; its metadata is the original's, with the webhook's labels and annotations. */
export function checkConverted(original: ApiObject, converted: unknown, desiredAPIVersion: string): ApiObject {
  if (!isObject(converted)) throw new ReviewError(`invalid type, expected=object, got=${typeof converted}`, 'type');
  const out = converted as ApiObject;
  if (out.apiVersion !== desiredAPIVersion) throw new ReviewError(`invalid groupVersion (expected ${desiredAPIVersion}, received ${out.apiVersion ?? ''})`, 'type');
  if (out.kind !== original.kind) throw new ReviewError(`invalid kind (expected ${original.kind}, received ${out.kind ?? ''})`, 'type');
  const before = original.metadata ?? {};
  const after = asObj(out.metadata);
  for (const [field, a, b] of [['name', before.name, after?.name], ['namespace', before.namespace, after?.namespace], ['UID', before.uid, after?.uid]]) {
    if ((a ?? '') !== (b ?? '')) throw new ReviewError(`must have the same ${field}: ${a ?? ''} != ${b ?? ''}`);
  }
  if (!after) throw new ReviewError('missing metadata in converted object', 'metadata');
  return { ...out, metadata: restoredMetadata(before, after) };
}

/** The original metadata with the labels and annotations the webhook answered (checked when they changed). */
function restoredMetadata(original: NonNullable<ApiObject['metadata']>, answered: Record<string, unknown>): NonNullable<ApiObject['metadata']> {
  const meta = structuredClone(original);
  for (const field of ['labels', 'annotations'] as const) {
    const value = answered[field];
    if (value === undefined || value === null) {
      delete meta[field];
      continue;
    }
    if (!isObject(value)) throw new ReviewError(`invalid metadata.${field} of type ${typeof value} in converted object`, 'metadata');
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== 'string') throw new ReviewError(`metadata.${field}[${k}] must be a string, but is ${typeof v} in converted object`, 'metadata');
    }
    const map = value as Record<string, string>;
    const causes = field === 'labels' ? labels('metadata.labels', map) : annotations('metadata.annotation', map);
    if (causes.length && changed(original[field], map)) throw new ReviewError(causes.map((c) => `${c.field}: ${c.message}`).join(', '), 'metadata');
    meta[field] = map;
  }
  return meta;
}

const changed = (a: Record<string, string> | undefined, b: Record<string, string>) =>
  Object.keys(a ?? {}).length !== Object.keys(b).length || Object.entries(b).some(([k, v]) => a?.[k] !== v);
