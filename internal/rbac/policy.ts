// The default RBAC policy: the platform's cluster roles and bindings, the roles
// of the controllers the controller-manager runs, and the roles in svc-system
// and svc-public, with upstream's rules in the platform's group names.
import type { ApiObject } from '../apimachinery/meta.js';
import {
  BOOTSTRAPPING_LABEL, CONTROLLER_MANAGER_NAME, BOOTSTRAPPING_RBAC_DEFAULTS, GROUP_AUTHENTICATED, GROUP_MASTERS, GROUP_RBAC, GROUP_MONITORING, GROUP_SERVICEACCOUNTS,
  GROUP_UNAUTHENTICATED, NAMESPACE_PUBLIC, NAMESPACE_SYSTEM, RBAC_AUTOUPDATE_ANNOTATION, USER_KUBE_CONTROLLER_MANAGER, USER_KUBE_PROXY,
  USER_KUBE_SCHEDULER, aggregateToLabel, group, signerName,
} from '../names/index.js';

import type { PolicyRule, RoleRef, Subject } from './types.js';

const CORE = '';
const AUTHN = group('authentication');
const AUTHZ = group('authorization');
const CERTS = group('certificates');
const COORDINATION = group('coordination');
const DISCOVERY = group('discovery');
const EVENTS = group('events');
const NETWORKING = group('networking');
const STORAGE = group('storage');

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const READ_WRITE = [...READ, ...WRITE];

/** A resource rule: verbs on resources of groups, optionally only the named objects. */
const rule = (verbs: string[], groups: string[], resources: string[], names?: string[]): PolicyRule =>
  ({ apiGroups: groups, resources, ...(names ? { resourceNames: names } : {}), verbs });
/** A rule on paths. */
const paths = (verbs: string[], urls: string[]): PolicyRule => ({ nonResourceURLs: urls, verbs });
const eventsRule = rule(['create', 'update', 'patch'], [CORE, EVENTS], ['events']);

export interface DefaultRole {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  rules: PolicyRule[];
  aggregateFrom?: 'admin' | 'edit' | 'view';
}

export interface DefaultBinding {
  name: string;
  namespace?: string;
  roleRef: RoleRef;
  subjects: Subject[];
}

const user = (name: string): Subject => ({ kind: 'User', apiGroup: GROUP_RBAC, name });
const groupSubject = (name: string): Subject => ({ kind: 'Group', apiGroup: GROUP_RBAC, name });
const serviceAccount = (name: string, namespace = NAMESPACE_SYSTEM): Subject => ({ kind: 'ServiceAccount', name, namespace });
const aggregatesTo = (role: 'admin' | 'edit' | 'view') => ({ [aggregateToLabel(role).own]: 'true' });

const certificateApprover = (signer: string): DefaultRole => ({
  name: `system:${CERTS}:${signer}-approver`, rules: [rule(['approve'], [CERTS], ['signers'], [signerName(signer)])],
});

const NODE_RULES: PolicyRule[] = [
  rule(['create'], [AUTHN], ['tokenreviews']),
  rule(['create'], [AUTHZ], ['subjectaccessreviews', 'localsubjectaccessreviews']),
  rule(READ, [CORE], ['services']),
  rule(['create', 'get', 'list', 'watch'], [CORE], ['nodes']),
  rule(['update', 'patch'], [CORE], ['nodes/status']),
  rule(['update', 'patch'], [CORE], ['nodes']),
  rule(['create', 'update', 'patch'], [CORE], ['events']),
  rule(READ, [CORE], ['pods']),
  rule(['create', 'delete'], [CORE], ['pods']),
  rule(['update', 'patch'], [CORE], ['pods/status']),
  rule(['create'], [CORE], ['pods/eviction']),
  rule(READ, [CORE], ['secrets', 'configmaps']),
  rule(['get'], [CORE], ['persistentvolumeclaims', 'persistentvolumes']),
  rule(['get'], [CORE], ['endpoints']),
  rule(['create', 'get', 'list', 'watch'], [CERTS], ['certificatesigningrequests']),
  rule(['get', 'create', 'update', 'patch', 'delete'], [COORDINATION], ['leases']),
  rule(['get'], [STORAGE], ['volumeattachments']),
  rule(['create'], [CORE], ['serviceaccounts/token']),
  rule(['get', 'update', 'patch'], [CORE], ['persistentvolumeclaims/status']),
  rule(READ, [STORAGE], ['csidrivers']),
  rule(['get', 'create', 'update', 'patch', 'delete'], [STORAGE], ['csinodes']),
  rule(READ, [group('node')], ['runtimeclasses']),
];

