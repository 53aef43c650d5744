// Evaluates a pod against one level and version: the revision of each check in
// force at that version, baseline checks first then restricted ones (each set in
// the order of their IDs, as the platform lists them), restricted checks
// replacing the baseline checks they override. Versions past the newest check
// judge as the newest.
import { BASELINE_CHECKS } from './baseline.js';
import type { Check, CheckFn, CheckResult, Json } from './check.js';
import { RESTRICTED_CHECKS } from './restricted.js';
import { levelVersionString, type LevelVersion, type Version } from './policy.js';

/** The outcome of all checks: the refusing ones' reasons and details, in order. */
export class AggregateResult {
  constructor(readonly refusals: CheckResult[]) {}

  get allowed(): boolean {
    return this.refusals.length === 0;
  }

  /** `host ports, privileged` */
  reason(): string {
    return this.refusals.map((r) => r.reason || 'unknown forbidden reason').join(', ');
  }

  /** `hostPort (container "a" uses hostPort 80), privileged (...)` */
  detail(): string {
    return this.refusals.map((r) => `${r.reason || 'unknown forbidden reason'}${r.detail ? ` (${r.detail})` : ''}`).join(', ');
  }
}

const byId = (a: Check, b: Check): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The revision of a check in force at a version, if any. */
function revisionAt(check: Check, version: Version) {
  return [...check.versions].reverse().find((v) => v.minimum <= version);
}

export class Evaluator {
  private readonly baseline: Check[];
  private readonly restricted: Check[];
  private readonly maxVersion: Version;
  private readonly cache = new Map<string, CheckFn[]>();

  constructor(checks: Check[] = [...BASELINE_CHECKS, ...RESTRICTED_CHECKS]) {
    this.baseline = checks.filter((c) => c.level === 'baseline').sort(byId);
    this.restricted = checks.filter((c) => c.level === 'restricted').sort(byId);
    this.maxVersion = Math.max(...checks.flatMap((c) => c.versions.map((v) => v.minimum)));
  }

  evaluate(lv: LevelVersion, metadata: Json, spec: Json): AggregateResult {
    const results = this.checksFor(lv).map((check) => check(metadata, spec));
    return new AggregateResult(results.filter((r) => !r.allowed));
  }

  private checksFor(lv: LevelVersion): CheckFn[] {
    if (lv.level === 'privileged') return [];
    const version = Math.min(lv.version, this.maxVersion);
    const key = levelVersionString({ level: lv.level, version });
    let checks = this.cache.get(key);
    if (!checks) {
      checks = this.build(lv.level, version);
      this.cache.set(key, checks);
    }
    return checks;
  }

  private build(level: 'baseline' | 'restricted', version: Version): CheckFn[] {
    const restricted = level === 'restricted' ? this.restricted.map((c) => revisionAt(c, version)).filter((r) => r !== undefined) : [];
    const overridden = new Set(restricted.flatMap((r) => r.overrides ?? []));
    const baseline = this.baseline.filter((c) => !overridden.has(c.id)).map((c) => revisionAt(c, version)).filter((r) => r !== undefined);
    return [...baseline, ...restricted].map((r) => r.check);
  }
}
