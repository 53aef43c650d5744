// batch/v1: Job (every rule of document 3) and CronJob.
import type { ApiObject } from '../../apimachinery/meta.js';
import { JOB_CONTROLLER_UID_LABEL, JOB_NAME_LABEL } from '../../names/index.js';
import { ageColumn, column, count, humanAge, nameColumn, selectorText, templateColumns } from '../columns.js';
import {
  duplicate, forbidden, invalid, invalidField, nonNegative, notSupported, positive, oneOf, qualifiedName, required, tooLong, tooMany,
  unchanged, dns1123Subdomain, type Causes,
} from '../causes.js';
import type { KindSpec } from '../define.js';
import { labelSelector } from '../selectors.js';
import { asList, asObj, child, clone, deepEqual, objects, selectorMatches, setDefault, str, specOf, type Obj } from '../values.js';
import { defaultTemplate, validateTemplate } from './podspec.js';
import { validateCronSchedule, validateTimeZone } from './cron.js';

/** Labels the server puts on a Job's pod template, legacy and prefixed (the prefixed ones in both
 * spellings, so pods are found by either); the generated selector names the product's controller-uid. */
const JOB_NAME_KEYS = ['job-name', JOB_NAME_LABEL.own, JOB_NAME_LABEL.upstream];
const JOB_UID_KEYS = ['controller-uid', JOB_CONTROLLER_UID_LABEL.own, JOB_CONTROLLER_UID_LABEL.upstream];

const MAX_INDEXED_PARALLELISM = 100_000;
const MAX_FAILED_INDEXES = 100_000;
const COMPLETIONS_SOFT_LIMIT = 100_000;
const HIGH_COMPLETIONS_LIMIT = 10_000;
const MAX_RULES = 20;
const MAX_EXIT_CODES = 255;
const MAX_MANAGED_BY = 63;
const MAX_SUCCEEDED_INDEXES_LENGTH = 64 * 1024;
const MAX_INT32 = 2 ** 31 - 1;
const DEFAULT_BACKOFF_LIMIT = 6;
const FAILURE_ACTIONS = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
const EXIT_CODE_OPERATORS = ['In', 'NotIn'];
const CONDITION_STATUSES = ['False', 'True', 'Unknown'];
const HTTP_PATH = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;

const statusOf = (o: ApiObject | undefined): Obj => asObj(o?.status) ?? {};
const isIndexed = (spec: Obj) => spec.completionMode === 'Indexed';
const templateLabels = (spec: Obj) => asObj(asObj(asObj(spec.template)?.metadata)?.labels);

// ---- defaults and the generated selector ----

function defaultJobSpec(spec: Obj): void {
  if (spec.completions === undefined && spec.parallelism === undefined) spec.completions = 1;
  setDefault(spec, 'parallelism', 1);
  setDefault(spec, 'backoffLimit', spec.backoffLimitPerIndex !== undefined ? MAX_INT32 : DEFAULT_BACKOFF_LIMIT);
  setDefault(spec, 'completionMode', 'NonIndexed');
  setDefault(spec, 'suspend', false);
  for (const rule of objects(asObj(spec.podFailurePolicy)?.rules)) {
    for (const pattern of objects(rule.onPodConditions)) if (pattern.status === undefined || pattern.status === '') pattern.status = 'True';
  }
  setDefault(spec, 'podReplacementPolicy', spec.podFailurePolicy !== undefined ? 'Failed' : 'TerminatingOrFailed');
  defaultTemplate(spec.template);
}

function defaultJob(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  const labels = templateLabels(spec);
  if (labels && Object.keys(obj.metadata?.labels ?? {}).length === 0) obj.metadata = { ...obj.metadata, labels: { ...labels } as Record<string, string> };
  defaultJobSpec(spec);
}

/**
 * Unless `manualSelector` is true, the template gets the job-name and controller-uid
 * labels (legacy and prefixed) that the user did not set, and the selector
 * selects the prefixed controller-uid. Conflicting user labels fail validation.
 */
function generateSelector(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec || spec.manualSelector === true || !asObj(spec.template)) return;
  const labels = child(child(spec.template as Obj, 'metadata'), 'labels');
  const name = obj.metadata?.name ?? '';
  const uid = obj.metadata?.uid ?? '';
  for (const key of JOB_NAME_KEYS) setDefault(labels, key, name);
  for (const key of JOB_UID_KEYS) setDefault(labels, key, uid);
  const matchLabels = child(child(spec, 'selector'), 'matchLabels');
  setDefault(matchLabels, JOB_CONTROLLER_UID_LABEL.own, uid);
}