const CLUSTER_ROLES: DefaultRole[] = [
  { name: 'cluster-admin', rules: [rule(['*'], ['*'], ['*']), paths(['*'], ['*'])] },
  { name: 'system:discovery', rules: [paths(['get'], ['/livez', '/readyz', '/healthz', '/version', '/version/', '/openapi', '/openapi/*', '/api', '/api/*', '/apis', '/apis/*'])] },
  { name: 'system:monitoring', rules: [paths(['get'], ['/metrics', '/metrics/slis', '/livez', '/readyz', '/healthz', '/livez/*', '/readyz/*', '/healthz/*'])] },
  {
    name: 'system:basic-user', rules: [
      rule(['create'], [AUTHZ], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], [AUTHN], ['selfsubjectreviews']),
    ],
  },
  { name: 'system:public-info-viewer', rules: [paths(['get'], ['/livez', '/readyz', '/healthz', '/version', '/version/'])] },
  { name: 'admin', rules: [], aggregateFrom: 'admin' },
  { name: 'edit', labels: aggregatesTo('admin'), rules: [], aggregateFrom: 'edit' },
  { name: 'view', labels: aggregatesTo('edit'), rules: [], aggregateFrom: 'view' },
  {
    name: 'system:aggregate-to-admin', labels: aggregatesTo('admin'), rules: [
      rule(['create'], [AUTHZ], ['localsubjectaccessreviews']),
      rule(READ_WRITE, [GROUP_RBAC], ['roles', 'rolebindings']),
    ],
  },
  {
    // edit: every user-level write in a namespace, but no roles or bindings, quotas or status.
    name: 'system:aggregate-to-edit', labels: aggregatesTo('edit'), rules: [
      rule(READ, [CORE], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
      rule(['impersonate'], [CORE], ['serviceaccounts']),
      rule(WRITE, [CORE], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
      rule(['create'], [CORE], ['pods/eviction']),
      rule(WRITE, [CORE], ['replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/proxy',
        'persistentvolumeclaims', 'configmaps', 'secrets', 'events']),
      rule(['create'], [CORE], ['serviceaccounts/token']),
      rule(WRITE, ['apps'], ['statefulsets', 'statefulsets/scale', 'daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback',
        'replicasets', 'replicasets/scale']),
      rule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
      rule(WRITE, ['batch'], ['jobs', 'cronjobs']),
      rule(WRITE, ['extensions'], ['daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'ingresses', 'replicasets',
        'replicasets/scale', 'replicationcontrollers/scale', 'networkpolicies']),
      rule(WRITE, ['policy'], ['poddisruptionbudgets']),
      rule(WRITE, [NETWORKING], ['networkpolicies', 'ingresses']),
      rule(READ_WRITE, [COORDINATION], ['leases']),
    ],
  },
  {
    // view: reads of what is not an escalation path (no Secrets).
    name: 'system:aggregate-to-view', labels: aggregatesTo('view'), rules: [
      rule(READ, [CORE], ['pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status',
        'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps']),
      rule(READ, [CORE], ['limitranges', 'resourcequotas', 'bindings', 'events', 'pods/status', 'resourcequotas/status', 'namespaces/status',
        'replicationcontrollers/status', 'pods/log']),
      rule(READ, [CORE], ['namespaces']),
      rule(READ, [DISCOVERY], ['endpointslices']),
      rule(READ, ['apps'], ['controllerrevisions', 'statefulsets', 'statefulsets/status', 'statefulsets/scale', 'daemonsets', 'daemonsets/status',
        'deployments', 'deployments/status', 'deployments/scale', 'replicasets', 'replicasets/status', 'replicasets/scale']),
      rule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
      rule(READ, ['batch'], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
      rule(READ, ['extensions'], ['daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'ingresses',
        'ingresses/status', 'replicasets', 'replicasets/scale', 'replicasets/status', 'replicationcontrollers/scale', 'networkpolicies']),
      rule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      rule(READ, [NETWORKING], ['ingresses', 'ingresses/status', 'networkpolicies']),
    ],
  },
  { name: 'system:heapster', rules: [rule(READ, [CORE], ['events', 'pods', 'nodes', 'namespaces']), rule(READ, ['extensions'], ['deployments'])] },
  { name: 'system:node', rules: NODE_RULES },
  {
    name: 'system:node-problem-detector', rules: [
      rule(['get'], [CORE], ['nodes']), rule(['patch'], [CORE], ['nodes/status']), eventsRule,
    ],
  },
  {
    name: 'system:kubelet-api-admin', rules: [
      rule(READ, [CORE], ['nodes']), rule(['proxy'], [CORE], ['nodes']), rule(['*'], [CORE], ['nodes/proxy', 'nodes/metrics', 'nodes/stats', 'nodes/log']),
    ],
  },
  { name: 'system:node-bootstrapper', rules: [rule(['create', 'get', 'list', 'watch'], [CERTS], ['certificatesigningrequests'])] },
  { name: 'system:auth-delegator', rules: [rule(['create'], [AUTHN], ['tokenreviews']), rule(['create'], [AUTHZ], ['subjectaccessreviews'])] },
  { name: 'system:kube-aggregator', rules: [rule(READ, [CORE], ['services', 'endpoints'])] },
  {
    name: 'system:kube-controller-manager', rules: [
      eventsRule,
      rule(['create'], [COORDINATION], ['leases']),
      rule(['get', 'update'], [COORDINATION], ['leases'], [CONTROLLER_MANAGER_NAME]),
      rule(['create'], [CORE], ['secrets', 'serviceaccounts']),
      rule(['delete'], [CORE], ['secrets']),
      rule(['get'], [CORE], ['namespaces', 'secrets', 'serviceaccounts', 'configmaps']),
      rule(['update'], [CORE], ['secrets', 'serviceaccounts']),
      rule(['create'], [AUTHN], ['tokenreviews']),
      rule(['create'], [AUTHZ], ['subjectaccessreviews']),
      rule(['list', 'watch'], ['*'], ['*']),
      rule(['create'], [CORE], ['serviceaccounts/token']),
    ],
  },
  { name: 'system:kube-dns', rules: [rule(['list', 'watch'], [CORE], ['endpoints', 'services'])] },
  {
    name: 'system:kube-scheduler', rules: [
      eventsRule,
      rule(['create'], [COORDINATION], ['leases']),
      rule(['get', 'update'], [COORDINATION], ['leases'], ['kube-scheduler']),
      rule(READ, [CORE], ['nodes']),
      rule(['get', 'list', 'watch', 'delete'], [CORE], ['pods']),
      rule(['create'], [CORE], ['pods/binding', 'bindings']),
      rule(['patch', 'update'], [CORE], ['pods/status']),
      rule(READ, [CORE], ['replicationcontrollers', 'services']),
      rule(READ, ['apps', 'extensions'], ['replicasets']),
      rule(READ, ['apps'], ['statefulsets']),
      rule(READ, ['policy'], ['poddisruptionbudgets']),
      rule(READ, [CORE], ['persistentvolumeclaims', 'persistentvolumes']),
      rule(['create'], [AUTHN], ['tokenreviews']),
      rule(['create'], [AUTHZ], ['subjectaccessreviews']),
      rule(READ, [STORAGE], ['csinodes']),
      rule(READ, [CORE], ['namespaces']),
      rule(READ, [STORAGE], ['csidrivers']),
      rule(READ, [STORAGE], ['csistoragecapacities']),
    ],
  },
  {
    name: 'system:volume-scheduler', rules: [
      rule(['get', 'list', 'watch', 'update', 'patch'], [CORE], ['persistentvolumes']),
      rule(READ, [STORAGE], ['storageclasses']),
      rule(['get', 'list', 'watch', 'update', 'patch'], [CORE], ['persistentvolumeclaims']),
    ],
  },
  {
    name: 'system:node-proxier', rules: [
      rule(['list', 'watch'], [CORE], ['services', 'endpoints']), rule(READ, [CORE], ['nodes']), eventsRule,
      rule(['list', 'watch'], [DISCOVERY], ['endpointslices']),
    ],
  },
  {
    name: 'system:persistent-volume-provisioner', rules: [
      rule(['create', 'delete', 'get', 'list', 'watch'], [CORE], ['persistentvolumes']),
      rule(['get', 'list', 'watch', 'update'], [CORE], ['persistentvolumeclaims']),
      rule(READ, [STORAGE], ['storageclasses']),
      rule(['watch'], [CORE], ['events']),
      eventsRule,
    ],
  },
  { name: `system:${CERTS}:certificatesigningrequests:nodeclient`, rules: [rule(['create'], [CERTS], ['certificatesigningrequests/nodeclient'])] },
  { name: `system:${CERTS}:certificatesigningrequests:selfnodeclient`, rules: [rule(['create'], [CERTS], ['certificatesigningrequests/selfnodeclient'])] },
  certificateApprover('kube-apiserver-client'),
  certificateApprover('kube-apiserver-client-kubelet'),
  certificateApprover('kubelet-serving'),
  certificateApprover('legacy-unknown'),
  { name: 'system:service-account-issuer-discovery', rules: [paths(['get'], ['/.well-known/openid-configuration', '/openid/v1/jwks'])] },
];

const clusterBinding = (role: string, subjects: Subject[], name = role): DefaultBinding =>
  ({ name, roleRef: { apiGroup: GROUP_RBAC, kind: 'ClusterRole', name: role }, subjects });

const CLUSTER_ROLE_BINDINGS: DefaultBinding[] = [
  clusterBinding('cluster-admin', [groupSubject(GROUP_MASTERS)]),
  clusterBinding('system:monitoring', [groupSubject(GROUP_MONITORING)]),
  clusterBinding('system:discovery', [groupSubject(GROUP_AUTHENTICATED)]),
  clusterBinding('system:basic-user', [groupSubject(GROUP_AUTHENTICATED)]),
  clusterBinding('system:public-info-viewer', [groupSubject(GROUP_AUTHENTICATED), groupSubject(GROUP_UNAUTHENTICATED)]),
  clusterBinding('system:node-proxier', [user(USER_KUBE_PROXY)]),
  clusterBinding('system:kube-controller-manager', [user(USER_KUBE_CONTROLLER_MANAGER)]),
  clusterBinding('system:kube-dns', [serviceAccount('kube-dns')]),
  clusterBinding('system:kube-scheduler', [user(USER_KUBE_SCHEDULER)]),
  clusterBinding('system:volume-scheduler', [user(USER_KUBE_SCHEDULER)]),
  // The node role is left without subjects: the Node authorizer grants nodes their access.
  clusterBinding('system:node', []),
  clusterBinding('system:service-account-issuer-discovery', [groupSubject(GROUP_SERVICEACCOUNTS)]),
];

/** The controllers the controller-manager runs, with their roles (`system:controller:<name>`). */
const CONTROLLER_ROLES: Record<string, PolicyRule[]> = {
  'clusterrole-aggregation-controller': [rule(['escalate', 'get', 'list', 'watch', 'update', 'patch'], [GROUP_RBAC], ['clusterroles'])],
  // Names and establishes CRDs, and deletes a deleted CRD's custom objects before dropping its finalizer.
  'crd-controller': [
    rule(['get', 'list', 'watch', 'update', 'patch'], [group('apiextensions')], ['customresourcedefinitions']),
    rule(['update'], [group('apiextensions')], ['customresourcedefinitions/status']),
    rule(['list', 'delete', 'deletecollection'], ['*'], ['*']),
  ],
  'generic-garbage-collector': [rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*']), eventsRule],
  'job-controller': [
    rule(['get', 'list', 'watch', 'update', 'patch'], ['batch'], ['jobs']),
    rule(['update'], ['batch'], ['jobs/status']),
    rule(['update'], ['batch'], ['jobs/finalizers']),
    rule(['list', 'watch', 'create', 'delete', 'patch'], [CORE], ['pods']),
    eventsRule,
  ],
  'namespace-controller': [
    rule(['get', 'list', 'watch', 'delete'], [CORE], ['namespaces']),
    rule(['update'], [CORE], ['namespaces/finalize', 'namespaces/status']),
    rule(['get', 'list', 'watch', 'delete', 'deletecollection'], ['*'], ['*']),
  ],
  // Drop the protection finalizer of a claim no pod uses and of a volume no claim is bound to.
  'pv-protection-controller': [rule(['get', 'list', 'watch', 'update'], [CORE], ['persistentvolumes']), eventsRule],
  'pvc-protection-controller': [
    rule(['get', 'list', 'watch', 'update'], [CORE], ['persistentvolumeclaims']),
    rule(['update'], [CORE], ['persistentvolumeclaims/status']),
    rule(['get', 'list', 'watch'], [CORE], ['pods']),
    eventsRule,
  ],
  // Recomputes quota usage from lists of whatever quotas count.
  'resourcequota-controller': [rule(['list', 'watch'], ['*'], ['*']), rule(['update'], [CORE], ['resourcequotas/status']), eventsRule],
  'root-ca-cert-publisher': [rule(['create', 'update'], [CORE], ['configmaps']), eventsRule],
  'service-account-controller': [rule(['create'], [CORE], ['serviceaccounts']), eventsRule],
  'ttl-after-finished-controller': [rule(['get', 'list', 'watch', 'delete'], ['batch'], ['jobs']), eventsRule],
  // Writes the type checking of each policy generation.
  'validatingadmissionpolicy-status-controller': [
    rule(READ, [group('admissionregistration')], ['validatingadmissionpolicies']),
    rule(['get', 'patch', 'update'], [group('admissionregistration')], ['validatingadmissionpolicies/status']),
    eventsRule,
  ],
};

export const controllerRoleName = (controller: string): string => `system:controller:${controller}`;

/** Each controller's role is bound to its upstream service account and to the controller-manager's own identity,
 * which runs every controller. */
const CONTROLLER_BINDINGS: DefaultBinding[] = Object.keys(CONTROLLER_ROLES).map((c) =>
  clusterBinding(controllerRoleName(c), [serviceAccount(c), user(USER_KUBE_CONTROLLER_MANAGER)]));

const NAMESPACE_ROLES: DefaultRole[] = [
  { name: 'extension-apiserver-authentication-reader', namespace: NAMESPACE_SYSTEM, rules: [rule(READ, [CORE], ['configmaps'], ['extension-apiserver-authentication'])] },
  {
    name: 'system::leader-locking-kube-controller-manager', namespace: NAMESPACE_SYSTEM, rules: [
      rule(['watch', 'create', 'get', 'list', 'update'], [COORDINATION], ['leases']),
      rule(['watch', 'create', 'get', 'list', 'update'], [COORDINATION], ['leasecandidates']),
    ],
  },
  {
    name: 'system::leader-locking-kube-scheduler', namespace: NAMESPACE_SYSTEM, rules: [
      rule(['watch', 'create', 'get', 'list', 'update'], [COORDINATION], ['leases']),
      rule(['watch', 'create', 'get', 'list', 'update'], [COORDINATION], ['leasecandidates']),
    ],
  },
  { name: controllerRoleName('bootstrap-signer'), namespace: NAMESPACE_SYSTEM, rules: [rule(READ, [CORE], ['secrets'])] },
  { name: controllerRoleName('cloud-provider'), namespace: NAMESPACE_SYSTEM, rules: [rule(['create', 'get', 'list', 'watch'], [CORE], ['configmaps'])] },
  { name: controllerRoleName('token-cleaner'), namespace: NAMESPACE_SYSTEM, rules: [rule(['delete', 'get', 'list', 'watch'], [CORE], ['secrets']), eventsRule] },
  {
    name: controllerRoleName('bootstrap-signer'), namespace: NAMESPACE_PUBLIC, rules: [
      rule(READ, [CORE], ['configmaps']), rule(['update'], [CORE], ['configmaps'], ['cluster-info']), eventsRule,
    ],
  },
];

const roleBinding = (namespace: string, name: string, role: string, subjects: Subject[]): DefaultBinding =>
  ({ name, namespace, roleRef: { apiGroup: GROUP_RBAC, kind: 'Role', name: role }, subjects });

const NAMESPACE_ROLE_BINDINGS: DefaultBinding[] = [
  roleBinding(NAMESPACE_SYSTEM, 'system::extension-apiserver-authentication-reader', 'extension-apiserver-authentication-reader',
    [user(USER_KUBE_CONTROLLER_MANAGER), user(USER_KUBE_SCHEDULER)]),
  roleBinding(NAMESPACE_SYSTEM, 'system::leader-locking-kube-controller-manager', 'system::leader-locking-kube-controller-manager',
    [user(USER_KUBE_CONTROLLER_MANAGER), serviceAccount('kube-controller-manager'), serviceAccount('leader-election-controller')]),
  roleBinding(NAMESPACE_SYSTEM, 'system::leader-locking-kube-scheduler', 'system::leader-locking-kube-scheduler',
    [user(USER_KUBE_SCHEDULER), serviceAccount('kube-scheduler')]),
  roleBinding(NAMESPACE_SYSTEM, controllerRoleName('bootstrap-signer'), controllerRoleName('bootstrap-signer'),
    [serviceAccount('bootstrap-signer'), user(USER_KUBE_CONTROLLER_MANAGER)]),
  roleBinding(NAMESPACE_SYSTEM, controllerRoleName('cloud-provider'), controllerRoleName('cloud-provider'), [serviceAccount('cloud-provider')]),
  roleBinding(NAMESPACE_SYSTEM, controllerRoleName('token-cleaner'), controllerRoleName('token-cleaner'),
    [serviceAccount('token-cleaner'), user(USER_KUBE_CONTROLLER_MANAGER)]),
  roleBinding(NAMESPACE_PUBLIC, controllerRoleName('bootstrap-signer'), controllerRoleName('bootstrap-signer'),
    [serviceAccount('bootstrap-signer'), user(USER_KUBE_CONTROLLER_MANAGER)]),
];

const DEFAULT_METADATA = () => ({
  labels: { [BOOTSTRAPPING_LABEL.own]: BOOTSTRAPPING_RBAC_DEFAULTS },
  annotations: { [RBAC_AUTOUPDATE_ANNOTATION.own]: 'true' },
});

function roleObject(kind: 'Role' | 'ClusterRole', r: DefaultRole): ApiObject {
  const meta = DEFAULT_METADATA();
  const obj: ApiObject & Record<string, unknown> = {
    apiVersion: `${GROUP_RBAC}/v1`, kind,
    metadata: { name: r.name, ...(r.namespace ? { namespace: r.namespace } : {}), labels: { ...r.labels, ...meta.labels }, annotations: meta.annotations },
    rules: structuredClone(r.rules),
  };
  if (r.aggregateFrom) obj.aggregationRule = { clusterRoleSelectors: [{ matchLabels: aggregatesTo(r.aggregateFrom) }] };
  return obj;
}

function bindingObject(kind: 'RoleBinding' | 'ClusterRoleBinding', b: DefaultBinding): ApiObject {
  return {
    apiVersion: `${GROUP_RBAC}/v1`, kind,
    metadata: { name: b.name, ...(b.namespace ? { namespace: b.namespace } : {}), ...DEFAULT_METADATA() },
    roleRef: b.roleRef, subjects: structuredClone(b.subjects),
  } as ApiObject;
}

/** The default policy as API objects, by resource. */
export function defaultPolicy(): Record<'clusterroles' | 'clusterrolebindings' | 'roles' | 'rolebindings', ApiObject[]> {
  const controllerRoles = Object.entries(CONTROLLER_ROLES).map(([c, rules]) => ({ name: controllerRoleName(c), rules }));
  return {
    clusterroles: [...CLUSTER_ROLES, ...controllerRoles].map((r) => roleObject('ClusterRole', r)),
    clusterrolebindings: [...CLUSTER_ROLE_BINDINGS, ...CONTROLLER_BINDINGS].map((b) => bindingObject('ClusterRoleBinding', b)),
    roles: NAMESPACE_ROLES.map((r) => roleObject('Role', r)),
    rolebindings: NAMESPACE_ROLE_BINDINGS.map((b) => bindingObject('RoleBinding', b)),
  };
}

/** The controllers that have a default role, by name. */
export const CONTROLLERS_WITH_ROLES = Object.keys(CONTROLLER_ROLES);
