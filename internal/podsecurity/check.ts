// What every Pod Security check shares: its shape, the walk over a pod's
// containers and the wording helpers of the platform's messages.
import type { Level, Version } from './policy.js';

export type Json = Record<string, any>;

/** A check's verdict: a short reason, and a detail naming what was refused. */
export interface CheckResult {
  allowed: boolean;
  reason?: string;
  detail?: string;
}

export type CheckFn = (metadata: Json, spec: Json) => CheckResult;

export interface VersionedCheck {
  /** The first policy version (minor of v1.x) this revision of the check applies to. */
  minimum: Version;
  check: CheckFn;
  /** Baseline checks this restricted check replaces. */
  overrides?: string[];
}

export interface Check {
  id: string;
  level: Exclude<Level, 'privileged'>;
  /** Revisions in increasing order of their minimum version. */
  versions: VersionedCheck[];
}

export const ALLOWED: CheckResult = { allowed: true };
export const refused = (reason: string, detail: string): CheckResult => ({ allowed: false, reason, detail });

const list = (value: unknown): Json[] => (Array.isArray(value) ? value.filter((v) => v && typeof v === 'object') : []);

/** Init containers, containers, then ephemeral containers. */
export const containers = (spec: Json): Json[] =>
  [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)];
export const volumes = (spec: Json): Json[] => list(spec.volumes);

export const nameOf = (c: Json): string => (typeof c.name === 'string' ? c.name : '');
export const present = (v: unknown): boolean => v !== undefined && v !== null;

/** `"a", "b"` */
export const joinQuote = (items: string[]): string => (items.length ? `"${items.join('", "')}"` : '');
export const pluralize = (singular: string, plural: string, count: number): string => (count === 1 ? singular : plural);
/** `container "a"` or `containers "a", "b"` */
export const containersPhrase = (names: string[]): string => `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
/** The distinct values, sorted (the platform lists sets sorted). */
export const sortedSet = (values: Iterable<string>): string[] => [...new Set(values)].sort();

/** Whether the pod declares itself a Windows pod (checks that Windows cannot honour skip it from v1.25). */
export const windowsPod = (spec: Json): boolean => spec.os?.name === 'windows';