// ---- index lists: "1,3-5,7" ----

interface Intervals {
  ranges: [number, number][];
  total: number;
}

/** Parses ascending, non-overlapping index ranges below `completions`; answers the error text otherwise. */
function parseIndexes(text: string, completions: number): Intervals | string {
  const out: Intervals = { ranges: [], total: 0 };
  if (text === '') return out;
  let last: number | undefined;
  for (const interval of text.split(',')) {
    const limits = interval.split('-');
    if (limits.length > 2) return `the fragment "${interval}" violates the requirement that an index interval can have at most two parts separated by '-'`;
    const bounds: number[] = [];
    for (const limit of limits) {
      if (!/^\+?\d+$/.test(limit)) return `cannot convert string to integer for index: "${limit}"`;
      const x = Number(limit);
      if (x >= completions) return `too large index: "${limit}"`;
      if (last !== undefined && last >= x) return `non-increasing order, previous: ${last}, current: ${x}`;
      last = x;
      bounds.push(x);
    }
    const [from, to = from] = bounds;
    out.ranges.push([from, to]);
    out.total += to - from + 1;
  }
  return out;
}

function overlapOf(a: Intervals, b: Intervals): number | undefined {
  for (const [af, at] of a.ranges) for (const [bf, bt] of b.ranges) if (af <= bt && bf <= at) return Math.max(af, bf);
  return undefined;
}

// ---- spec rules ----

