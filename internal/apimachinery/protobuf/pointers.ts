// Optional scalar fields that are Go pointers, and whose zero means something
// other than their absence: a default applies when they are absent (replicas,
// terminationGracePeriodSeconds, attachRequired), or absence has its own meaning
// (runAsUser unset is the image's user, 0 is root; storageClassName unset is the
// default class, "" is none). The wire carries a zero either way, and the shared
// field table does not say which fields are pointers, so these are listed here:
// decoding keeps their zero values, as the JSON form of the platform does.

/** Field names by `<api group package> <message>`, for every version of the message that has them. */
export const ZERO_MEANINGFUL_POINTERS: Readonly<Record<string, readonly string[]>> = {
  'apps DeploymentSpec': ['replicas', 'revisionHistoryLimit', 'progressDeadlineSeconds'],
  'apps StatefulSetSpec': ['replicas', 'revisionHistoryLimit'],
  'apps ReplicaSetSpec': ['replicas'],
  'apps DaemonSetSpec': ['revisionHistoryLimit'],
  'apps RollingUpdateDeployment': ['maxUnavailable', 'maxSurge'],
  'apps RollingUpdateDaemonSet': ['maxUnavailable', 'maxSurge'],
  'apps RollingUpdateStatefulSetStrategy': ['partition', 'maxUnavailable'],
  'batch JobSpec': ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'backoffLimitPerIndex', 'maxFailedIndexes',
    'ttlSecondsAfterFinished', 'suspend', 'manualSelector'],
  'batch JobStatus': ['ready', 'terminating'],
  'batch CronJobSpec': ['startingDeadlineSeconds', 'suspend', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit'],
  'core PodSpec': ['terminationGracePeriodSeconds', 'activeDeadlineSeconds', 'automountServiceAccountToken', 'shareProcessNamespace', 'priority',
    'enableServiceLinks', 'hostUsers', 'setHostnameAsFQDN'],
  'core PodSecurityContext': ['runAsUser', 'runAsGroup', 'runAsNonRoot', 'fsGroup'],
  'core SecurityContext': ['privileged', 'runAsUser', 'runAsGroup', 'runAsNonRoot', 'readOnlyRootFilesystem', 'allowPrivilegeEscalation'],
  'core ServiceSpec': ['allocateLoadBalancerNodePorts'],
  'core ServiceAccount': ['automountServiceAccountToken'],
  'core ReplicationControllerSpec': ['replicas'],
  'core Toleration': ['tolerationSeconds'],
  'core SecretVolumeSource': ['defaultMode', 'optional'],
  'core ConfigMapVolumeSource': ['defaultMode', 'optional'],
  'core ProjectedVolumeSource': ['defaultMode'],
  'core DownwardAPIVolumeSource': ['defaultMode'],
  'core KeyToPath': ['mode'],
  'core DownwardAPIVolumeFile': ['mode'],
  'core TopologySpreadConstraint': ['minDomains'],
  'core ServiceAccountTokenProjection': ['expirationSeconds'],
  'core ConfigMapKeySelector': ['optional'],
  'core SecretKeySelector': ['optional'],
  'core ConfigMapEnvSource': ['optional'],
  'core SecretEnvSource': ['optional'],
  'core Probe': ['terminationGracePeriodSeconds'],
  'core PersistentVolumeClaimSpec': ['storageClassName'],
  'autoscaling HorizontalPodAutoscalerSpec': ['minReplicas', 'targetCPUUtilizationPercentage'],
  'autoscaling HPAScalingRules': ['stabilizationWindowSeconds'],
  'policy PodDisruptionBudgetSpec': ['minAvailable', 'maxUnavailable'],
  'networking NetworkPolicyPort': ['port', 'endPort'],
  'networking IngressSpec': ['ingressClassName'],
  'storage CSIDriverSpec': ['attachRequired', 'podInfoOnMount', 'requiresRepublish', 'seLinuxMount', 'storageCapacity', 'nodeAllocatableUpdatePeriodSeconds'],
  'storage StorageClass': ['allowVolumeExpansion'],
  'admissionregistration ValidatingWebhook': ['timeoutSeconds'],
  'admissionregistration MutatingWebhook': ['timeoutSeconds'],
  'coordination LeaseSpec': ['leaseDurationSeconds', 'leaseTransitions'],
  'authentication TokenRequestSpec': ['expirationSeconds'],
  'discovery EndpointConditions': ['ready', 'serving', 'terminating'],
  'discovery EndpointPort': ['port'],
  'flowcontrol LimitedPriorityLevelConfiguration': ['nominalConcurrencyShares', 'lendablePercent', 'borrowingLimitPercent'],
};

/** `<domain>.api.apps.v1.DeploymentSpec` → `apps DeploymentSpec`. */
export function pointerKey(messageName: string): string {
  const parts = messageName.split('.');
  return `${parts[parts.length - 3]} ${parts[parts.length - 1]}`;
}

/** Whether decoding keeps a zero value of this field. */
export const zeroIsMeaningful = (messageName: string, field: string): boolean =>
  ZERO_MEANINGFUL_POINTERS[pointerKey(messageName)]?.includes(field) ?? false;
