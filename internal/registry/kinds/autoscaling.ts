// autoscaling: HorizontalPodAutoscaler, stored as v2 and served as v2 and v1.
import type { ApiObject } from '../../apimachinery/meta.js';
import { hpaV2Annotation, type WellKnown } from '../../names/index.js';
import { ageColumn, column, count, nameColumn } from '../columns.js';
import { invalid, oneOf, required, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { asObj, child, clone, objects, setDefault, specOf, type Obj } from '../values.js';

const statusOf = (o: ApiObject | undefined): Obj => asObj(o?.status) ?? {};
const DEFAULT_CPU_UTILIZATION = 80;
const METRIC_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
const TARGET_TYPES = ['AverageValue', 'Utilization', 'Value'];
const SELECT_POLICIES = ['Disabled', 'Max', 'Min'];
const MAX_PERIOD_SECONDS = 1800;
const MAX_STABILIZATION_SECONDS = 3600;
/** Where a v1 object keeps what only v2 can say, so a round trip through v1 loses nothing. */
const V2_ANNOTATIONS = {
  metrics: hpaV2Annotation('metrics'),
  currentMetrics: hpaV2Annotation('current-metrics'),
  conditions: hpaV2Annotation('conditions'),
  behavior: hpaV2Annotation('behavior'),
};

const cpuUtilization = (target: number): Obj => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: target } } });

/** Scale-up and scale-down rules fill what they leave out. */
function defaultBehavior(behavior: Obj): void {
  const up = child(behavior, 'scaleUp');
  setDefault(up, 'stabilizationWindowSeconds', 0);
  setDefault(up, 'selectPolicy', 'Max');
  setDefault(up, 'policies', [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }]);
  const down = child(behavior, 'scaleDown');
  setDefault(down, 'selectPolicy', 'Max');
  setDefault(down, 'policies', [{ type: 'Percent', value: 100, periodSeconds: 15 }]);
}

function defaultHPA(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  setDefault(spec, 'minReplicas', 1);
  if (objects(spec.metrics).length === 0) spec.metrics = [cpuUtilization(DEFAULT_CPU_UTILIZATION)];
  const behavior = asObj(spec.behavior);
  if (behavior) defaultBehavior(behavior);
}

