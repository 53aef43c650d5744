// Object metadata helpers shared by every kind.
import { randomUUID, randomInt } from 'node:crypto';

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: unknown[];
  managedFields?: unknown[];
  [key: string]: unknown;
}

export interface ApiObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [key: string]: unknown;
}

/** The current second's timestamp, made once a second rather than on every write that stamps one. */
let stamp = { second: NaN, text: '' };

/** RFC 3339 with second precision, as the API's `Time` fields. */
export function nowTimestamp(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== stamp.second) stamp = { second, text: new Date(second * 1000).toISOString().replace('.000Z', 'Z') };
  return stamp.text;
}

export const newUid = (): string => randomUUID();

// The alphabet of generated name suffixes: no vowels (no words) and no look-alike characters.
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_NAME_LENGTH = 63;

/** A name from a `generateName` prefix plus five random characters. */
export function generateName(prefix: string): string {
  const base = prefix.slice(0, MAX_NAME_LENGTH - 5);
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += SUFFIX_ALPHABET[randomInt(SUFFIX_ALPHABET.length)];
  return base + suffix;
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Empty lists and maps of metadata are not stored, as the platform's encoding omits them (a patch that
 * removes the last finalizer leaves no `finalizers: []`). */
export function dropEmptyCollections(meta: ObjectMeta): void {
  for (const f of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    const v = meta[f];
    if (v !== undefined && (Array.isArray(v) ? v.length === 0 : isObject(v) && Object.keys(v).length === 0)) delete meta[f];
  }
}

/** `group/version` or `version` for the core group. */
export const apiVersionOf = (group: string, version: string): string => (group ? `${group}/${version}` : version);

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}
