// Job (batch/v1): every rule of document 3, a valid and an invalid object each,
// defaults, the generated selector, immutable fields and the status split.
import { expect } from 'chai';
import type { ApiObject } from '../../internal/apimachinery/meta.js';
import type { StatusCause } from '../../internal/apimachinery/status.js';
import { labelKey } from '../../internal/names/index.js';
import { builtinRegistry, type KindDef } from '../../internal/registry/index.js';

const jobs = builtinRegistry().lookup('batch', 'v1', 'jobs')!;

/** A Job as the gateway hands it over on create: uid and namespace set. */
function job(spec: Record<string, unknown> = {}, podSpec: Record<string, unknown> = {}): ApiObject {
  return {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'pi', namespace: 'default', uid: '6f1b7a52-93c1-4f0e-9c53-3f4a1d2b7c10' },
    spec: { template: { spec: { containers: [{ name: 'pi', image: 'perl:5.34' }], restartPolicy: 'Never', ...podSpec } }, ...spec },
  };
}

function create(def: KindDef, obj: ApiObject): { obj: ApiObject; causes: StatusCause[] } {
  const o = structuredClone(obj);
  def.prepareForCreate!(o);
  return { obj: o, causes: def.validate!(o) };
}

function update(def: KindDef, old: ApiObject, change: (o: ApiObject) => void): { obj: ApiObject; causes: StatusCause[] } {
  const next = structuredClone(old);
  change(next);
  def.prepareForUpdate!(next, old);
  return { obj: next, causes: def.validate!(next, old) };
}

function updateStatus(def: KindDef, old: ApiObject, status: Record<string, unknown>): { obj: ApiObject; causes: StatusCause[] } {
  const next = { ...structuredClone(old), status };
  def.prepareForStatusUpdate!(next, old);
  return { obj: next, causes: def.validateStatusUpdate!(next, old) };
}

const created = (spec: Record<string, unknown> = {}, podSpec: Record<string, unknown> = {}) => {
  const res = create(jobs, job(spec, podSpec));
  expect(res.causes, JSON.stringify(res.causes)).to.deep.equal([]);
  return res.obj;
};

/** Expects exactly the causes on these fields (each with its reason). */
function expectCauses(causes: StatusCause[], expected: Array<[string, string]>): void {
  expect(causes.map((c) => [c.field, c.reason]), JSON.stringify(causes)).to.deep.equal(expected);
}

const spec = (o: ApiObject) => o.spec as any;

