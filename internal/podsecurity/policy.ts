// Pod Security levels, policy versions and the policy a namespace's labels
// (`pod-security.<domain>/enforce|audit|warn` and their `-version`) ask for,
// over the configured defaults.
import { podSecurityKey, wellKnownValue, type WellKnown } from '../names/index.js';

export type Level = 'privileged' | 'baseline' | 'restricted';
export const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/** A policy version is the minor of v1.x; `latest` is newer than any. */
export type Version = number;
export const LATEST: Version = Number.POSITIVE_INFINITY;
/** The platform release this server is: checks newer than it do not exist, so `v1.35` judges as latest. */
export const SERVER_VERSION: Version = 34;

export const versionString = (v: Version): string => (v === LATEST ? 'latest' : `v1.${v}`);

export interface LevelVersion {
  level: Level;
  version: Version;
}
export const levelVersionString = (lv: LevelVersion): string => `${lv.level}:${versionString(lv.version)}`;

export type Mode = 'enforce' | 'audit' | 'warn';
export const MODES: readonly Mode[] = ['enforce', 'audit', 'warn'];
export type Policy = Record<Mode, LevelVersion>;

export const LEVEL_ERROR = 'must be one of privileged, baseline, restricted';
export const VERSION_ERROR = 'must be "latest" or "v1.x"';

export function parseLevel(text: string): Level | undefined {
  return (LEVELS as string[]).includes(text) ? (text as Level) : undefined;
}

export function parseVersion(text: string): Version | undefined {
  if (text === 'latest') return LATEST;
  const match = /^v1\.(0|[1-9][0-9]*)$/.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** -1, 0 or 1 as a is less, as or more restrictive than b. */
export const compareLevels = (a: Level, b: Level): number => Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));

export const fullyPrivileged = (p: Policy): boolean => MODES.every((m) => p[m].level === 'privileged');

const sameLevelVersion = (a: LevelVersion, b: LevelVersion): boolean => a.level === b.level && a.version === b.version;
/** Privileged is privileged whatever its version. */
export const equivalent = (a: LevelVersion, b: LevelVersion): boolean =>
  (a.level === 'privileged' && b.level === 'privileged') || sameLevelVersion(a, b);
export const samePolicy = (a: Policy, b: Policy): boolean => MODES.every((m) => sameLevelVersion(a[m], b[m]));
export const equivalentPolicy = (a: Policy, b: Policy): boolean => MODES.every((m) => equivalent(a[m], b[m]));

export const PRIVILEGED_LATEST: LevelVersion = { level: 'privileged', version: LATEST };

/** A label the namespace carries: the key as written (either spelling) and its value. */
interface Label { key: string; value: string }

/** The label of each policy key, in the product's spelling first, else upstream's. */
export function policyLabel(labels: Record<string, string>, name: string): Label | undefined {
  const known: WellKnown = podSecurityKey(name);
  const value = wellKnownValue(labels, known);
  if (value === undefined) return undefined;
  return { key: known.own in labels ? known.own : known.upstream, value };
}

/** A label that does not parse: its key, its value and why. */
export interface LabelError { key: string; value: string; detail: string }

export const labelErrorField = (e: LabelError): string => `metadata.labels[${e.key}]`;
export const labelErrorMessage = (e: LabelError): string => `Invalid value: ${JSON.stringify(e.value)}: ${e.detail}`;

/**
 * The policy the labels ask for over the defaults. A bad enforce level enforces
 * restricted:latest's level (fail closed); bad audit and warn levels are
 * privileged (fail open). With an enforce level but no warn level, warn is at
 * least as strict as enforce.
 */
export function policyToEvaluate(labels: Record<string, string> | undefined, defaults: Policy): { policy: Policy; errors: LabelError[] } {
  const policy: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errors: LabelError[] = [];
  if (!labels || Object.keys(labels).length === 0) return { policy, errors };
  const seen: Partial<Record<string, boolean>> = {};
  for (const mode of MODES) {
    const level = policyLabel(labels, mode);
    if (level) {
      const parsed = parseLevel(level.value);
      if (!parsed) errors.push({ ...level, detail: LEVEL_ERROR });
      policy[mode].level = parsed ?? (mode === 'enforce' ? 'restricted' : 'privileged');
      seen[mode] = parsed !== undefined || mode === 'warn';
    }
    const version = policyLabel(labels, `${mode}-version`);
    if (version) {
      const parsed = parseVersion(version.value);
      if (parsed === undefined) errors.push({ ...version, detail: VERSION_ERROR });
      policy[mode].version = parsed ?? LATEST;
      seen[`${mode}-version`] = true;
    }
  }
  if (!seen.warn && seen.enforce && compareLevels(policy.enforce.level, policy.warn.level) > 0) {
    policy.warn.level = policy.enforce.level;
    if (!seen['warn-version']) policy.warn.version = policy.enforce.version;
  }
  return { policy, errors };
}
