// apps/v1: Deployment, ReplicaSet, StatefulSet, DaemonSet, ControllerRevision.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, count, mapSelectorText, nameColumn, templateColumns } from '../columns.js';
import {
  dns1123Label, forbidden, intOrPercent, invalid, nonNegative, oneOf, scaledValue, unchanged, type Causes,
} from '../causes.js';
import type { KindSpec } from '../define.js';
import { workloadSelector } from '../selectors.js';
import { asObj, child, deepEqual, objects, setDefault, specOf, type Obj } from '../values.js';
import { defaultTemplate, validateServingTemplate } from './podspec.js';

const statusOf = (o: ApiObject | undefined): Obj => asObj(o?.status) ?? {};

/** The rules every workload with a selector and a pod template shares. */
function workloadCauses(obj: ApiObject, old: ApiObject | undefined, kind: string, selectorKind = kind): Causes {
  const spec = specOf(obj);
  return [
    ...nonNegative('spec.replicas', spec.replicas),
    ...nonNegative('spec.minReadySeconds', spec.minReadySeconds),
    ...nonNegative('spec.revisionHistoryLimit', spec.revisionHistoryLimit),
    ...workloadSelector('spec', spec, `empty selector is invalid for ${selectorKind.toLowerCase()}`),
    ...validateServingTemplate('spec.template', spec.template, kind, objects(spec.volumeClaimTemplates).map((c) => String(asObj(c.metadata)?.name))),
    ...(old ? unchanged('spec.selector', spec.selector, specOf(old).selector) : []),
  ];
}

/** maxUnavailable and maxSurge: int or percent, not both zero, maxUnavailable at most 100%. */
function rollingParams(field: string, rolling: Obj): Causes {
  const causes = [...intOrPercent(`${field}.maxUnavailable`, rolling.maxUnavailable), ...intOrPercent(`${field}.maxSurge`, rolling.maxSurge)];
  if (typeof rolling.maxUnavailable === 'string' && scaledValue(rolling.maxUnavailable, 100) > 100) {
    causes.push(invalid(`${field}.maxUnavailable`, rolling.maxUnavailable, 'must not be greater than 100%'));
  }
  if (scaledValue(rolling.maxSurge ?? 0, 100) === 0 && scaledValue(rolling.maxUnavailable ?? 0, 100) === 0) {
    causes.push(invalid(`${field}.maxUnavailable`, rolling.maxUnavailable ?? 0, 'may not be 0 when `maxSurge` is 0'));
  }
  return causes;
}

function strategyCauses(field: string, strategy: Obj, types: [string, string]): Causes {
  const [rollingType, otherType] = types;
  const causes = oneOf(`${field}.type`, strategy.type, [otherType, rollingType], true);
  const rolling = asObj(strategy.rollingUpdate);
  if (strategy.type === otherType && rolling) causes.push(forbidden(`${field}.rollingUpdate`, `may not be specified when strategy \`type\` is '${otherType}'`));
  return causes.concat(strategy.type === rollingType && rolling ? rollingParams(`${field}.rollingUpdate`, rolling) : []);
}

// ---- Deployment ----

function defaultDeployment(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  setDefault(spec, 'replicas', 1);
  const strategy = child(spec, 'strategy');
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const rolling = child(strategy, 'rollingUpdate');
    setDefault(rolling, 'maxUnavailable', '25%');
    setDefault(rolling, 'maxSurge', '25%');
  }
  setDefault(spec, 'revisionHistoryLimit', 10);
  setDefault(spec, 'progressDeadlineSeconds', 600);
  defaultTemplate(spec.template);
}