function replicaBounds(spec: Obj): Causes {
  const causes: Causes = [];
  const { minReplicas: min, maxReplicas: max } = spec as Record<string, number | undefined>;
  if (typeof min === 'number' && min < 1) causes.push(invalid('spec.minReplicas', min, 'must be greater than or equal to 1'));
  if (typeof max === 'number' && max < 1) causes.push(invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (typeof min === 'number' && typeof max === 'number' && max < min) causes.push(invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  const ref = asObj(spec.scaleTargetRef) ?? {};
  if (!ref.kind) causes.push(required('spec.scaleTargetRef.kind'));
  if (!ref.name) causes.push(required('spec.scaleTargetRef.name'));
  return causes;
}

function metricCauses(metrics: unknown): Causes {
  const sources: Record<string, string> = { ContainerResource: 'containerResource', External: 'external', Object: 'object', Pods: 'pods', Resource: 'resource' };
  return objects(metrics).flatMap((m, i) => {
    const at = `spec.metrics[${i}]`;
    const causes = oneOf(`${at}.type`, m.type, METRIC_TYPES, true);
    const source = asObj(m[sources[String(m.type)] ?? '']);
    if (sources[String(m.type)] && !source) causes.push(required(`${at}.${sources[String(m.type)]}`, `must populate information for the given metric source`));
    const target = asObj(source?.target);
    if (target) {
      causes.push(...oneOf(`${at}.${sources[String(m.type)]}.target.type`, target.type, TARGET_TYPES, true));
      if (typeof target.averageUtilization === 'number' && target.averageUtilization < 1) {
        causes.push(invalid(`${at}.${sources[String(m.type)]}.target.averageUtilization`, target.averageUtilization, 'must be greater than 0'));
      }
    }
    return causes;
  });
}

function behaviorCauses(behavior: unknown): Causes {
  const causes: Causes = [];
  for (const direction of ['scaleUp', 'scaleDown']) {
    const rules = asObj(asObj(behavior)?.[direction]);
    if (!rules) continue;
    const at = `spec.behavior.${direction}`;
    const window = rules.stabilizationWindowSeconds;
    if (typeof window === 'number' && (window < 0 || window > MAX_STABILIZATION_SECONDS)) {
      causes.push(invalid(`${at}.stabilizationWindowSeconds`, window, `must be less than or equal to ${MAX_STABILIZATION_SECONDS}`));
    }
    causes.push(...oneOf(`${at}.selectPolicy`, rules.selectPolicy, SELECT_POLICIES));
    objects(rules.policies).forEach((p, i) => {
      causes.push(...oneOf(`${at}.policies[${i}].type`, p.type, ['Pods', 'Percent'], true));
      if (!(typeof p.value === 'number' && p.value > 0)) causes.push(invalid(`${at}.policies[${i}].value`, p.value, 'must be greater than zero'));
      if (!(typeof p.periodSeconds === 'number' && p.periodSeconds > 0 && p.periodSeconds <= MAX_PERIOD_SECONDS)) {
        causes.push(invalid(`${at}.policies[${i}].periodSeconds`, p.periodSeconds, `must be greater than zero and less than or equal to ${MAX_PERIOD_SECONDS}`));
      }
    });
  }
  return causes;
}

function targetsText(o: ApiObject): string {
  const current = objects(statusOf(o).currentMetrics);
  const parts = objects(specOf(o).metrics).map((m, i) => {
    const source = asObj(m.resource) ?? asObj(m.containerResource) ?? asObj(m.pods) ?? asObj(m.object) ?? asObj(m.external) ?? {};
    const target = asObj(source.target) ?? {};
    const now = asObj((asObj(current[i]?.resource) ?? asObj(current[i]?.containerResource) ?? {}).current) ?? {};
    const name = m.type === 'Resource' || m.type === 'ContainerResource' ? `${source.name}: ` : '';
    if (target.type === 'Utilization') return `${name}${now.averageUtilization !== undefined ? `${now.averageUtilization}%` : '<unknown>'}/${target.averageUtilization}%`;
    return `${name}${now.averageValue ?? now.value ?? '<unknown>'}/${target.averageValue ?? target.value}`;
  });
  return parts.join(', ') || '<none>';
}

const hpaColumns = [nameColumn,
  column('Reference', 'string', 'The target the autoscaler scales.', (o) => { const r = asObj(specOf(o).scaleTargetRef) ?? {}; return `${r.kind}/${r.name}`; }),
  column('Targets', 'string', 'The current and target metric values.', (o) => (o.apiVersion === 'autoscaling/v1' ? v1Targets(o) : targetsText(o))),
  column('MinPods', 'string', 'The lower bound of replicas.', (o) => String(specOf(o).minReplicas ?? '<unset>')),
  column('MaxPods', 'integer', 'The upper bound of replicas.', (o) => count(specOf(o).maxReplicas)),
  column('Replicas', 'integer', 'The current number of replicas.', (o) => count(statusOf(o).currentReplicas)),
  ageColumn];

function v1Targets(o: ApiObject): string {
  const target = specOf(o).targetCPUUtilizationPercentage;
  const current = statusOf(o).currentCPUUtilizationPercentage;
  return target === undefined ? '<none>' : `cpu: ${current === undefined ? '<unknown>' : `${current}%`}/${target}%`;
}

const hpaV2: KindSpec = {
  shortNames: ['hpa'], categories: ['all'],
  defaults: defaultHPA,
  validate: (obj) => [...replicaBounds(specOf(obj)), ...metricCauses(specOf(obj).metrics), ...behaviorCauses(specOf(obj).behavior)],
  tableColumns: hpaColumns,
};

// ---- v1 as a view of v2 ----

const isCpuUtilization = (m: Obj) => m.type === 'Resource' && asObj(m.resource)?.name === 'cpu' && asObj(asObj(m.resource)?.target)?.type === 'Utilization';

/** Removes the annotation (both spellings; the product's wins) and answers its JSON value. */
function takeJson(annotations: Record<string, string>, key: WellKnown): unknown {
  const text = annotations[key.own] ?? annotations[key.upstream];
  delete annotations[key.own];
  delete annotations[key.upstream];
  if (text === undefined) return undefined;
  try { return JSON.parse(text); } catch { return undefined; }
}

function putJson(annotations: Record<string, string>, key: WellKnown, value: unknown): void {
  if (value !== undefined && !(Array.isArray(value) && value.length === 0)) annotations[key.own] = JSON.stringify(value);
}

/** A v1 object in the v2 form it is stored in. */
function hpaV1ToV2(obj: ApiObject): ApiObject {
  const out = clone(obj);
  const annotations = { ...out.metadata?.annotations };
  const spec = specOf(obj);
  const status = statusOf(obj);
  const extraMetrics = objects(takeJson(annotations, V2_ANNOTATIONS.metrics));
  const metrics = [...(typeof spec.targetCPUUtilizationPercentage === 'number' ? [cpuUtilization(spec.targetCPUUtilizationPercentage)] : []), ...extraMetrics];
  const behavior = takeJson(annotations, V2_ANNOTATIONS.behavior);
  out.spec = { scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas, ...(metrics.length ? { metrics } : {}), ...(behavior ? { behavior } : {}) };
  if (obj.status !== undefined) {
    const cpu = typeof status.currentCPUUtilizationPercentage === 'number'
      ? [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status.currentCPUUtilizationPercentage } } }] : [];
    const currentMetrics = [...cpu, ...objects(takeJson(annotations, V2_ANNOTATIONS.currentMetrics))];
    const conditions = takeJson(annotations, V2_ANNOTATIONS.conditions);
    out.status = {
      ...pickDefined(status, ['observedGeneration', 'lastScaleTime', 'currentReplicas', 'desiredReplicas']),
      ...(currentMetrics.length ? { currentMetrics } : {}), ...(conditions ? { conditions } : {}),
    };
  }
  out.apiVersion = 'autoscaling/v2';
  out.metadata = { ...out.metadata, annotations };
  if (Object.keys(annotations).length === 0) delete out.metadata.annotations;
  return out;
}