describe('registry: Job', () => {
  describe('defaults and the generated selector', () => {
    it('defaults completions and parallelism to 1, backoffLimit to 6, NonIndexed, not suspended, TerminatingOrFailed', () => {
      const s = spec(created());
      expect(s).to.include({ completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, podReplacementPolicy: 'TerminatingOrFailed' });
      expect(created().metadata!.generation).to.equal(1);
      expect(created().status).to.deep.equal({});
    });

    it('leaves completions unset when only parallelism is given; keeps an explicit backoffLimit', () => {
      const s = spec(created({ parallelism: 3, backoffLimit: 2 }));
      expect(s).to.include({ parallelism: 3, backoffLimit: 2 });
      expect(s).to.not.have.property('completions');
    });

    it('defaults backoffLimit to the int32 maximum with backoffLimitPerIndex, and podReplacementPolicy to Failed with a podFailurePolicy', () => {
      const s = spec(created({ completionMode: 'Indexed', completions: 3, backoffLimitPerIndex: 1 }));
      expect(s.backoffLimit).to.equal(2147483647);
      const p = spec(created({ podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] } }));
      expect(p.podReplacementPolicy).to.equal('Failed');
      expect(p.podFailurePolicy.rules[0].onPodConditions[0].status).to.equal('True');
    });

    it('applies pod defaults to the template and copies template labels to the job', () => {
      const o = created({}, {});
      const c = spec(o).template.spec.containers[0];
      expect(c).to.include({ imagePullPolicy: 'IfNotPresent', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' });
      expect(spec(o).template.spec).to.include({ dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler', terminationGracePeriodSeconds: 30 });
      const labelled = job();
      (labelled.spec as any).template.metadata = { labels: { app: 'pi' } };
      expect(create(jobs, labelled).obj.metadata!.labels).to.deep.equal({ app: 'pi' });
    });

    it('adds job-name and controller-uid labels (legacy and prefixed) to the template and selects by controller-uid', () => {
      const o = created();
      const labels = spec(o).template.metadata.labels;
      const uid = o.metadata!.uid;
      expect(labels).to.include({ 'job-name': 'pi', 'controller-uid': uid, [labelKey('job-name', 'batch')]: 'pi', [labelKey('controller-uid', 'batch')]: uid });
      expect(spec(o).selector).to.deep.equal({ matchLabels: { [labelKey('controller-uid', 'batch')]: uid } });
    });

    it('labels the template in upstream spelling too, and accepts a generated selector written that way', () => {
      const o = created();
      const uid = o.metadata!.uid;
      expect(spec(o).template.metadata.labels).to.include({ 'batch.kubernetes.io/job-name': 'pi', 'batch.kubernetes.io/controller-uid': uid });
      const upstream = job({ selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } } });
      const made = create(jobs, upstream);
      expect(made.causes).to.deep.equal([]);
      const wrong = job();
      (wrong.spec as any).template.metadata = { labels: { 'batch.kubernetes.io/job-name': 'other' } };
      expectCauses(create(jobs, wrong).causes, [['spec.template.metadata.labels[batch.kubernetes.io/job-name]', 'FieldValueInvalid']]);
    });

    it('refuses a user selector without manualSelector, and a conflicting generated label', () => {
      expectCauses(create(jobs, job({ selector: { matchLabels: { app: 'pi' } } })).causes, [
        ['spec.selector', 'FieldValueInvalid'], ['spec.template.metadata.labels', 'FieldValueInvalid'],
      ]);
      const conflicting = job();
      (conflicting.spec as any).template.metadata = { labels: { 'controller-uid': 'someone-else' } };
      expectCauses(create(jobs, conflicting).causes, [['spec.template.metadata.labels[controller-uid]', 'FieldValueInvalid']]);
    });

    it('with manualSelector the user picks the selector, which is required and must match the template', () => {
      const manual = job({ manualSelector: true, selector: { matchLabels: { app: 'pi' } } });
      (manual.spec as any).template.metadata = { labels: { app: 'pi' } };
      const ok = create(jobs, manual);
      expect(ok.causes).to.deep.equal([]);
      expect(spec(ok.obj).template.metadata.labels).to.deep.equal({ app: 'pi' });
      expectCauses(create(jobs, job({ manualSelector: true })).causes, [['spec.selector', 'FieldValueRequired']]);
      const mismatch = structuredClone(manual);
      (mismatch.spec as any).template.metadata.labels = { app: 'other' };
      expectCauses(create(jobs, mismatch).causes, [['spec.template.metadata.labels', 'FieldValueInvalid']]);
    });
  });

  describe('JobSpec rules', () => {
    it('template.spec.restartPolicy only Never or OnFailure', () => {
      created({}, { restartPolicy: 'OnFailure' });
      expectCauses(create(jobs, job({}, { restartPolicy: 'Always' })).causes, [['spec.template.spec.restartPolicy', 'FieldValueRequired']]);
      const unset = job();
      delete (unset.spec as any).template.spec.restartPolicy;
      expectCauses(create(jobs, unset).causes, [['spec.template.spec.restartPolicy', 'FieldValueRequired']]);
      expectCauses(create(jobs, job({}, { restartPolicy: 'Sometimes' })).causes, [
        ['spec.template.spec.restartPolicy', 'FieldValueNotSupported'], ['spec.template.spec.restartPolicy', 'FieldValueNotSupported'],
      ]);
    });

    it('the template is required', () => {
      const o = job();
      delete (o.spec as any).template;
      const causes = create(jobs, o).causes;
      expect(causes.map((c) => c.field)).to.include('spec.template');
      expect(causes.every((c) => c.reason !== 'FieldValueTypeInvalid')).to.equal(true);
    });

    it('parallelism, completions, backoffLimit, ttlSecondsAfterFinished non-negative; activeDeadlineSeconds positive', () => {
      created({ parallelism: 0, completions: 0, backoffLimit: 0, ttlSecondsAfterFinished: 0, activeDeadlineSeconds: 1 });
      expectCauses(create(jobs, job({ parallelism: -1, completions: -1, backoffLimit: -1, ttlSecondsAfterFinished: -1, activeDeadlineSeconds: 0 })).causes, [
        ['spec.parallelism', 'FieldValueInvalid'], ['spec.completions', 'FieldValueInvalid'], ['spec.backoffLimit', 'FieldValueInvalid'],
        ['spec.ttlSecondsAfterFinished', 'FieldValueInvalid'], ['spec.activeDeadlineSeconds', 'FieldValueInvalid'],
      ]);
    });

    it('completionMode NonIndexed or Indexed', () => {
      created({ completionMode: 'Indexed', completions: 5, parallelism: 2 });
      expectCauses(create(jobs, job({ completionMode: 'Sparse' })).causes, [['spec.completionMode', 'FieldValueNotSupported']]);
    });

    it('Indexed requires completions and at most 10^5 parallelism', () => {
      created({ completionMode: 'Indexed', completions: 200000, parallelism: 100000 });
      expectCauses(create(jobs, job({ completionMode: 'Indexed', parallelism: 2 })).causes, [['spec.completions', 'FieldValueRequired']]);
      expectCauses(create(jobs, job({ completionMode: 'Indexed', completions: 200000, parallelism: 100001 })).causes, [['spec.parallelism', 'FieldValueInvalid']]);
    });

    it('backoffLimitPerIndex only for Indexed jobs whose pods restart Never', () => {
      created({ completionMode: 'Indexed', completions: 4, backoffLimitPerIndex: 1 });
      expectCauses(create(jobs, job({ backoffLimitPerIndex: 1 })).causes, [['spec.backoffLimitPerIndex', 'FieldValueForbidden']]);
      expectCauses(create(jobs, job({ completionMode: 'Indexed', completions: 4, backoffLimitPerIndex: 1 }, { restartPolicy: 'OnFailure' })).causes,
        [['spec.backoffLimitPerIndex', 'FieldValueForbidden']]);
    });

    it('maxFailedIndexes: only with backoffLimitPerIndex, at most completions; required and at most 10^4 above 10^5 completions', () => {
      const indexed = { completionMode: 'Indexed', backoffLimitPerIndex: 1 };
      created({ ...indexed, completions: 10, maxFailedIndexes: 10 });
      created({ ...indexed, completions: 200000, parallelism: 10000, maxFailedIndexes: 10000 });
      expectCauses(create(jobs, job({ completionMode: 'Indexed', completions: 10, maxFailedIndexes: 1 })).causes, [['spec.backoffLimitPerIndex', 'FieldValueRequired']]);
      expectCauses(create(jobs, job({ ...indexed, completions: 10, maxFailedIndexes: 11 })).causes, [['spec.maxFailedIndexes', 'FieldValueInvalid']]);
      expectCauses(create(jobs, job({ ...indexed, completions: 200000, parallelism: 10 })).causes, [['spec.maxFailedIndexes', 'FieldValueRequired']]);
      expectCauses(create(jobs, job({ ...indexed, completions: 200000, parallelism: 10, maxFailedIndexes: 10001 })).causes, [['spec.maxFailedIndexes', 'FieldValueInvalid']]);
    });

    it('podReplacementPolicy TerminatingOrFailed or Failed; only Failed with a podFailurePolicy', () => {
      created({ podReplacementPolicy: 'Failed' });
      expectCauses(create(jobs, job({ podReplacementPolicy: 'Sometimes' })).causes, [['spec.podReplacementPolicy', 'FieldValueNotSupported']]);
      const policy = { rules: [{ action: 'FailJob', onExitCodes: { operator: 'In', values: [1] } }] };
      expectCauses(create(jobs, job({ podFailurePolicy: policy, podReplacementPolicy: 'TerminatingOrFailed' })).causes, [['spec.podReplacementPolicy', 'FieldValueNotSupported']]);
    });

    it('managedBy: a domain-prefixed path of at most 63 characters', () => {
      created({ managedBy: 'example.com/custom-controller' });
      created({ managedBy: labelKey('job-controller') });
      expectCauses(create(jobs, job({ managedBy: `example.com/${'a'.repeat(60)}` })).causes, [['spec.managedBy', 'FieldValueTooLong']]);
      expectCauses(create(jobs, job({ managedBy: 'no-domain' })).causes, [['spec.managedBy', 'FieldValueInvalid']]);
    });
  });

  describe('podFailurePolicy', () => {
    const rule = (r: Record<string, unknown>) => ({ podFailurePolicy: { rules: [r] } });
    const exitCodes = (onExitCodes: Record<string, unknown>) => rule({ action: 'FailJob', onExitCodes });
    const causesOf = (s: Record<string, unknown>, podSpec: Record<string, unknown> = {}) => create(jobs, job(s, podSpec)).causes;

    it('is not allowed with restartPolicy OnFailure', () => {
      created(exitCodes({ operator: 'In', values: [42] }));
      expectCauses(causesOf(exitCodes({ operator: 'In', values: [42] }), { restartPolicy: 'OnFailure' }), [['spec.template.spec.restartPolicy', 'FieldValueInvalid']]);
    });

    it('at most 20 rules', () => {
      const rules = (n: number) => ({ podFailurePolicy: { rules: Array.from({ length: n }, () => ({ action: 'Ignore', onExitCodes: { operator: 'In', values: [1] } })) } });
      created(rules(20));
      expectCauses(causesOf(rules(21)), [['spec.podFailurePolicy.rules', 'FieldValueTooMany']]);
    });

    it('action FailJob, FailIndex (needs backoffLimitPerIndex), Ignore or Count; required', () => {
      for (const action of ['FailJob', 'Ignore', 'Count']) created(rule({ action, onExitCodes: { operator: 'In', values: [1] } }));
      created({ completionMode: 'Indexed', completions: 2, backoffLimitPerIndex: 1, ...rule({ action: 'FailIndex', onExitCodes: { operator: 'In', values: [1] } }) });
      expectCauses(causesOf(rule({ action: 'FailIndex', onExitCodes: { operator: 'In', values: [1] } })), [['spec.podFailurePolicy.rules[0].action', 'FieldValueInvalid']]);
      expectCauses(causesOf(rule({ action: 'Retry', onExitCodes: { operator: 'In', values: [1] } })), [['spec.podFailurePolicy.rules[0].action', 'FieldValueNotSupported']]);
      expectCauses(causesOf(rule({ onExitCodes: { operator: 'In', values: [1] } })), [['spec.podFailurePolicy.rules[0].action', 'FieldValueRequired']]);
    });

    it('exactly one of onExitCodes and onPodConditions', () => {
      expectCauses(causesOf(rule({ action: 'Ignore', onExitCodes: { operator: 'In', values: [1] }, onPodConditions: [{ type: 'DisruptionTarget' }] })),
        [['spec.podFailurePolicy.rules[0]', 'FieldValueInvalid']]);
      expectCauses(causesOf(rule({ action: 'Ignore' })), [['spec.podFailurePolicy.rules[0]', 'FieldValueInvalid']]);
    });

    it('onExitCodes.operator In or NotIn, required', () => {
      created(exitCodes({ operator: 'NotIn', values: [0, 1] }));
      expectCauses(causesOf(exitCodes({ operator: 'Between', values: [1] })), [['spec.podFailurePolicy.rules[0].onExitCodes.operator', 'FieldValueNotSupported']]);
      expectCauses(causesOf(exitCodes({ values: [1] })), [['spec.podFailurePolicy.rules[0].onExitCodes.operator', 'FieldValueRequired']]);
    });

    it('onExitCodes.values: 1 to 255 entries, sorted, unique, no 0 with In', () => {
      created(exitCodes({ operator: 'In', values: Array.from({ length: 255 }, (_, i) => i + 1) }));
      const at = 'spec.podFailurePolicy.rules[0].onExitCodes.values';
      expectCauses(causesOf(exitCodes({ operator: 'In', values: [] })), [[at, 'FieldValueInvalid']]);
      expectCauses(causesOf(exitCodes({ operator: 'In', values: Array.from({ length: 256 }, (_, i) => i + 1) })), [[at, 'FieldValueTooMany']]);
      expectCauses(causesOf(exitCodes({ operator: 'In', values: [2, 1] })), [[at, 'FieldValueInvalid']]);
      expectCauses(causesOf(exitCodes({ operator: 'In', values: [1, 1] })), [[`${at}[1]`, 'FieldValueDuplicate']]);
      expectCauses(causesOf(exitCodes({ operator: 'In', values: [0, 1] })), [[`${at}[0]`, 'FieldValueInvalid']]);
    });

    it('onExitCodes.containerName names a container or init container of the template', () => {
      created(exitCodes({ operator: 'In', values: [1], containerName: 'pi' }));
      expectCauses(causesOf(exitCodes({ operator: 'In', values: [1], containerName: 'sidecar' })), [['spec.podFailurePolicy.rules[0].onExitCodes.containerName', 'FieldValueInvalid']]);
    });

    it('onPodConditions: at most 20 patterns, type required, status True, False or Unknown (default True)', () => {
      const conditions = (patterns: unknown[]) => rule({ action: 'Ignore', onPodConditions: patterns });
      created(conditions(Array.from({ length: 20 }, () => ({ type: 'DisruptionTarget', status: 'False' }))));
      const at = 'spec.podFailurePolicy.rules[0].onPodConditions';
      expectCauses(causesOf(conditions(Array.from({ length: 21 }, () => ({ type: 'DisruptionTarget' })))), [[at, 'FieldValueTooMany']]);
      expectCauses(causesOf(conditions([{ type: 'DisruptionTarget', status: 'Maybe' }])), [[`${at}[0].status`, 'FieldValueNotSupported']]);
      expectCauses(causesOf(conditions([{ status: 'True' }])), [[`${at}[0].type`, 'FieldValueRequired']]);
    });
  });

  describe('successPolicy', () => {
    const indexed = (rules: unknown[]) => ({ completionMode: 'Indexed', completions: 10, successPolicy: { rules } });
    const at = 'spec.successPolicy';

    it('only for Indexed jobs, with 1 to 20 rules', () => {
      created(indexed([{ succeededIndexes: '0-2,5', succeededCount: 2 }]));
      expectCauses(create(jobs, job({ successPolicy: { rules: [{ succeededCount: 1 }] } })).causes, [[at, 'FieldValueInvalid']]);
      expectCauses(create(jobs, job(indexed([]))).causes, [[`${at}.rules`, 'FieldValueRequired']]);
      expectCauses(create(jobs, job(indexed(Array.from({ length: 21 }, () => ({ succeededCount: 1 }))))).causes, [[`${at}.rules`, 'FieldValueTooMany']]);
    });

    it('succeededIndexes: ascending ranges within 0 to completions-1', () => {
      for (const bad of ['1,1', '3,1', '0-10', 'a', '2-1', '1-2-3']) {
        expectCauses(create(jobs, job(indexed([{ succeededIndexes: bad }]))).causes, [[`${at}.rules[0].succeededIndexes`, 'FieldValueInvalid']]);
      }
    });

    it('succeededCount: not negative, at most completions and the indexes named', () => {
      expectCauses(create(jobs, job(indexed([{ succeededCount: -1 }]))).causes, [[`${at}.rules[0].succeededCount`, 'FieldValueInvalid']]);
      expectCauses(create(jobs, job(indexed([{ succeededCount: 11 }]))).causes, [[`${at}.rules[0].succeededCount`, 'FieldValueInvalid']]);
      expectCauses(create(jobs, job(indexed([{ succeededIndexes: '1-2', succeededCount: 3 }]))).causes, [[`${at}.rules[0].succeededCount`, 'FieldValueInvalid']]);
    });

    it('each rule needs succeededIndexes or succeededCount', () => {
      expectCauses(create(jobs, job(indexed([{}]))).causes, [[`${at}.rules[0]`, 'FieldValueRequired']]);
    });
  });

  describe('updates', () => {
    it('increments the generation on spec changes only, and keeps the status of spec writes', () => {
      const old = { ...created({ parallelism: 2, completions: 4 }), status: { active: 2 } };
      const same = update(jobs, old, (o) => { o.metadata!.labels = { touched: 'yes' }; });
      expect(same.causes).to.deep.equal([]);
      expect(same.obj.metadata!.generation).to.equal(1);
      const scaled = update(jobs, old, (o) => { spec(o).parallelism = 3; o.status = { active: 99 }; });
      expect(scaled.causes).to.deep.equal([]);
      expect(scaled.obj.metadata!.generation).to.equal(2);
      expect(scaled.obj.status).to.deep.equal({ active: 2 });
    });

    it('refuses changes of completions (NonIndexed), selector, template, completionMode, podFailurePolicy, backoffLimitPerIndex, managedBy, successPolicy', () => {
      const old = created({ completions: 4, managedBy: 'example.com/mine' });
      const cases: Array<[string, (o: ApiObject) => void]> = [
        ['spec.completions', (o) => { spec(o).completions = 5; }],
        ['spec.selector', (o) => { spec(o).selector.matchLabels.extra = 'x'; spec(o).template.metadata.labels.extra = 'x'; }],
        ['spec.template', (o) => { spec(o).template.spec.containers[0].image = 'perl:5.36'; }],
        ['spec.managedBy', (o) => { spec(o).managedBy = 'example.com/other'; }],
        ['spec.podFailurePolicy', (o) => { spec(o).podFailurePolicy = { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] }; spec(o).podReplacementPolicy = 'Failed'; }],
      ];
      for (const [field, change] of cases) {
        const causes = update(jobs, old, change).causes;
        const immutable = causes.filter((c) => c.field === field && c.reason === 'FieldValueInvalid' && /: field is immutable$/.test(c.message ?? ''));
        expect(immutable, `${field}: ${JSON.stringify(causes)}`).to.have.length(1);
      }
      const indexed = created({ completionMode: 'Indexed', completions: 4, backoffLimitPerIndex: 1, successPolicy: { rules: [{ succeededCount: 2 }] } });
      expect(update(jobs, indexed, (o) => { spec(o).backoffLimitPerIndex = 2; }).causes.map((c) => c.field)).to.deep.equal(['spec.backoffLimitPerIndex']);
      expect(update(jobs, indexed, (o) => { spec(o).successPolicy = { rules: [{ succeededCount: 3 }] }; }).causes.map((c) => c.field)).to.deep.equal(['spec.successPolicy']);
      expect(update(jobs, indexed, (o) => { spec(o).completionMode = 'NonIndexed'; delete spec(o).successPolicy; delete spec(o).backoffLimitPerIndex; }).causes.map((c) => c.field))
        .to.include.members(['spec.completionMode']);
    });

    it('lets an Indexed job change completions together with parallelism', () => {
      const old = created({ completionMode: 'Indexed', completions: 4, parallelism: 4 });
      expect(update(jobs, old, (o) => { spec(o).completions = 6; spec(o).parallelism = 6; }).causes).to.deep.equal([]);
      expectCauses(update(jobs, old, (o) => { spec(o).completions = 6; }).causes, [['spec.completions', 'FieldValueInvalid']]);
    });

    it('lets a suspended job that never started change its scheduling directives', () => {
      const old = created({ suspend: true });
      const moved = update(jobs, old, (o) => { spec(o).template.spec.nodeSelector = { zone: 'a' }; spec(o).template.metadata.labels.extra = 'x'; });
      expect(moved.causes).to.deep.equal([]);
      const running = { ...created(), status: { startTime: '2025-01-01T00:00:00Z' } };
      expectCauses(update(jobs, running, (o) => { spec(o).template.spec.nodeSelector = { zone: 'a' }; }).causes, [['spec.template', 'FieldValueInvalid']]);
    });
  });

  describe('status writes', () => {
    const start = '2025-01-01T00:00:00Z';
    const later = '2025-01-01T00:05:00Z';
    const running = () => ({ ...created({ completionMode: 'Indexed', completions: 4, parallelism: 2, backoffLimitPerIndex: 1 }), status: { startTime: start, active: 2 } });
    const complete = { type: 'Complete', status: 'True' };
    const failed = { type: 'Failed', status: 'True' };
    const failureTarget = { type: 'FailureTarget', status: 'True' };

    it('change only the status; the spec of the request is ignored and the generation stays', () => {
      const old = running();
      const next = { ...structuredClone(old), spec: { ...spec(old), parallelism: 1 }, status: { startTime: start, active: 1, ready: 1 } };
      jobs.prepareForStatusUpdate!(next, old);
      expect(spec(next).parallelism).to.equal(2);
      expect(next.status).to.deep.equal({ startTime: start, active: 1, ready: 1 });
      expect(next.metadata!.generation).to.equal(1);
      expect(jobs.validateStatusUpdate!(next, old)).to.deep.equal([]);
    });

    it('completionTime not before startTime', () => {
      expect(updateStatus(jobs, running(), { startTime: start, completionTime: later, succeeded: 4, conditions: [complete], completedIndexes: '0-3' }).causes).to.deep.equal([]);
      expectCauses(updateStatus(jobs, running(), { startTime: later, completionTime: start, succeeded: 4, conditions: [complete], completedIndexes: '0-3' }).causes,
        [['status.startTime', 'FieldValueRequired'], ['status.completionTime', 'FieldValueInvalid']]);
    });

    it('Complete and Failed never both; Complete and FailureTarget never both', () => {
      expect(updateStatus(jobs, running(), { startTime: start, conditions: [failureTarget, failed] }).causes).to.deep.equal([]);
      expectCauses(updateStatus(jobs, running(), { startTime: start, completionTime: later, conditions: [complete, failed] }).causes, [['status.conditions', 'FieldValueInvalid']]);
      expectCauses(updateStatus(jobs, running(), { startTime: start, completionTime: later, conditions: [complete, failureTarget] }).causes, [['status.conditions', 'FieldValueInvalid']]);
    });

    it('SuccessCriteriaMet excludes failure, stays once set, comes before Complete under a success policy and never after it', () => {
      const met = { type: 'SuccessCriteriaMet', status: 'True' };
      const message = (causes: Array<{ message?: string }>) => causes.map((c) => c.message);
      expect(updateStatus(jobs, running(), { startTime: start, active: 2, conditions: [met] }).causes).to.deep.equal([]);
      expect(message(updateStatus(jobs, running(), { startTime: start, conditions: [met, failureTarget] }).causes))
        .to.deep.equal(['Invalid value: cannot set SuccessCriteriaMet=True and FailureTarget=true conditions']);
      expect(message(updateStatus(jobs, running(), { startTime: start, conditions: [failureTarget, failed, met] }).causes))
        .to.include('Invalid value: cannot set SuccessCriteriaMet=True and Failed=true conditions');
      const withMet = updateStatus(jobs, running(), { startTime: start, active: 2, conditions: [met] }).obj;
      expect(message(updateStatus(jobs, withMet, { startTime: start, active: 2, conditions: [] }).causes))
        .to.deep.equal(['Invalid value: cannot disable the SuccessCriteriaMet=True condition']);
      const done = updateStatus(jobs, running(), { startTime: start, completionTime: later, conditions: [complete] }).obj;
      expect(message(updateStatus(jobs, done, { startTime: start, completionTime: later, conditions: [complete, met] }).causes))
        .to.deep.equal(['Invalid value: cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions']);
      const policy = { ...running(), spec: { ...spec(running()), successPolicy: { rules: [{ succeededCount: 1 }] } } };
      expect(message(updateStatus(jobs, policy, { startTime: start, completionTime: later, conditions: [complete] }).causes))
        .to.deep.equal(['Invalid value: cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True']);
      expect(updateStatus(jobs, policy, { startTime: start, completionTime: later, conditions: [met, complete] }).causes).to.deep.equal([]);
    });

    it('terminal conditions are never removed', () => {
      const done = updateStatus(jobs, running(), { startTime: start, completionTime: later, conditions: [complete] }).obj;
      expectCauses(updateStatus(jobs, done, { startTime: start, completionTime: later, conditions: [{ type: 'Complete', status: 'False' }] }).causes,
        [['status.conditions', 'FieldValueInvalid'], ['status.completionTime', 'FieldValueInvalid']]);
    });

    it('completedIndexes and failedIndexes: ascending ranges below completions, disjoint', () => {
      expect(updateStatus(jobs, running(), { startTime: start, active: 1, completedIndexes: '0,2', failedIndexes: '1' }).causes).to.deep.equal([]);
      expectCauses(updateStatus(jobs, running(), { startTime: start, completedIndexes: '2,0' }).causes, [['status.completedIndexes', 'FieldValueInvalid']]);
      expectCauses(updateStatus(jobs, running(), { startTime: start, completedIndexes: '0-4' }).causes, [['status.completedIndexes', 'FieldValueInvalid']]);
      expectCauses(updateStatus(jobs, running(), { startTime: start, failedIndexes: '1,x' }).causes, [['status.failedIndexes', 'FieldValueInvalid']]);
      expectCauses(updateStatus(jobs, running(), { startTime: start, completedIndexes: '0-2', failedIndexes: '2-3' }).causes, [['status.failedIndexes', 'FieldValueInvalid']]);
    });

    it('counters are not negative and failed never decreases', () => {
      const old = { ...running(), status: { startTime: start, active: 1, failed: 2 } };
      expectCauses(updateStatus(jobs, old, { startTime: start, active: -1, failed: 1 }).causes, [['status.active', 'FieldValueInvalid'], ['status.failed', 'FieldValueInvalid']]);
    });

    it('uncountedTerminatedPods holds unique uids', () => {
      expectCauses(updateStatus(jobs, running(), { startTime: start, active: 2, uncountedTerminatedPods: { succeeded: ['a'], failed: ['a'] } }).causes,
        [['status.uncountedTerminatedPods.failed[0]', 'FieldValueDuplicate']]);
    });

    it('type errors in the status are causes', () => {
      expectCauses(updateStatus(jobs, running(), { startTime: 'yesterday', active: 'two' }).causes,
        [['status.startTime', 'FieldValueTypeInvalid'], ['status.active', 'FieldValueTypeInvalid']]);
    });
  });
});