function validateDeployment(obj: ApiObject, old?: ApiObject): Causes {
  const spec = specOf(obj);
  const causes = [...workloadCauses(obj, old, 'Deployment'), ...strategyCauses('spec.strategy', asObj(spec.strategy) ?? {}, ['RollingUpdate', 'Recreate'])];
  const deadline = spec.progressDeadlineSeconds;
  if (typeof deadline === 'number') {
    causes.push(...nonNegative('spec.progressDeadlineSeconds', deadline));
    if (typeof spec.minReadySeconds === 'number' && deadline <= spec.minReadySeconds) {
      causes.push(invalid('spec.progressDeadlineSeconds', deadline, 'must be greater than minReadySeconds'));
    }
  }
  return causes;
}

const deployments: KindSpec = {
  shortNames: ['deploy'], categories: ['all'],
  defaults: defaultDeployment,
  validate: validateDeployment,
  tableColumns: [nameColumn,
    column('Ready', 'string', 'Number of the pod with ready state', (o) => `${count(statusOf(o).readyReplicas)}/${count(specOf(o).replicas)}`),
    column('Up-to-date', 'integer', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', (o) => count(statusOf(o).updatedReplicas)),
    column('Available', 'integer', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', (o) => count(statusOf(o).availableReplicas)),
    ageColumn, ...templateColumns()],
};

// ---- ReplicaSet ----

const replicasets: KindSpec = {
  shortNames: ['rs'], categories: ['all'],
  selectableFields: { 'status.replicas': (o) => String(count(statusOf(o).replicas)) },
  defaults(obj) {
    const spec = asObj(obj.spec);
    if (!spec) return;
    setDefault(spec, 'replicas', 1);
    defaultTemplate(spec.template);
  },
  validate: (obj, old) => workloadCauses(obj, old, 'ReplicaSet', 'Deployment'),
  tableColumns: [nameColumn,
    column('Desired', 'integer', 'Number of desired pods.', (o) => count(specOf(o).replicas)),
    column('Current', 'integer', 'Number of actually running pods.', (o) => count(statusOf(o).replicas)),
    column('Ready', 'integer', 'Number of ready pods.', (o) => count(statusOf(o).readyReplicas)),
    ageColumn, ...templateColumns()],
};

// ---- StatefulSet ----

const STATEFULSET_MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds', 'revisionHistoryLimit'];

function defaultStatefulSet(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  setDefault(spec, 'podManagementPolicy', 'OrderedReady');
  const strategy = child(spec, 'updateStrategy');
  if (strategy.type === undefined) {
    strategy.type = 'RollingUpdate';
    setDefault(strategy, 'rollingUpdate', {});
  }
  const rolling = asObj(strategy.rollingUpdate);
  if (strategy.type === 'RollingUpdate' && rolling) setDefault(rolling, 'partition', 0);
  const retention = child(spec, 'persistentVolumeClaimRetentionPolicy');
  setDefault(retention, 'whenDeleted', 'Retain');
  setDefault(retention, 'whenScaled', 'Retain');
  setDefault(spec, 'replicas', 1);
  setDefault(spec, 'revisionHistoryLimit', 10);
  for (const claim of objects(spec.volumeClaimTemplates)) {
    setDefault(child(claim, 'spec'), 'volumeMode', 'Filesystem');
    setDefault(child(claim, 'status'), 'phase', 'Pending');
  }
  defaultTemplate(spec.template);
}

function validateStatefulSet(obj: ApiObject, old?: ApiObject): Causes {
  const spec = specOf(obj);
  const causes = workloadCauses(obj, old, 'StatefulSet');
  causes.push(...oneOf('spec.podManagementPolicy', spec.podManagementPolicy, ['OrderedReady', 'Parallel'], true));
  const strategy = asObj(spec.updateStrategy) ?? {};
  causes.push(...oneOf('spec.updateStrategy.type', strategy.type, ['OnDelete', 'RollingUpdate'], true));
  if (strategy.type === 'OnDelete' && strategy.rollingUpdate !== undefined) {
    causes.push(invalid('spec.updateStrategy.rollingUpdate', strategy.rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'"));
  }
  causes.push(...nonNegative('spec.updateStrategy.rollingUpdate.partition', asObj(strategy.rollingUpdate)?.partition));
  causes.push(...nonNegative('spec.ordinals.start', asObj(spec.ordinals)?.start));
  if (typeof spec.serviceName === 'string' && spec.serviceName) causes.push(...dns1123Label('spec.serviceName', spec.serviceName));
  const retention = asObj(spec.persistentVolumeClaimRetentionPolicy) ?? {};
  for (const f of ['whenDeleted', 'whenScaled']) causes.push(...oneOf(`spec.persistentVolumeClaimRetentionPolicy.${f}`, retention[f], ['Retain', 'Delete']));
  if (old) {
    const fixed = (s: Obj) => Object.fromEntries(Object.entries(s).filter(([k]) => !STATEFULSET_MUTABLE.includes(k)));
    if (!deepEqual(fixed(spec), fixed(specOf(old)))) {
      causes.push(forbidden('spec', "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"));
    }
  }
  return causes;
}

const statefulsets: KindSpec = {
  shortNames: ['sts'], categories: ['all'],
  defaults: defaultStatefulSet,
  validate: validateStatefulSet,
  tableColumns: [nameColumn,
    column('Ready', 'string', 'Number of the pod with ready state', (o) => `${count(statusOf(o).readyReplicas)}/${count(specOf(o).replicas)}`),
    ageColumn, ...templateColumns().slice(0, 2)],
};

// ---- DaemonSet ----

function defaultDaemonSet(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  const strategy = child(spec, 'updateStrategy');
  setDefault(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const rolling = child(strategy, 'rollingUpdate');
    setDefault(rolling, 'maxUnavailable', 1);
    setDefault(rolling, 'maxSurge', 0);
  }
  setDefault(spec, 'revisionHistoryLimit', 10);
  defaultTemplate(spec.template);
}

const daemonsets: KindSpec = {
  shortNames: ['ds'], categories: ['all'],
  defaults: defaultDaemonSet,
  validate: (obj, old) => [
    ...workloadCauses(obj, old, 'DaemonSet'),
    ...strategyCauses('spec.updateStrategy', asObj(specOf(obj).updateStrategy) ?? {}, ['RollingUpdate', 'OnDelete']),
  ],
  tableColumns: [nameColumn,
    column('Desired', 'integer', 'The total number of nodes that should be running the daemon pod.', (o) => count(statusOf(o).desiredNumberScheduled)),
    column('Current', 'integer', 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.', (o) => count(statusOf(o).currentNumberScheduled)),
    column('Ready', 'integer', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.', (o) => count(statusOf(o).numberReady)),
    column('Up-to-date', 'integer', 'The total number of nodes that are running updated daemon pod', (o) => count(statusOf(o).updatedNumberScheduled)),
    column('Available', 'integer', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.', (o) => count(statusOf(o).numberAvailable)),
    column('Node Selector', 'string', 'NodeSelector is a selector which must be true for the pod to fit on a node.', (o) => mapSelectorText(asObj(asObj(specOf(o).template)?.spec)?.nodeSelector)),
    ageColumn, ...templateColumns()],
};

// ---- ControllerRevision ----

/** The controlling owner as kubectl names it: `daemonset.apps/fluentd`. */
function controllerOf(o: ApiObject): string {
  const owner = objects(o.metadata?.ownerReferences).find((r) => r.controller === true);
  if (!owner) return '<none>';
  const apiVersion = String(owner.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  return `${String(owner.kind).toLowerCase()}${group ? `.${group}` : ''}/${owner.name}`;
}

const controllerrevisions: KindSpec = {
  validate: (obj, old) => [...nonNegative('revision', obj.revision), ...(old ? unchanged('data', obj.data, old.data) : [])],
  tableColumns: [nameColumn,
    column('Controller', 'string', 'Controller of the object.', controllerOf),
    column('Revision', 'integer', 'Revision of the ControllerRevision.', (o) => count(o.revision)),
    ageColumn],
};

export const appsKinds: Record<string, KindSpec> = { deployments, replicasets, statefulsets, daemonsets, controllerrevisions };