/** A stored v2 object as v1 shows it. */
function hpaV2ToV1(obj: ApiObject): ApiObject {
  const out = clone(obj);
  const annotations = { ...out.metadata?.annotations };
  const spec = specOf(obj);
  const status = statusOf(obj);
  const metrics = objects(spec.metrics);
  const cpu = metrics.find(isCpuUtilization);
  putJson(annotations, V2_ANNOTATIONS.metrics, metrics.filter((m) => m !== cpu));
  putJson(annotations, V2_ANNOTATIONS.behavior, spec.behavior);
  const target = asObj(asObj(cpu?.resource)?.target)?.averageUtilization;
  out.spec = { scaleTargetRef: spec.scaleTargetRef, minReplicas: spec.minReplicas, maxReplicas: spec.maxReplicas, ...(target !== undefined ? { targetCPUUtilizationPercentage: target } : {}) };
  if (obj.status !== undefined) {
    const current = objects(status.currentMetrics);
    const cpuNow = current.find((m) => m.type === 'Resource' && asObj(m.resource)?.name === 'cpu');
    putJson(annotations, V2_ANNOTATIONS.currentMetrics, current.filter((m) => m !== cpuNow));
    putJson(annotations, V2_ANNOTATIONS.conditions, status.conditions);
    const utilization = asObj(asObj(cpuNow?.resource)?.current)?.averageUtilization;
    out.status = {
      ...pickDefined(status, ['observedGeneration', 'lastScaleTime', 'desiredReplicas']), currentReplicas: status.currentReplicas ?? 0,
      ...(utilization !== undefined ? { currentCPUUtilizationPercentage: utilization } : {}),
    };
  }
  out.apiVersion = 'autoscaling/v1';
  if (Object.keys(annotations).length) out.metadata = { ...out.metadata, annotations };
  return out;
}

const pickDefined = (o: Obj, keys: string[]): Obj => Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));

const hpaV1: KindSpec = {
  shortNames: ['hpa'], categories: ['all'],
  storageVersion: 'v2', toStorage: hpaV1ToV2, fromStorage: hpaV2ToV1,
  defaults(obj) {
    const spec = asObj(obj.spec);
    if (spec) setDefault(spec, 'minReplicas', 1);
  },
  validate(obj) {
    const spec = specOf(obj);
    const target = spec.targetCPUUtilizationPercentage;
    const causes = replicaBounds(spec);
    if (typeof target === 'number' && target < 1) causes.push(invalid('spec.targetCPUUtilizationPercentage', target, 'must be greater than or equal to 1'));
    return causes;
  },
  tableColumns: hpaColumns,
};

export const autoscalingKinds: Record<string, KindSpec> = { horizontalpodautoscalers: hpaV2, 'v1/horizontalpodautoscalers': hpaV1 };
