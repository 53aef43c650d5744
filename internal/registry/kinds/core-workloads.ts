// Core workload kinds: pods, pod templates and replication controllers.
import type { ApiObject } from '../../apimachinery/meta.js';
import { ageColumn, column, count, mapSelectorText, nameColumn, pathOf, templateColumns } from '../columns.js';
import { invalid, labelMap, nonNegative, oneOf, required, type Causes } from '../causes.js';
import type { KindSpec } from '../define.js';
import { asList, asObj, child, objects, setDefault, str, specOf, type Obj } from '../values.js';
import {
  defaultPodSpec, defaultRequestsFromLimits, defaultTemplate, qosClass, validatePodSpec, validatePodSpecUpdate,
  validateServingTemplate, validateTemplate,
} from './podspec.js';

const statusOf = (o: ApiObject): Obj => asObj(o.status) ?? {};
const POD_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];

function containerStatuses(o: ApiObject): Obj[] {
  return objects(statusOf(o).containerStatuses);
}

/** The STATUS column: the pod's reason, a waiting or terminated container's reason, or the phase. */
function podStatusText(o: ApiObject): string {
  if (o.metadata?.deletionTimestamp) return 'Terminating';
  let reason = str(statusOf(o).reason) ?? str(statusOf(o).phase) ?? 'Unknown';
  for (const cs of containerStatuses(o)) {
    const state = asObj(cs.state) ?? {};
    const waiting = str(asObj(state.waiting)?.reason);
    const terminated = asObj(state.terminated);
    if (waiting) reason = waiting;
    else if (terminated) reason = str(terminated.reason) ?? (terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode}`);
  }
  return reason;
}

const podColumns = [
  nameColumn,
  column('Ready', 'string', 'The aggregate readiness state of this pod for accepting traffic.', (o) =>
    `${containerStatuses(o).filter((c) => c.ready === true).length}/${asList(specOf(o).containers).length}`),
  column('Status', 'string', 'The aggregate status of the containers in this pod.', podStatusText),
  column('Restarts', 'string', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    (o) => String(containerStatuses(o).reduce((n, c) => n + count(c.restartCount), 0))),
  ageColumn,
  column('IP', 'string', 'IP address allocated to the pod.', (o) => statusOf(o).podIP ?? '<none>', 1),
  column('Node', 'string', 'Name of the Node this pod is assigned to.', (o) => specOf(o).nodeName ?? '<none>', 1),
  column('Nominated Node', 'string', 'Name of the node nominated to run this pod.', (o) => statusOf(o).nominatedNodeName ?? '<none>', 1),
  column('Readiness Gates', 'string', 'The readiness gates of the pod.', (o) => (asList(specOf(o).readinessGates).length ? String(asList(specOf(o).readinessGates).length) : '<none>'), 1),
];

const setQosClass = (obj: ApiObject): void => { child(obj, 'status').qosClass = qosClass(specOf(obj)); };

const pods: KindSpec = {
  returnDeletedObject: true,
  shortNames: ['po'], categories: ['all'],
  selectableFields: {
    'spec.nodeName': (o) => str(specOf(o).nodeName) ?? '',
    'spec.restartPolicy': (o) => str(specOf(o).restartPolicy) ?? '',
    'spec.schedulerName': (o) => str(specOf(o).schedulerName) ?? '',
    'spec.serviceAccountName': (o) => str(specOf(o).serviceAccountName) ?? '',
    'spec.hostNetwork': (o) => String(specOf(o).hostNetwork === true),
    'status.phase': (o) => str(statusOf(o).phase) ?? '',
    'status.podIP': (o) => str(statusOf(o).podIP) ?? '',
    'status.nominatedNodeName': (o) => str(statusOf(o).nominatedNodeName) ?? '',
  },
  initialStatus: () => ({ phase: 'Pending' }),
  defaults(obj) {
    const spec = asObj(obj.spec);
    if (!spec) return;
    defaultPodSpec(spec);
    setDefault(spec, 'enableServiceLinks', true);
    defaultRequestsFromLimits(spec);
  },
  create: setQosClass,
  // LimitRanger may have given the containers resources: the class follows them, as upstream computes it after admission.
  admitted: setQosClass,
  validate: (obj, old) => [...validatePodSpec('spec', obj.spec), ...(old ? validatePodSpecUpdate(obj.spec, old.spec) : [])],
  validateStatus: (obj) => oneOf('status.phase', statusOf(obj).phase, POD_PHASES),
  tableColumns: podColumns,
};

const podtemplates: KindSpec = {
  defaults: (obj) => defaultTemplate(obj.template),
  validate: (obj) => validateTemplate('template', obj.template),
  tableColumns: [nameColumn,
    column('Containers', 'string', 'Names of each container in the template.', (o) => objects(pathOf(o, 'template.spec.containers')).map((c) => c.name).join(',')),
    column('Images', 'string', 'Images referenced by each container in the template.', (o) => objects(pathOf(o, 'template.spec.containers')).map((c) => c.image).join(',')),
    column('Pod Labels', 'string', 'The labels for the pod template.', (o) => mapSelectorText(pathOf(o, 'template.metadata.labels'))),
  ],
};

/** Replication controllers: selector defaults to the template labels, object labels too. */
function defaultReplicationController(obj: ApiObject): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  setDefault(spec, 'replicas', 1);
  const templateLabels = asObj(asObj(asObj(spec.template)?.metadata)?.labels);
  if (templateLabels && Object.keys(asObj(spec.selector) ?? {}).length === 0) spec.selector = { ...templateLabels };
  if (templateLabels && Object.keys(obj.metadata?.labels ?? {}).length === 0) obj.metadata = { ...obj.metadata, labels: { ...templateLabels } as Record<string, string> };
  defaultTemplate(spec.template);
}

function validateReplicationController(obj: ApiObject): Causes {
  const spec = specOf(obj);
  const selector = asObj(spec.selector) ?? {};
  const causes = [...nonNegative('spec.replicas', spec.replicas), ...labelMap('spec.selector', selector)];
  if (Object.keys(selector).length === 0) causes.push(required('spec.selector'));
  const labels = asObj(asObj(asObj(spec.template)?.metadata)?.labels) ?? {};
  if (Object.keys(selector).length && Object.entries(selector).some(([k, v]) => labels[k] !== v)) {
    causes.push(invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'));
  }
  if (spec.template !== undefined) causes.push(...validateServingTemplate('spec.template', spec.template, 'ReplicationController'));
  return causes;
}

const replicationcontrollers: KindSpec = {
  shortNames: ['rc'], categories: ['all'],
  selectableFields: { 'status.replicas': (o) => String(count(statusOf(o).replicas)) },
  defaults: defaultReplicationController,
  validate: validateReplicationController,
  tableColumns: [nameColumn,
    column('Desired', 'integer', 'Number of desired pods.', (o) => count(specOf(o).replicas)),
    column('Current', 'integer', 'Number of actually running pods.', (o) => count(statusOf(o).replicas)),
    column('Ready', 'integer', 'Number of ready pods.', (o) => count(statusOf(o).readyReplicas)),
    ageColumn, ...templateColumns('spec.selector', mapSelectorText)],
};

export const coreWorkloadKinds: Record<string, KindSpec> = { pods, podtemplates, replicationcontrollers };