function domainPrefixedPath(field: string, value: string): Causes {
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1) return [invalid(field, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const causes = dns1123Subdomain(field, value.slice(0, slash));
  const path = value.slice(slash + 1);
  if (!HTTP_PATH.test(path)) causes.push(invalid(field, path, `Invalid path: regex used for validation is '${HTTP_PATH.source.slice(1, -1)}'`));
  return causes;
}

function validateExitCodes(field: string, req: Obj, containerNames: Set<string>): Causes {
  const causes = oneOf(`${field}.operator`, req.operator, EXIT_CODE_OPERATORS, true);
  if (req.containerName !== undefined && !containerNames.has(String(req.containerName))) {
    causes.push(invalid(`${field}.containerName`, req.containerName, 'must be one of the container or initContainer names in the pod template'));
  }
  const values = asList(req.values);
  if (values.length === 0) causes.push(invalid(`${field}.values`, values, 'at least one value is required'));
  else if (values.length > MAX_EXIT_CODES) causes.push(tooMany(`${field}.values`, values.length, MAX_EXIT_CODES));
  const seen = new Set<unknown>();
  values.forEach((v, i) => {
    if (req.operator === 'In' && v === 0) causes.push(invalid(`${field}.values[${i}]`, v, 'must not be 0 for the In operator'));
    if (seen.has(v)) causes.push(duplicate(`${field}.values[${i}]`, v));
    seen.add(v);
  });
  if (values.some((v, i) => i > 0 && (values[i - 1] as number) > (v as number))) causes.push(invalid(`${field}.values`, values, 'must be ordered'));
  return causes;
}

function validatePodConditions(field: string, patterns: Obj[]): Causes {
  const causes = patterns.length > MAX_RULES ? [tooMany(field, patterns.length, MAX_RULES)] : [];
  patterns.forEach((p, i) => {
    if (typeof p.type !== 'string' || p.type === '') causes.push(required(`${field}[${i}].type`));
    else causes.push(...qualifiedName(`${field}[${i}].type`, p.type));
    causes.push(...oneOf(`${field}[${i}].status`, p.status, CONDITION_STATUSES, true));
  });
  return causes;
}

function validatePodFailurePolicy(spec: Obj, policy: Obj): Causes {
  const field = 'spec.podFailurePolicy.rules';
  const rules = objects(policy.rules);
  const causes = rules.length > MAX_RULES ? [tooMany(field, rules.length, MAX_RULES)] : [];
  const podSpec = asObj(asObj(spec.template)?.spec) ?? {};
  const containerNames = new Set([...objects(podSpec.containers), ...objects(podSpec.initContainers)].map((c) => String(c.name)));
  rules.forEach((rule, i) => {
    const at = `${field}[${i}]`;
    if (rule.action === 'FailIndex' && spec.backoffLimitPerIndex === undefined) {
      causes.push(invalid(`${at}.action`, rule.action, 'requires the backoffLimitPerIndex to be set'));
    } else causes.push(...oneOf(`${at}.action`, rule.action, FAILURE_ACTIONS, true));
    const exitCodes = asObj(rule.onExitCodes);
    const conditions = objects(rule.onPodConditions);
    if (exitCodes) causes.push(...validateExitCodes(`${at}.onExitCodes`, exitCodes, containerNames));
    if (conditions.length) causes.push(...validatePodConditions(`${at}.onPodConditions`, conditions));
    if (exitCodes && conditions.length) causes.push(invalidField(at, 'specifying both OnExitCodes and OnPodConditions is not supported'));
    if (!exitCodes && conditions.length === 0) causes.push(invalidField(at, 'specifying one of OnExitCodes and OnPodConditions is required'));
  });
  return causes;
}

function validateSuccessPolicy(spec: Obj, policy: Obj): Causes {
  const field = 'spec.successPolicy';
  const causes: Causes = isIndexed(spec) ? [] : [invalid(field, policy, 'requires indexed completion mode')];
  const rules = objects(policy.rules);
  if (rules.length === 0) causes.push(required(`${field}.rules`, 'at least one rules must be specified when the successPolicy is specified'));
  if (rules.length > MAX_RULES) causes.push(tooMany(`${field}.rules`, rules.length, MAX_RULES));
  const completions = typeof spec.completions === 'number' ? spec.completions : 0;
  rules.forEach((rule, i) => {
    const at = `${field}.rules[${i}]`;
    let total = 0;
    if (typeof rule.succeededIndexes === 'string') {
      if (rule.succeededIndexes.length > MAX_SUCCEEDED_INDEXES_LENGTH) causes.push(tooLong(`${at}.succeededIndexes`, MAX_SUCCEEDED_INDEXES_LENGTH));
      const parsed = parseIndexes(rule.succeededIndexes, completions);
      if (typeof parsed === 'string') causes.push(invalid(`${at}.succeededIndexes`, rule.succeededIndexes, `error parsing succeededIndexes: ${parsed}`));
      else total = parsed.total;
    }
    if (typeof rule.succeededCount === 'number') {
      const count = rule.succeededCount;
      if (count < 0) causes.push(invalid(`${at}.succeededCount`, count, 'must be greater than or equal to 0'));
      if (count > completions) causes.push(invalid(`${at}.succeededCount`, count, `must be less than or equal to ${completions} (the number of specified completions)`));
      if (rule.succeededIndexes !== undefined && count > total) {
        causes.push(invalid(`${at}.succeededCount`, count, `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`));
      }
    }
    if (rule.succeededIndexes === undefined && rule.succeededCount === undefined) {
      causes.push(required(at, 'at least one of succeededCount or succeededIndexes must be specified'));
    }
  });
  return causes;
}

function validateIndexedLimits(spec: Obj): Causes {
  const causes: Causes = [];
  const { completions, parallelism, maxFailedIndexes: maxFailed } = spec as Record<string, number | undefined>;
  if (completions === undefined) causes.push(required('spec.completions', 'when completion mode is Indexed'));
  if (parallelism !== undefined && parallelism > MAX_INDEXED_PARALLELISM) {
    causes.push(invalid('spec.parallelism', parallelism, `must be less than or equal to ${MAX_INDEXED_PARALLELISM} when completion mode is Indexed`));
  }
  if (completions !== undefined && maxFailed !== undefined && maxFailed > completions) {
    causes.push(invalid('spec.maxFailedIndexes', maxFailed, 'must be less than or equal to completions'));
  }
  if (maxFailed !== undefined && maxFailed > MAX_FAILED_INDEXES) causes.push(invalid('spec.maxFailedIndexes', maxFailed, `must be less than or equal to ${MAX_FAILED_INDEXES}`));
  if (completions !== undefined && completions > COMPLETIONS_SOFT_LIMIT && spec.backoffLimitPerIndex !== undefined) {
    if (maxFailed === undefined) causes.push(required('spec.maxFailedIndexes', `must be specified when completions is above ${COMPLETIONS_SOFT_LIMIT}`));
    else if (maxFailed > HIGH_COMPLETIONS_LIMIT) {
      causes.push(invalid('spec.maxFailedIndexes', maxFailed, `must be less than or equal to ${HIGH_COMPLETIONS_LIMIT} when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`));
    }
    if (parallelism !== undefined && parallelism > HIGH_COMPLETIONS_LIMIT) {
      causes.push(invalid('spec.parallelism', parallelism, `must be less than or equal to ${HIGH_COMPLETIONS_LIMIT} when completions are above ${COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index`));
    }
  }
  return causes;
}

function validateRestartPolicy(spec: Obj): Causes {
  const restartPolicy = asObj(asObj(spec.template)?.spec)?.restartPolicy;
  const field = 'spec.template.spec.restartPolicy';
  if (restartPolicy === 'Always' || restartPolicy === undefined || restartPolicy === '') return [required(field, 'valid values: "OnFailure", "Never"')];
  if (restartPolicy !== 'OnFailure' && restartPolicy !== 'Never') return [notSupported(field, restartPolicy, ['OnFailure', 'Never'])];
  if (spec.podFailurePolicy !== undefined && restartPolicy !== 'Never') return [invalid(field, restartPolicy, 'only "Never" is supported when podFailurePolicy is specified')];
  return [];
}

/** The rules of a job spec without its selector (shared with CronJob job templates, under `field`). */
function validateJobSpecBody(spec: Obj): Causes {
  const causes: Causes = [];
  for (const f of ['parallelism', 'completions', 'backoffLimit', 'ttlSecondsAfterFinished']) causes.push(...nonNegative(`spec.${f}`, spec[f]));
  causes.push(...positive('spec.activeDeadlineSeconds', spec.activeDeadlineSeconds));
  if (spec.backoffLimitPerIndex !== undefined) {
    causes.push(...nonNegative('spec.backoffLimitPerIndex', spec.backoffLimitPerIndex));
    if (!isIndexed(spec)) causes.push(forbidden('spec.backoffLimitPerIndex', 'requires indexed completion mode'));
    if (asObj(asObj(spec.template)?.spec)?.restartPolicy !== 'Never') causes.push(forbidden('spec.backoffLimitPerIndex', 'requires specifying restartPolicy=Never'));
  }
  if (typeof spec.managedBy === 'string') {
    causes.push(...domainPrefixedPath('spec.managedBy', spec.managedBy));
    if (spec.managedBy.length > MAX_MANAGED_BY) causes.push(tooLong('spec.managedBy', MAX_MANAGED_BY));
  }
  if (spec.maxFailedIndexes !== undefined) {
    causes.push(...nonNegative('spec.maxFailedIndexes', spec.maxFailedIndexes));
    if (spec.backoffLimitPerIndex === undefined) causes.push(required('spec.backoffLimitPerIndex', 'when maxFailedIndexes is specified'));
  }
  if (spec.completionMode !== undefined) {
    causes.push(...oneOf('spec.completionMode', spec.completionMode, ['NonIndexed', 'Indexed']));
    if (isIndexed(spec)) causes.push(...validateIndexedLimits(spec));
  }
  if (spec.podReplacementPolicy !== undefined) {
    const allowed = spec.podFailurePolicy !== undefined ? ['Failed'] : ['Failed', 'TerminatingOrFailed'];
    causes.push(...oneOf('spec.podReplacementPolicy', spec.podReplacementPolicy, allowed));
  }
  if (asObj(spec.successPolicy)) causes.push(...validateSuccessPolicy(spec, spec.successPolicy as Obj));
  causes.push(...validateTemplate('spec.template', spec.template), ...validateRestartPolicy(spec));
  if (asObj(spec.podFailurePolicy)) causes.push(...validatePodFailurePolicy(spec, spec.podFailurePolicy as Obj));
  return causes;
}

/** The generated labels must be on the template, and the selector must select them. */
function validateGeneratedSelector(obj: ApiObject): Causes {
  const spec = specOf(obj);
  if (spec.manualSelector === true || !asObj(spec.selector)) return [];
  const uid = obj.metadata?.uid ?? '';
  const name = obj.metadata?.name ?? '';
  const causes: Causes = uid ? [] : [required('metadata.uid')];
  const labels = templateLabels(spec) ?? {};
  const expected: Record<string, string> = {
    ...Object.fromEntries(JOB_UID_KEYS.map((k) => [k, uid])), ...Object.fromEntries(JOB_NAME_KEYS.map((k) => [k, name])),
  };
  // A Job stored without the upstream spelling stays valid: only the legacy and product labels are required.
  const optional = new Set([JOB_NAME_LABEL.upstream, JOB_CONTROLLER_UID_LABEL.upstream]);
  for (const [key, value] of Object.entries(expected)) {
    if (labels[key] === undefined) {
      if (!optional.has(key)) causes.push(required(`spec.template.metadata.labels[${key}]`, `must be '${value}'`));
    } else if (labels[key] !== value) causes.push(invalid(`spec.template.metadata.labels[${key}]`, labels[key], `must be '${value}'`));
  }
  if (!selectorMatches(spec.selector, expected)) causes.push(invalid('spec.selector', spec.selector, '`selector` not auto-generated'));
  return causes;
}

function validateSelector(spec: Obj): Causes {
  if (!asObj(spec.selector)) return [required('spec.selector')];
  const causes = labelSelector('spec.selector', spec.selector);
  if (causes.length === 0 && !selectorMatches(spec.selector, templateLabels(spec))) {
    causes.push(invalid('spec.template.metadata.labels', templateLabels(spec) ?? {}, '`selector` does not match template `labels`'));
  }
  return causes;
}

/** A suspended job that never started may change its scheduling directives. */
function templateUpdate(spec: Obj, oldSpec: Obj, old: ApiObject): Causes {
  const template = asObj(spec.template) ?? {};
  const before = clone(asObj(oldSpec.template) ?? {});
  if (oldSpec.suspend === true && statusOf(old).startTime === undefined) {
    const podSpec = asObj(template.spec) ?? {};
    const oldPodSpec = child(before, 'spec');
    const meta = child(before, 'metadata');
    meta.labels = asObj(template.metadata)?.labels;
    meta.annotations = asObj(template.metadata)?.annotations;
    for (const f of ['nodeSelector', 'tolerations', 'schedulingGates']) oldPodSpec[f] = podSpec[f];
    const affinity = asObj(podSpec.affinity);
    const oldAffinity = asObj(oldPodSpec.affinity);
    if (affinity || oldAffinity) {
      const rest = { ...oldAffinity, nodeAffinity: affinity?.nodeAffinity };
      oldPodSpec.affinity = !affinity && Object.values(rest).every((v) => v === undefined) ? undefined : rest;
    }
  }
  return unchanged('spec.template', spec.template, before);
}

/** Completions of an Indexed job may change only together with parallelism (elastic jobs). */
function completionsUpdate(spec: Obj, oldSpec: Obj): Causes {
  if (!isIndexed(spec)) return unchanged('spec.completions', spec.completions, oldSpec.completions);
  if (spec.completions === oldSpec.completions || spec.completions === undefined) return [];
  return spec.completions === spec.parallelism ? [] : [invalid('spec.completions', spec.completions, 'can only be modified in tandem with spec.parallelism')];
}

function validateJobUpdate(obj: ApiObject, old: ApiObject): Causes {
  const spec = specOf(obj);
  const oldSpec = specOf(old);
  return [
    ...completionsUpdate(spec, oldSpec),
    ...unchanged('spec.selector', spec.selector, oldSpec.selector),
    ...templateUpdate(spec, oldSpec, old),
    ...['completionMode', 'podFailurePolicy', 'backoffLimitPerIndex', 'managedBy', 'successPolicy']
      .flatMap((f) => unchanged(`spec.${f}`, spec[f], oldSpec[f])),
  ];
}

function validateJob(obj: ApiObject, old?: ApiObject): Causes {
  const spec = specOf(obj);
  return [
    ...validateGeneratedSelector(obj),
    ...validateJobSpecBody(spec),
    ...validateSelector(spec),
    ...(old ? validateJobUpdate(obj, old) : []),
  ];
}

// ---- status rules (`/status` writes) ----

const conditionTrue = (status: Obj, type: string) => objects(status.conditions).some((c) => c.type === type && c.status === 'True');
const isFinished = (status: Obj) => conditionTrue(status, 'Complete') || conditionTrue(status, 'Failed');

function uncountedCauses(status: Obj): Causes {
  const causes: Causes = [];
  const seen = new Set<unknown>();
  const uncounted = asObj(status.uncountedTerminatedPods) ?? {};
  for (const list of ['succeeded', 'failed']) {
    asList(uncounted[list]).forEach((uid, i) => {
      const field = `status.uncountedTerminatedPods.${list}[${i}]`;
      if (uid === '') causes.push(invalid(field, uid, 'must not be empty'));
      else if (seen.has(uid)) causes.push(duplicate(field, uid));
      seen.add(uid);
    });
  }
  return causes;
}

/** A status write: the new and the stored status, and what changed between them. */
interface Transition {
  status: Obj;
  changed(field: string): boolean;
  /** A condition type turned True or stopped being True. */
  flipped(type: string): boolean;
  /** Complete or Failed became or stopped being True. */
  finishedChanged: boolean;
}

function transitionOf(status: Obj, old: Obj): Transition {
  return {
    status,
    changed: (f) => !deepEqual(status[f], old[f]),
    flipped: (type) => conditionTrue(status, type) !== conditionTrue(old, type),
    finishedChanged: isFinished(status) !== isFinished(old),
  };
}

function conditionCauses(t: Transition): Causes {
  const { status } = t;
  const complete = conditionTrue(status, 'Complete');
  const causes: Causes = [];
  if ((t.flipped('Complete') || t.flipped('Failed')) && complete && conditionTrue(status, 'Failed')) {
    causes.push(invalidField('status.conditions', 'cannot set Complete=True and Failed=true conditions'));
  }
  if ((t.flipped('Complete') || t.flipped('FailureTarget')) && complete && conditionTrue(status, 'FailureTarget')) {
    causes.push(invalidField('status.conditions', 'cannot set Complete=True and FailureTarget=true conditions'));
  }
  return causes;
}

function timeCauses(t: Transition): Causes {
  const { status } = t;
  const complete = conditionTrue(status, 'Complete');
  const causes: Causes = [];
  if (t.flipped('Complete') || t.changed('completionTime')) {
    if (status.completionTime !== undefined && !complete) causes.push(invalid('status.completionTime', status.completionTime, 'cannot set completionTime when there is no Complete=True condition'));
    if (status.completionTime === undefined && complete) causes.push(required('status.completionTime', 'completionTime is required for Complete jobs'));
  }
  const { startTime, completionTime } = status;
  if ((t.changed('startTime') || t.changed('completionTime')) && typeof startTime === 'string' && typeof completionTime === 'string'
    && Date.parse(completionTime) < Date.parse(startTime)) {
    causes.push(invalid('status.completionTime', completionTime, 'completionTime cannot be set before startTime'));
  }
  return causes;
}

/** A finished job has no active, terminating or uncounted pods, and has started (unless it never had work). */
function finishedCauses(t: Transition, spec: Obj): Causes {
  const { status } = t;
  if (!isFinished(status)) return [];
  const causes: Causes = [];
  if ((t.finishedChanged || t.changed('active')) && (status.active as number) > 0) causes.push(invalid('status.active', status.active, 'active>0 is invalid for finished job'));
  if ((t.finishedChanged || t.changed('terminating')) && (status.terminating as number) > 0) causes.push(invalid('status.terminating', status.terminating, 'terminating>0 is invalid for finished job'));
  const suspendedWithoutWork = spec.suspend === true && spec.completions === 0;
  if ((t.finishedChanged || t.changed('startTime')) && status.startTime === undefined && !suspendedWithoutWork) causes.push(required('status.startTime', 'startTime is required for finished job'));
  const uncounted = asObj(status.uncountedTerminatedPods);
  if ((t.finishedChanged || t.changed('uncountedTerminatedPods')) && asList(uncounted?.failed).length + asList(uncounted?.succeeded).length > 0) {
    causes.push(invalid('status.uncountedTerminatedPods', uncounted, 'uncountedTerminatedPods needs to be empty for finished job'));
  }
  return causes;
}

/** Rules that only apply when the fields they name change, so an unrelated status write is never blocked. */
function transitionCauses(spec: Obj, status: Obj, old: Obj): Causes {
  const t = transitionOf(status, old);
  const causes = [...conditionCauses(t), ...timeCauses(t), ...finishedCauses(t, spec)];
  if ((t.changed('ready') || t.changed('active')) && (status.ready as number) > ((status.active as number) ?? 0)) {
    causes.push(invalid('status.ready', status.ready, 'cannot set more ready pods than active'));
  }
  return [...causes, ...indexCauses(spec, status, t.changed)];
}

function indexCauses(spec: Obj, status: Obj, changed: (f: string) => boolean): Causes {
  const causes: Causes = [];
  const completions = typeof spec.completions === 'number' ? spec.completions : undefined;
  const completedText = str(status.completedIndexes) ?? '';
  const failedText = str(status.failedIndexes);
  const completed = completions !== undefined ? parseIndexes(completedText, completions) : undefined;
  const failedIdx = completions !== undefined && failedText !== undefined ? parseIndexes(failedText, completions) : undefined;
  if (changed('completedIndexes')) {
    if (typeof completed === 'string') causes.push(invalid('status.completedIndexes', completedText, `error parsing completedIndexes: ${completed}`));
    if (completedText !== '' && !isIndexed(spec)) causes.push(invalid('status.completedIndexes', completedText, 'cannot set non-empty completedIndexes when non-indexed completion mode'));
  }
  if (changed('failedIndexes')) {
    if (spec.backoffLimitPerIndex !== undefined && typeof failedIdx === 'string') causes.push(invalid('status.failedIndexes', failedText, `error parsing failedIndexes: ${failedIdx}`));
    if (spec.backoffLimitPerIndex === undefined && failedText !== undefined) causes.push(invalid('status.failedIndexes', failedText, 'cannot set non-null failedIndexes when backoffLimitPerIndex is null'));
  }
  if ((changed('completedIndexes') || changed('failedIndexes')) && completed && failedIdx && typeof completed !== 'string' && typeof failedIdx !== 'string') {
    const at = overlapOf(completed, failedIdx);
    if (at !== undefined) causes.push(invalid('status.failedIndexes', failedText, `failedIndexes and completedIndexes overlap at index: ${at}`));
  }
  return causes;
}

/** The success policy's condition; document 3 spells it SucceededCriteriaMet, the platform's controller SuccessCriteriaMet. */
const successCriteriaMet = (status: Obj) => conditionTrue(status, 'SuccessCriteriaMet') || conditionTrue(status, 'SucceededCriteriaMet');

/** The success criteria condition excludes failure, is kept once set, and precedes Complete when a success policy decides. */
function successCriteriaCauses(spec: Obj, status: Obj, before: Obj): Causes {
  const met = successCriteriaMet(status);
  const conflict = (detail: string) => invalidField('status.conditions', detail);
  const causes: Causes = [];
  if (met && conditionTrue(status, 'Failed')) causes.push(conflict('cannot set SuccessCriteriaMet=True and Failed=true conditions'));
  if (met && conditionTrue(status, 'FailureTarget')) causes.push(conflict('cannot set SuccessCriteriaMet=True and FailureTarget=true conditions'));
  if (spec.successPolicy !== undefined && !met && conditionTrue(status, 'Complete')) {
    causes.push(conflict('cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True'));
  }
  if (successCriteriaMet(before) && !met) causes.push(conflict('cannot disable the SuccessCriteriaMet=True condition'));
  if (conditionTrue(before, 'Complete') && !successCriteriaMet(before) && met) {
    causes.push(conflict('cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions'));
  }
  return causes;
}

function validateJobStatus(obj: ApiObject, old: ApiObject): Causes {
  const spec = specOf(obj);
  const status = statusOf(obj);
  const before = statusOf(old);
  const causes: Causes = [];
  for (const f of ['active', 'succeeded', 'failed', 'ready', 'terminating']) causes.push(...nonNegative(`status.${f}`, status[f]));
  causes.push(...uncountedCauses(status));
  for (const type of ['Failed', 'Complete', 'FailureTarget']) {
    if (conditionTrue(before, type) && !conditionTrue(status, type)) causes.push(invalidField('status.conditions', `cannot disable the terminal ${type}=True condition`));
  }
  if (((status.failed as number) ?? 0) < ((before.failed as number) ?? 0)) causes.push(invalid('status.failed', status.failed ?? 0, 'cannot decrease the failed counter'));
  const elastic = isIndexed(spec) && spec.completions === spec.parallelism;
  if (!elastic && ((status.succeeded as number) ?? 0) < ((before.succeeded as number) ?? 0)) causes.push(invalid('status.succeeded', status.succeeded ?? 0, 'cannot decrease the succeeded counter'));
  if (status.completionTime !== undefined && before.completionTime !== undefined && status.completionTime !== before.completionTime) {
    causes.push(invalid('status.completionTime', status.completionTime, 'completionTime cannot be mutated'));
  }
  if (before.startTime !== undefined && status.startTime !== before.startTime && spec.suspend !== true) {
    causes.push(required('status.startTime', 'startTime cannot be removed for unsuspended job'));
  }
  return [...causes, ...successCriteriaCauses(spec, status, before), ...transitionCauses(spec, status, before)];
}

// ---- table ----

function jobStatusText(o: ApiObject): string {
  const status = statusOf(o);
  if (conditionTrue(status, 'Complete')) return 'Complete';
  if (conditionTrue(status, 'Failed')) return 'Failed';
  if (o.metadata?.deletionTimestamp) return 'Terminating';
  for (const type of ['Suspended', 'FailureTarget']) if (conditionTrue(status, type)) return type;
  if (successCriteriaMet(status)) return 'SuccessCriteriaMet';
  return 'Running';
}

function completionsText(o: ApiObject): string {
  const spec = specOf(o);
  const succeeded = count(statusOf(o).succeeded);
  if (typeof spec.completions === 'number') return `${succeeded}/${spec.completions}`;
  const parallelism = count(spec.parallelism);
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

function durationText(o: ApiObject): string {
  const status = statusOf(o);
  if (typeof status.startTime !== 'string') return '';
  const end = typeof status.completionTime === 'string' ? Date.parse(status.completionTime) : Date.now();
  return humanAge(status.startTime, end);
}

const jobs: KindSpec = {
  categories: ['all'],
  selectableFields: { 'status.successful': (o) => String(count(statusOf(o).succeeded)) },
  defaults: defaultJob,
  create: generateSelector,
  validate: validateJob,
  validateStatus: validateJobStatus,
  tableColumns: [nameColumn,
    column('Status', 'string', 'Status of the job.', jobStatusText),
    column('Completions', 'string', 'The completion status of the job.', completionsText),
    column('Duration', 'string', 'Time required to complete the job.', durationText),
    ageColumn, ...templateColumns()],
};

// ---- CronJob ----

const MAX_CRONJOB_NAME = 52;

function validateJobTemplate(template: unknown): Causes {
  const t = asObj(template);
  if (!t) return [required('spec.jobTemplate')];
  const spec = asObj(t.spec) ?? {};
  const prefix = 'spec.jobTemplate.';
  const causes: Causes = validateJobSpecBody(spec).map((c) => ({ ...c, field: `${prefix}${c.field}` }));
  if (spec.selector !== undefined) causes.push(invalid(`${prefix}spec.selector`, spec.selector, '`selector` will be auto-generated'));
  if (spec.manualSelector === true) causes.push(notSupported(`${prefix}spec.manualSelector`, true, ['nil', 'false']));
  return causes;
}

function validateCronJob(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const name = obj.metadata?.name ?? '';
  const causes: Causes = name.length > MAX_CRONJOB_NAME ? [invalid('metadata.name', name, `must be no more than ${MAX_CRONJOB_NAME} characters`)] : [];
  if (typeof spec.schedule !== 'string' || spec.schedule === '') causes.push(required('spec.schedule'));
  else causes.push(...validateCronSchedule('spec.schedule', spec.schedule, spec.timeZone));
  if (typeof spec.timeZone === 'string') causes.push(...validateTimeZone('spec.timeZone', spec.timeZone));
  causes.push(...nonNegative('spec.startingDeadlineSeconds', spec.startingDeadlineSeconds));
  causes.push(...oneOf('spec.concurrencyPolicy', spec.concurrencyPolicy, ['Allow', 'Forbid', 'Replace'], true));
  causes.push(...nonNegative('spec.successfulJobsHistoryLimit', spec.successfulJobsHistoryLimit));
  causes.push(...nonNegative('spec.failedJobsHistoryLimit', spec.failedJobsHistoryLimit));
  return [...causes, ...validateJobTemplate(spec.jobTemplate)];
}

const cronjobs: KindSpec = {
  shortNames: ['cj'], categories: ['all'],
  defaults(obj) {
    const spec = asObj(obj.spec);
    if (!spec) return;
    setDefault(spec, 'concurrencyPolicy', 'Allow');
    setDefault(spec, 'suspend', false);
    setDefault(spec, 'successfulJobsHistoryLimit', 3);
    setDefault(spec, 'failedJobsHistoryLimit', 1);
    defaultTemplate(asObj(asObj(spec.jobTemplate)?.spec)?.template);
  },
  validate: validateCronJob,
  tableColumns: [nameColumn,
    column('Schedule', 'string', 'The schedule in Cron format.', (o) => specOf(o).schedule ?? ''),
    column('Timezone', 'string', 'The time zone of the schedule.', (o) => specOf(o).timeZone ?? '<none>'),
    column('Suspend', 'boolean', 'Whether scheduling is suspended.', (o) => specOf(o).suspend === true),
    column('Active', 'integer', 'The number of running jobs.', (o) => asList(statusOf(o).active).length),
    column('Last Schedule', 'string', 'When the job was last scheduled.', (o) => (typeof statusOf(o).lastScheduleTime === 'string' ? humanAge(statusOf(o).lastScheduleTime as string) : '<none>')),
    ageColumn,
    ...templateColumns('spec.jobTemplate.spec.selector', selectorText, 'spec.jobTemplate.spec.template.spec')],
};

export const batchKinds: Record<string, KindSpec> = { jobs, cronjobs };
