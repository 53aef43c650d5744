// A CustomResourceDefinition's status conditions, read and set as the platform
// does: a condition keeps its lastTransitionTime while its status stays.
import type { ApiObject } from '../apimachinery/meta.js';
import { nowTimestamp } from '../apimachinery/meta.js';
import { asObj, objects, type Obj } from '../registry/values.js';

export type ConditionType = 'NamesAccepted' | 'Established' | 'Terminating';

export interface CrdCondition {
  type: ConditionType;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

/** The names a CRD asks for (`spec.names`) or holds (`status.acceptedNames`). */
export interface CrdNames {
  plural: string;
  singular?: string;
  shortNames?: string[];
  kind: string;
  listKind?: string;
  categories?: string[];
}

/** A condition as a controller decides it (the transition time is set when it is written). */
export type Condition = Omit<CrdCondition, 'lastTransitionTime'>;

export const statusOf = (crd: ApiObject): Obj => asObj(crd.status) ?? {};

export const conditionsOf = (crd: ApiObject): CrdCondition[] => objects(statusOf(crd).conditions) as unknown as CrdCondition[];

export const findCondition = (crd: ApiObject, type: ConditionType): CrdCondition | undefined =>
  conditionsOf(crd).find((c) => c.type === type);

export const isConditionTrue = (crd: ApiObject, type: ConditionType): boolean => findCondition(crd, type)?.status === 'True';

/** Sets one condition in `crd.status` (added at the end when new); its transition time moves only when its status does. */
export function setCondition(crd: ApiObject, condition: Condition): void {
  const status = statusOf(crd);
  const conditions = conditionsOf(crd);
  const old = conditions.find((c) => c.type === condition.type);
  const lastTransitionTime = old && old.status === condition.status && old.lastTransitionTime ? old.lastTransitionTime : nowTimestamp();
  const next = { ...condition, lastTransitionTime };
  crd.status = { ...status, conditions: old ? conditions.map((c) => (c === old ? next : c)) : [...conditions, next] };
}

/** Whether two conditions say the same (the transition time aside). */
export const sameCondition = (a: Condition | undefined, b: CrdCondition | undefined): boolean =>
  a?.type === b?.type && a?.status === b?.status && a?.reason === b?.reason && a?.message === b?.message;

/** The condition a deleted CRD holds while its objects are removed. */
export const TERMINATING: Condition = {
  type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress',
};
