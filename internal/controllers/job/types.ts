// The parts of Jobs and Pods the Job controller reads and writes.
import type { ApiObject, ObjectMeta } from '../../apimachinery/meta.js';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string;
  lastTransitionTime?: string;
}

export interface ExitCodes { containerName?: string; operator: string; values: number[] }

export interface PodFailurePolicyRule {
  action: string;
  onExitCodes?: ExitCodes;
  onPodConditions?: { type: string; status?: string }[];
}

export interface SuccessPolicyRule {
  succeededIndexes?: string;
  succeededCount?: number;
}

export interface JobSpec {
  parallelism?: number;
  completions?: number;
  completionMode?: string;
  backoffLimit?: number;
  backoffLimitPerIndex?: number;
  maxFailedIndexes?: number;
  activeDeadlineSeconds?: number;
  suspend?: boolean;
  podFailurePolicy?: { rules?: PodFailurePolicyRule[] };
  successPolicy?: { rules?: SuccessPolicyRule[] };
  podReplacementPolicy?: string;
  managedBy?: string;
  template: { metadata?: ObjectMeta; spec?: Record<string, any> };
}

export interface JobStatus {
  startTime?: string;
  completionTime?: string;
  active?: number;
  succeeded?: number;
  failed?: number;
  ready?: number;
  terminating?: number;
  completedIndexes?: string;
  failedIndexes?: string;
  conditions?: Condition[];
  uncountedTerminatedPods?: { succeeded?: string[]; failed?: string[] };
}

export interface Job extends ApiObject {
  metadata: ObjectMeta;
  spec: JobSpec;
  status?: JobStatus;
}

export interface ContainerStatus {
  name: string;
  restartCount?: number;
  state?: { terminated?: { exitCode: number; finishedAt?: string } };
}

export interface PodStatus {
  phase?: string;
  conditions?: Condition[];
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
}

export interface Pod extends ApiObject {
  metadata: ObjectMeta;
  spec?: { nodeName?: string; initContainers?: { name: string; restartPolicy?: string }[] };
  status?: PodStatus;
}
